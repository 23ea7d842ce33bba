"""The quotes API contract (OpenAPI definition: QuoteCreateRequest, QuoteResponse, QuotePriceResponse,
QuoteUnderwritingResponse, UnderwritingFlag*). Requests are the domain's input models; unknown fields
are a 400. Responses carry every field the definition marks required; the shapes quotes share with
other priceable things (elements, charges, flags, pricing) are priceable/schemas.py's.

QuoteCreateRequest marks `contacts` and `invoiceFeeAmount` required and QuoteUpdateRequest every
field: here they are optional, a left-out field defaulting (create) or staying as it is (update).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, RootModel

from chalicelib.accounts.models import BillingLevel, ContactRole, Preferences
from chalicelib.core import paging
from chalicelib.core.clock import utc
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListResponse
from chalicelib.priceable.schemas import ConstraintValuesRequest as ConstraintValuesRequest
from chalicelib.priceable.schemas import ElementCreateRequests as ElementCreateRequests
from chalicelib.priceable.schemas import ElementLocators as ElementLocators
from chalicelib.priceable.schemas import (
    PolicyChargeResponse,
    PriceableResponse,
    Pricing,
    UnderwritingFlagResponse,
    pricing,
)
from chalicelib.priceable.schemas import StatelessQuery as StatelessQuery
from chalicelib.priceable.schemas import StaticDataHistoryListResponse as StaticDataHistoryListResponse
from chalicelib.priceable.schemas import StaticDataHistoryResponse as StaticDataHistoryResponse
from chalicelib.priceable.schemas import UnderwritingFlagsUpdateRequest as UnderwritingFlagsUpdateRequest
from chalicelib.quotes.models import (
    FlagInput,
    Quote,
    QuoteChanges,
    QuoteFields,
    QuoteState,
    ResetOptions,
)

# --- requests --------------------------------------------------------------------------------------


class QuoteCreateRequest(QuoteFields):
    pass


class QuoteUpdateRequest(QuoteChanges):
    pass


class UnderwritingFlagCreateRequest(FlagInput):
    pass


class ResetRequest(ResetOptions):
    pass


class StaticDataUpdateRequest(Input):
    setData: dict[str, Any] = {}
    removeData: dict[str, Any] = {}


class StaticData(RootModel[dict[str, Any]]):
    pass


class ListQuery(paging.ListQuery):
    """Quote lists also take `includeStaticData` (a quote always shows its static data)."""

    includeStaticData: bool = False


class QuoteFromPolicyQuery(BaseModel):
    """POST /policies/{locator}/quote: `date` picks the segment to copy (left out: the issuance's),
    compared with segments' effective times or, with `byIssuedTime`, transactions' issued times."""

    date: Annotated[datetime, AfterValidator(utc)] | None = None
    byIssuedTime: bool = False
    includeStaticData: bool = False


class QuoteNumberQuery(BaseModel):
    quoteNumber: str


class ReservedPolicyNumberQuery(BaseModel):
    reservedPolicyNumber: str


# --- responses -------------------------------------------------------------------------------------


class QuoteResponse(PriceableResponse):
    quoteState: QuoteState
    accountLocator: str
    billingLevel: BillingLevel
    contacts: list[ContactRole]
    preferences: Preferences | None = None
    delinquencyPlanName: str | None = None
    autoRenewalPlanName: str | None = None
    region: str | None = None
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
    anonymizedAt: datetime | None = None


class QuoteListResponse(ListResponse[QuoteResponse]):
    pass


class QuotePricing(Pricing):
    """What a quote's price and underwriting responses share."""

    quoteLocator: str
    accountLocator: str
    quoteState: QuoteState


def quote_pricing(tenant: str, quote: Quote) -> dict[str, Any]:
    """QuotePricing's fields of a quote."""
    return {
        **pricing(tenant, quote),
        "quoteLocator": quote.locator,
        "accountLocator": quote.accountLocator,
        "quoteState": quote.quoteState,
    }


class QuotePriceResponse(QuotePricing):
    quoteNumber: str | None = None
    items: list[PolicyChargeResponse]

    @classmethod
    def of(cls, tenant: str, quote: Quote) -> QuotePriceResponse:
        return cls(
            **quote_pricing(tenant, quote),
            quoteNumber=quote.quoteNumber,
            items=[PolicyChargeResponse.of(charge) for charge in quote.charges or []],
        )


class QuoteUnderwritingResponse(QuotePricing):
    underwritingStatus: str
    underwritingFlags: list[UnderwritingFlagResponse]

    @classmethod
    def of(cls, tenant: str, quote: Quote) -> QuoteUnderwritingResponse:
        """`underwritingStatus` is "" until the quote was underwritten (the field is required)."""
        return cls(
            **quote_pricing(tenant, quote),
            underwritingStatus=quote.underwritingStatus or "",
            underwritingFlags=[
                UnderwritingFlagResponse.of(quote.locator, flag) for flag in quote.flags if not flag.cleared
            ],
        )


class QuoteUnderwritingFlagsResponse(Response):
    quoteLocator: str
    flags: list[UnderwritingFlagResponse]
    clearedFlags: list[UnderwritingFlagResponse]

    @classmethod
    def of(cls, quote: Quote) -> QuoteUnderwritingFlagsResponse:
        return cls(
            quoteLocator=quote.locator,
            flags=[UnderwritingFlagResponse.of(quote.locator, f) for f in quote.flags if not f.cleared],
            clearedFlags=[UnderwritingFlagResponse.of(quote.locator, f) for f in quote.flags if f.cleared],
        )
