"""Request and response shapes every priceable thing shares; responses (OpenAPI definition: ElementResponse,
PolicyChargeResponse, UnderwritingFlagResponse): converted from the engine's records.

- an element's `parentLocator` is required: the root's is its owner's locator;
- a flag's `clearedBy`, `clearedTime` and `taskCreationResponse` are required but have no value
  until it is cleared (no tasks are created): they are present as null;
- price responses require `endTime` and `duration`, which a record failing validation for lack of an
  end does not have: the start and 0 stand in.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, RootModel, model_serializer

from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListResponse
from chalicelib.priceable.models import (
    Charge,
    ChargeCategory,
    ChargeHandling,
    ChargeInvoicing,
    DurationBasis,
    Element,
    ElementCategory,
    ElementInput,
    Flag,
    FlagInput,
    FlagLevel,
    Priceable,
    PriceableRecord,
    SegmentType,
    StaticDataVersion,
    Ulid,
)

# --- requests every priceable thing takes ---------------------------------------------------------


class ElementCreateRequests(RootModel[list[ElementInput]]):
    pass


class ElementLocators(RootModel[list[Ulid]]):
    pass


class UnderwritingFlagsUpdateRequest(Input):
    addFlags: list[FlagInput] = []
    clearFlags: list[Ulid] = []


class StatelessQuery(BaseModel):
    stateless: bool = False


class ConstraintValuesRequest(RootModel[dict[str, dict[str, dict[str, Any]]]]):
    """Element locator -> groups of field values (e.g. {"data": {...}}), merged."""


# --- responses -------------------------------------------------------------------------------------


class WithNulls(BaseModel):
    """A response whose required-but-empty fields are sent as null (the renderer drops other Nones)."""

    NULLS: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _keep_nulls(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in self.NULLS:
            data.setdefault(name, None)
        return data


class ElementResponse(Response):
    type: str
    locator: str
    parentLocator: str
    staticLocator: str
    originalEffectiveTime: datetime
    category: ElementCategory
    data: dict[str, Any]
    coverageTerms: dict[str, Any]
    elements: list[ElementResponse]

    @classmethod
    def of(cls, element: Element, owner: str, effective: datetime) -> ElementResponse:
        """`owner`: the root's parent; `effective`: the time of elements that keep none of their own."""
        return cls(
            type=element.type,
            locator=element.locator,
            parentLocator=element.parentLocator or owner,
            staticLocator=element.staticLocator,
            originalEffectiveTime=element.originalEffectiveTime or effective,
            category=element.category,
            data=element.data,
            coverageTerms=element.coverageTerms,
            elements=[cls.of(child, owner, effective) for child in element.elements],
        )


class SegmentResponse(Response):
    """A policy segment (issued, or the one a transaction is making): its tree as ElementResponse, the
    root's parent being the segment."""

    locator: str
    transactionLocator: str
    segmentType: SegmentType
    startTime: datetime
    endTime: datetime
    duration: Decimal
    element: ElementResponse
    basedOn: str | None = None
    producerInfo: dict[str, Any] | None = None
    anonymizedAt: datetime | None = None

    @classmethod
    def of(cls, segment: Any) -> SegmentResponse:
        """`segment`: a policies.models.Segment (priceable sits below policies)."""
        fields = segment.model_dump(include=set(cls.model_fields) - {"element"})
        return cls(**fields, element=ElementResponse.of(segment.element, segment.locator, segment.startTime))


class PolicyChargeResponse(Response):
    locator: str
    elementLocator: str
    elementStaticLocator: str
    chargeType: str
    chargeCategory: ChargeCategory
    amount: Decimal
    rate: Decimal
    referenceRate: Decimal
    tag: str | None = None
    handling: ChargeHandling
    invoicing: ChargeInvoicing
    reversalOfLocator: str | None = None
    rateDifference: Decimal | None = None

    @classmethod
    def of(cls, charge: Charge) -> PolicyChargeResponse:
        return cls(**charge.model_dump())


class TaskCreationResponse(Response):
    """The task a flag created (none is: flags create no tasks here)."""

    taskLocator: str
    status: Literal["succeeded", "failed"]


class UnderwritingFlagResponse(WithNulls):
    NULLS: ClassVar[tuple[str, ...]] = ("clearedBy", "clearedTime", "taskCreationResponse")

    locator: str
    level: FlagLevel
    referenceType: Literal["quote", "transaction"] = "quote"
    referenceLocator: str
    note: str
    tag: str
    elementLocator: str | None = None
    createdBy: str
    createdTime: datetime
    clearedBy: str | None = None
    clearedTime: datetime | None = None
    taskCreationResponse: TaskCreationResponse | None = None

    @classmethod
    def of(
        cls, owner_locator: str, flag: Flag, reference_type: Literal["quote", "transaction"] = "quote"
    ) -> UnderwritingFlagResponse:
        return cls(**flag.model_dump(exclude={"source"}), referenceLocator=owner_locator, referenceType=reference_type)


class StaticDataHistoryResponse(Response):
    """One version of a quote's or a policy's static data."""

    historyLocator: str
    staticData: dict[str, Any]
    updatedBy: str
    updatedAt: datetime

    @classmethod
    def of(cls, version: StaticDataVersion) -> StaticDataHistoryResponse:
        return cls(**version.model_dump())


class StaticDataHistoryListResponse(ListResponse[StaticDataHistoryResponse]):
    pass


class Pricing(BaseModel):
    """What every price and underwriting response starts with."""

    tenantLocator: str
    productName: str
    startTime: datetime
    endTime: datetime
    duration: Decimal
    durationBasis: DurationBasis
    validationResult: ValidationResult | None = None


def pricing(tenant: str, record: Any) -> dict[str, Any]:
    """Pricing's fields of a record: a quote failing validation for lack of an end has the start and 0."""
    return {
        "tenantLocator": tenant,
        "productName": record.productName,
        "startTime": record.startTime,
        "endTime": record.endTime or record.startTime,
        "duration": record.duration or Decimal(0),
        "durationBasis": record.durationBasis,
        "validationResult": record.validationResult,
    }


class PriceableResponse(Priceable):
    """What QuoteResponse and QuickQuoteResponse share: a user adds its state, contacts and own fields
    (and overrides what it requires)."""

    element: ElementResponse
    validationResult: ValidationResult | None = None

    @classmethod
    def of(cls, record: PriceableRecord) -> Self:
        """The record's fields the response has, its element tree converted (the root's parent: the record)."""
        fields = record.model_dump(include=set(cls.model_fields) - {"element"})
        return cls(**fields, element=ElementResponse.of(record.element, record.locator, record.startTime))
