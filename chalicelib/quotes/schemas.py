"""The quotes API contract (OpenAPI definition: QuoteCreateRequest, QuoteResponse, QuotePriceResponse,
QuoteUnderwritingResponse, UnderwritingFlag*, QuickQuote*). Requests are the domain's input models;
unknown fields are a 400. Responses carry every field the definition marks required:

- an element's `parentLocator` is required: the root's is the quote's own locator;
- a flag's `clearedBy`, `clearedTime` and `taskCreationResponse` are required but have no value
  until it is cleared (no tasks are created): they are present as null;
- QuotePriceResponse requires `endTime` and `duration`, which a quote failing validation for lack
  of an end does not have: the start and 0 stand in.

QuoteCreateRequest marks `contacts` and `invoiceFeeAmount` required and QuoteUpdateRequest every
field: here they are optional, a left-out field defaulting (create) or staying as it is (update).
"""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, RootModel, model_serializer

from chalicelib.accounts.models import BillingLevel, ContactRole, Preferences
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core.paging import Page
from chalicelib.quotes.models import (
    Charge,
    Element,
    ElementInput,
    Flag,
    FlagInput,
    Input,
    QuickQuote,
    QuickQuoteChanges,
    QuickQuoteFields,
    QuickQuoteState,
    Quote,
    QuoteChanges,
    QuoteFields,
    QuoteState,
    ResetOptions,
    StaticHistoryEntry,
    Ulid,
)

# --- requests --------------------------------------------------------------------------------------


class QuoteCreateRequest(QuoteFields):
    pass


class QuoteUpdateRequest(QuoteChanges):
    pass


class QuickQuoteCreateRequest(QuickQuoteFields):
    pass


class QuickQuoteUpdateRequest(QuickQuoteChanges):
    pass


class ElementCreateRequests(RootModel[list[ElementInput]]):
    pass


class ElementLocators(RootModel[list[Ulid]]):
    pass


class UnderwritingFlagCreateRequest(FlagInput):
    pass


class ResetRequest(ResetOptions):
    pass


class UnderwritingFlagsUpdateRequest(Input):
    addFlags: list[FlagInput] = []
    clearFlags: list[Ulid] = []


class StaticDataUpdateRequest(Input):
    setData: dict[str, Any] = {}
    removeData: dict[str, Any] = {}


class StaticData(RootModel[dict[str, Any]]):
    pass


class ConstraintValuesRequest(RootModel[dict[str, dict[str, dict[str, Any]]]]):
    """Element locator -> groups of field values (e.g. {"data": {...}}), merged."""


class StatelessQuery(BaseModel):
    stateless: bool = False


class ListQuery(BaseModel):
    offset: int | None = None
    count: int | None = None
    extended: bool = False
    includeStaticData: bool = False


class QuoteNumberQuery(BaseModel):
    quoteNumber: str


class ReservedPolicyNumberQuery(BaseModel):
    reservedPolicyNumber: str


# --- responses -------------------------------------------------------------------------------------


class _WithNulls(BaseModel):
    """A response whose required-but-empty fields are sent as null (the renderer drops other Nones)."""

    NULLS: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _keep_nulls(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        for name in self.NULLS:
            data.setdefault(name, None)
        return data


class ElementResponse(BaseModel):
    type: str
    locator: str
    parentLocator: str
    staticLocator: str
    originalEffectiveTime: datetime
    category: str
    data: dict[str, Any]
    coverageTerms: dict[str, Any]
    elements: list[ElementResponse]

    @classmethod
    def of(cls, element: Element, owner: str, effective: datetime) -> ElementResponse:
        return cls(type=element.type, locator=element.locator, parentLocator=element.parentLocator or owner,
                   staticLocator=element.staticLocator, originalEffectiveTime=effective, category=element.category,
                   data=element.data, coverageTerms=element.coverageTerms,
                   elements=[cls.of(child, owner, effective) for child in element.elements])


class QuoteResponse(BaseModel):
    locator: str
    quoteState: QuoteState
    productName: str
    accountLocator: str
    startTime: datetime
    endTime: datetime | None = None
    expirationTime: datetime | None = None
    timezone: str
    currency: str
    durationBasis: str
    duration: Decimal | None = None
    element: ElementResponse
    billingLevel: BillingLevel
    contacts: list[ContactRole]
    preferences: Preferences | None = None
    delinquencyPlanName: str | None = None
    autoRenewalPlanName: str | None = None
    region: str | None = None
    jurisdiction: str | None = None
    producerCode: str | None = None
    groupLocator: str | None = None
    invoiceFeeAmount: Decimal | None = None
    static: dict[str, Any]
    quoteNumber: str | None = None
    reservedPolicyNumber: str | None = None
    policyLocator: str | None = None
    policyNumber: str | None = None
    underwritingStatus: str | None = None
    acceptedTime: datetime | None = None
    issuedTime: datetime | None = None
    validationResult: ValidationResult | None = None
    createdAt: datetime
    createdBy: str

    @classmethod
    def of(cls, quote: Quote) -> QuoteResponse:
        fields = quote.model_dump(include=set(cls.model_fields) - {"element"})
        return cls(**fields, element=ElementResponse.of(quote.element, quote.locator, quote.startTime))


class QuoteListResponse(BaseModel):
    listCompleted: bool
    items: list[QuoteResponse]

    @classmethod
    def of(cls, page: Page[Quote]) -> QuoteListResponse:
        return cls(listCompleted=page.list_completed, items=[QuoteResponse.of(quote) for quote in page.items])


class PolicyChargeResponse(BaseModel):
    locator: str
    elementLocator: str
    elementStaticLocator: str
    chargeType: str
    chargeCategory: str
    amount: Decimal
    rate: Decimal
    referenceRate: Decimal
    tag: str | None = None
    handling: str
    invoicing: str

    @classmethod
    def of(cls, charge: Charge) -> PolicyChargeResponse:
        return cls(**charge.model_dump())


class _Pricing(BaseModel):
    tenantLocator: str
    productName: str
    startTime: datetime
    endTime: datetime
    duration: Decimal
    durationBasis: str
    validationResult: ValidationResult | None = None


class QuotePriceResponse(_Pricing):
    quoteLocator: str
    accountLocator: str
    quoteState: QuoteState
    quoteNumber: str | None = None
    items: list[PolicyChargeResponse]

    @classmethod
    def of(cls, tenant: str, quote: Quote) -> QuotePriceResponse:
        return cls(**_pricing(tenant, quote), quoteLocator=quote.locator, accountLocator=quote.accountLocator,
                   quoteState=quote.quoteState, quoteNumber=quote.quoteNumber,
                   items=[PolicyChargeResponse.of(charge) for charge in quote.charges or []])


class UnderwritingFlagResponse(_WithNulls):
    NULLS: ClassVar[tuple[str, ...]] = ("clearedBy", "clearedTime", "taskCreationResponse")

    locator: str
    level: str
    referenceType: Literal["quote", "transaction"] = "quote"
    referenceLocator: str
    note: str
    tag: str
    elementLocator: str | None = None
    createdBy: str
    createdTime: datetime
    clearedBy: str | None = None
    clearedTime: datetime | None = None
    taskCreationResponse: dict[str, Any] | None = None

    @classmethod
    def of(cls, quote_locator: str, flag: Flag) -> UnderwritingFlagResponse:
        return cls(**flag.model_dump(exclude={"source"}), referenceLocator=quote_locator)


class QuoteUnderwritingResponse(_Pricing):
    quoteLocator: str
    accountLocator: str
    quoteState: QuoteState
    underwritingStatus: str
    underwritingFlags: list[UnderwritingFlagResponse]

    @classmethod
    def of(cls, tenant: str, quote: Quote) -> QuoteUnderwritingResponse:
        """`underwritingStatus` is "" until the quote was underwritten (the field is required)."""
        return cls(**_pricing(tenant, quote), quoteLocator=quote.locator, accountLocator=quote.accountLocator,
                   quoteState=quote.quoteState, underwritingStatus=quote.underwritingStatus or "",
                   underwritingFlags=[UnderwritingFlagResponse.of(quote.locator, flag) for flag in quote.flags
                                      if not flag.cleared])


class QuoteUnderwritingFlagsResponse(BaseModel):
    quoteLocator: str
    flags: list[UnderwritingFlagResponse]
    clearedFlags: list[UnderwritingFlagResponse]

    @classmethod
    def of(cls, quote: Quote) -> QuoteUnderwritingFlagsResponse:
        return cls(quoteLocator=quote.locator,
                   flags=[UnderwritingFlagResponse.of(quote.locator, f) for f in quote.flags if not f.cleared],
                   clearedFlags=[UnderwritingFlagResponse.of(quote.locator, f) for f in quote.flags if f.cleared])


class StaticDataHistoryResponse(BaseModel):
    historyLocator: str
    staticData: dict[str, Any]
    updatedBy: str
    updatedAt: datetime


class StaticDataHistoryListResponse(BaseModel):
    listCompleted: bool
    items: list[StaticDataHistoryResponse]

    @classmethod
    def of(cls, page: Page[StaticHistoryEntry]) -> StaticDataHistoryListResponse:
        return cls(listCompleted=page.list_completed,
                   items=[StaticDataHistoryResponse(**entry.model_dump()) for entry in page.items])


class QuickQuoteResponse(BaseModel):
    locator: str
    quickQuoteState: QuickQuoteState
    productName: str
    accountLocator: str | None = None
    startTime: datetime
    endTime: datetime | None = None
    duration: Decimal | None = None
    expirationTime: datetime | None = None
    timezone: str
    currency: str
    durationBasis: str
    jurisdiction: str | None = None
    element: ElementResponse
    validationResult: ValidationResult | None = None
    contacts: list[ContactRole]
    createdBy: str
    createdAt: datetime

    @classmethod
    def of(cls, quick: QuickQuote) -> QuickQuoteResponse:
        fields = quick.model_dump(include=set(cls.model_fields) - {"element"})
        return cls(**fields, element=ElementResponse.of(quick.element, quick.locator, quick.startTime))


class QuickQuotePriceResponse(_Pricing):
    quickQuoteLocator: str
    accountLocator: str | None = None
    quickQuoteState: QuickQuoteState
    state: QuickQuoteState
    items: list[PolicyChargeResponse]

    @classmethod
    def of(cls, tenant: str, quick: QuickQuote) -> QuickQuotePriceResponse:
        return cls(**_pricing(tenant, quick), quickQuoteLocator=quick.locator, accountLocator=quick.accountLocator,
                   quickQuoteState=quick.quickQuoteState, state=quick.quickQuoteState,
                   items=[PolicyChargeResponse.of(charge) for charge in quick.charges or []])


def _pricing(tenant: str, record: Quote | QuickQuote) -> dict[str, Any]:
    return {"tenantLocator": tenant, "productName": record.productName, "startTime": record.startTime,
            "endTime": record.endTime or record.startTime, "duration": record.duration or Decimal(0),
            "durationBasis": record.durationBasis, "validationResult": record.validationResult}
