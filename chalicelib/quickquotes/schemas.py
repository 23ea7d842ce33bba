"""The quick quotes API contract (OpenAPI definition: QuickQuoteCreateRequest, QuickQuoteResponse,
QuickQuotePriceResponse). Requests are the domain's input models; unknown fields are a 400."""

from __future__ import annotations

from chalicelib.accounts.models import ContactRole
from chalicelib.priceable.schemas import ConstraintValuesRequest as ConstraintValuesRequest
from chalicelib.priceable.schemas import PolicyChargeResponse, PriceableResponse, Pricing, pricing
from chalicelib.quickquotes.models import QuickQuote, QuickQuoteChanges, QuickQuoteFields, QuickQuoteState


class QuickQuoteCreateRequest(QuickQuoteFields):
    pass


class QuickQuoteUpdateRequest(QuickQuoteChanges):
    pass


class QuickQuoteResponse(PriceableResponse):
    quickQuoteState: QuickQuoteState
    contacts: list[ContactRole]


class QuickQuotePriceResponse(Pricing):
    quickQuoteLocator: str
    accountLocator: str | None = None
    quickQuoteState: QuickQuoteState
    state: QuickQuoteState
    items: list[PolicyChargeResponse]

    @classmethod
    def of(cls, tenant: str, quick: QuickQuote) -> QuickQuotePriceResponse:
        return cls(
            **pricing(tenant, quick),
            quickQuoteLocator=quick.locator,
            accountLocator=quick.accountLocator,
            quickQuoteState=quick.quickQuoteState,
            state=quick.quickQuoteState,
            items=[PolicyChargeResponse.of(charge) for charge in quick.charges or []],
        )
