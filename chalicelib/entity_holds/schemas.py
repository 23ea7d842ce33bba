"""The entity holds API contract (OpenAPI definition: CreateEntityHoldRequest, EntityHold)."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import Field

from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core.messages import Input
from chalicelib.entity_holds.models import EntityHold, EntityHoldState, PolicyHoldScope, QuoteHoldScope
from chalicelib.priceable.schemas import WithNulls


class CreateEntityHoldRequest(Input):
    referenceType: Literal["quote", "policy"]
    referenceLocator: str = Field(min_length=1, max_length=64)
    description: str | None = Field(default=None, max_length=2000)
    quoteHoldScope: QuoteHoldScope | None = None
    policyHoldScope: PolicyHoldScope | None = None
    holdStaticData: bool = False


class UpdateEntityHoldRequest(Input):
    """Every field required (the definition's): the scope of the other kind is null, and a policy's may be
    null too (the whole policy held); the reference moves only with `referenceUpdate` (else it is the
    hold's own)."""

    referenceType: Literal["quote", "policy"]
    referenceLocator: str = Field(min_length=1, max_length=64)
    description: str = Field(max_length=2000)
    holdStaticData: bool
    quoteHoldScope: QuoteHoldScope | None
    policyHoldScope: PolicyHoldScope | None
    referenceUpdate: bool


class EntityHoldResponse(WithNulls):
    NULLS: ClassVar[tuple[str, ...]] = ("quoteHoldScope", "policyHoldScope")  # required: null where not its kind

    locator: str
    referenceLocator: str
    referenceType: Literal["quote", "policy"]
    state: EntityHoldState
    holdStaticData: bool
    description: str
    quoteHoldScope: QuoteHoldScope | None
    policyHoldScope: PolicyHoldScope | None
    validationResult: ValidationResult | None = None
    createdAt: datetime
    createdBy: str

    @classmethod
    def of(cls, record: EntityHold) -> EntityHoldResponse:
        return cls.model_validate(record.model_dump(include=set(cls.model_fields)))
