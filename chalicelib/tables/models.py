"""Lookup, range and constraint tables as stored: instances, their versions, the columns of a version.

A table is declared by the configuration under a static name (`tables`, `rangeTables`,
`constraintTables`); the data comes as instances (resources) named on their own, each implementing
one static name for some jurisdictions (none: every jurisdiction). Every upload of an instance is a
version with the columns it was checked against and the time from which it is in force.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from chalicelib.configuration.models import BootstrapResourceType

DATA_TYPES = ("string", "int", "long", "decimal", "date", "datetime", "boolean", "guid")
NUMERIC_TYPES = frozenset({"int", "long", "decimal"})
DEFAULT_SELECTION_TIME_BASIS = "termStartTime"
RESOURCE_NAME = re.compile(r"_?[a-zA-Z$][a-zA-Z\d_$]{0,127}")
"""An instance name, as the OpenAPI definition restricts it (which also caps it at 128 characters)."""


class TableKind(StrEnum):
    """The resourceType of each kind (BasicResourceResponse), also the entity of its error codes."""

    LOOKUP = "table"
    RANGE = "rangeTable"
    CONSTRAINT = "constraintTable"

    @property
    def collection(self) -> str:
        """The ConfigurationRef collection that declares tables of this kind."""
        return {"table": "tables", "rangeTable": "rangeTables", "constraintTable": "constraintTables"}[self.value]


class Column(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    dataType: str
    isKey: bool = False
    makeDistinct: bool = False


class TableSchema(BaseModel):
    """The columns a version was checked against, in the configuration's order. For a range table
    `rangeStart`/`rangeEnd` name the columns holding the bounds; they are never key columns."""

    model_config = ConfigDict(frozen=True)

    kind: TableKind
    columns: tuple[Column, ...]
    selectionTimeBasis: str = DEFAULT_SELECTION_TIME_BASIS
    rangeStart: str | None = None
    rangeEnd: str | None = None

    @classmethod
    def of_definition(cls, kind: TableKind, definition: dict[str, Any]) -> TableSchema:
        """From a TableRef, RangeTableRef or ConstraintTableRef of the normal-form model. Range
        bound columns that the definition does not list are decimal columns."""
        columns = [
            Column(
                name=name,
                dataType=str(spec.get("dataType", "string")),
                isKey=bool(spec.get("isKey")),
                makeDistinct=bool(spec.get("makeDistinct")),
            )
            for name, spec in (definition.get("columns") or {}).items()
            if isinstance(spec, dict)
        ]
        range_start = range_end = None
        if kind is TableKind.RANGE:
            range_start, range_end = definition.get("rangeStart"), definition.get("rangeEnd") or None
            bounds = [bound for bound in (range_start, range_end) if bound]
            columns = [c.model_copy(update={"isKey": False}) if c.name in bounds else c for c in columns]
            listed = {c.name for c in columns}
            columns += [Column(name=bound, dataType="decimal") for bound in bounds if bound not in listed]
        return cls(
            kind=kind,
            columns=tuple(columns),
            selectionTimeBasis=definition.get("selectionTimeBasis") or DEFAULT_SELECTION_TIME_BASIS,
            rangeStart=range_start,
            rangeEnd=range_end,
        )

    @property
    def key_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.isKey and self.kind is not TableKind.CONSTRAINT)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def digest(self) -> str:
        """Names the schema inside the records that share it among versions."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]


class VersionEntry(BaseModel):
    """One uploaded version of an instance. `shards`: how many partitions its rows are spread over."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    effectiveFrom: datetime
    createdAt: datetime
    createdBy: str
    jurisdictions: tuple[str, ...] = ()
    schemaDigest: str
    shards: int = 1
    rows: int = 0


class Selection(BaseModel):
    """Versions to choose from, with their schemas: every version of a static name (the selection
    record) or of one instance. `revision` guards concurrent uploads."""

    model_config = ConfigDict(frozen=True)

    entries: tuple[VersionEntry, ...] = ()
    schemas: dict[str, TableSchema] = {}
    revision: int = 0

    def with_entry(self, entry: VersionEntry, schema: TableSchema) -> Selection:
        return Selection(
            entries=(*self.entries, entry), schemas={**self.schemas, entry.schemaDigest: schema}, revision=self.revision
        )


def latest(entries: Sequence[VersionEntry]) -> VersionEntry:
    """The version uploaded last: the latest createdAt, and of two alike the one listed later."""
    return max(enumerate(entries), key=lambda pair: (pair[1].createdAt, pair[0]))[1]


class TableInstance(BaseModel):
    """A resource instance: `name` is its own (unique per kind), `staticName` the table it implements."""

    model_config = ConfigDict(frozen=True)

    kind: TableKind
    name: str
    staticName: str
    jurisdictions: tuple[str, ...] = ()
    createdAt: datetime
    createdBy: str
    selection: Selection

    @property
    def latest(self) -> VersionEntry:
        """The version uploaded last (what a download answers)."""
        return latest(self.selection.entries)


class TableResource(BaseModel):
    """An upload as BasicResourceResponse reports it: the instance and the version just stored."""

    kind: TableKind
    name: str
    staticName: str
    version: str
    jurisdictions: tuple[str, ...]
    createdAt: datetime
    createdBy: str


class BootstrapStatus(BaseModel):
    """How loading one bootstrap resource of the tenant's package went (OpenAPI BootstrapResource)."""

    name: str
    resourceType: BootstrapResourceType
    status: Literal["queued", "created", "failed"]
    updatedAt: datetime
    error: str | None = None


@dataclass(frozen=True)
class SelectionTimes:
    """The moments a caller knows, for tables selected by `selectionTimeBasis` (service.lookup)."""

    policyStartTime: datetime | None = None
    termStartTime: datetime | None = None
    transactionEffectiveTime: datetime | None = None


@dataclass(frozen=True)
class ParsedRow:
    """A CSV data row: `number` is its spreadsheet row (the header is row 1), values by column."""

    number: int
    values: dict[str, Any]
