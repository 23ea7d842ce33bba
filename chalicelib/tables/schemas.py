"""The tables API contract (spec part 1, "Tables"; OpenAPI createLookupTable, fetchTableRecord, ...)."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BaseModel, StringConstraints, field_validator

from chalicelib.core.messages import Response
from chalicelib.http.contract import Upload
from chalicelib.tables.models import RESOURCE_NAME, TableKind, TableResource

ResourceName = Annotated[str, StringConstraints(pattern=f"^{RESOURCE_NAME.pattern}$", max_length=128)]


class TableFile(Upload):
    """A table's ZIP: the raw body, its `file` part of a multipart body, or an upload (`?uploadLocator=`)."""

    purpose = "table"


class CreateTableQuery(BaseModel):
    name: ResourceName
    staticName: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    jurisdiction: list[Annotated[str, StringConstraints(min_length=1, max_length=128)]] = []


class RecordQuery(BaseModel):
    """`date` without an offset is UTC; `byStaticName` defaults to true (the OpenAPI default)."""

    date: datetime | None = None
    jurisdiction: str | None = None
    byStaticName: bool = True
    key: list[str] = []

    @field_validator("date")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return value.replace(tzinfo=timezone.utc) if value is not None and value.tzinfo is None else value


class RangeRecordQuery(RecordQuery):
    boundValue: Decimal


class BasicResourceResponse(Response):
    """The instance and the version an upload stored; the `<kind>Locator` names the version."""

    name: str
    staticName: str
    resourceType: TableKind
    lookupTableLocator: str | None = None
    rangeTableLocator: str | None = None
    constraintTableLocator: str | None = None
    createdBy: str
    createdAt: datetime
    jurisdictions: list[str]

    @classmethod
    def of(cls, resource: TableResource) -> BasicResourceResponse:
        locator = {
            TableKind.LOOKUP: "lookupTableLocator",
            TableKind.RANGE: "rangeTableLocator",
            TableKind.CONSTRAINT: "constraintTableLocator",
        }[resource.kind]
        return cls.model_validate(
            {
                "name": resource.name,
                "staticName": resource.staticName,
                "resourceType": resource.kind,
                locator: resource.version,
                "createdBy": resource.createdBy,
                "createdAt": resource.createdAt,
                "jurisdictions": list(resource.jurisdictions),
            }
        )


class TableLookupResponse(Response):
    value: dict[str, Any]
