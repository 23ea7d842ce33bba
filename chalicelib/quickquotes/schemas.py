"""The quick quotes API contract (OpenAPI definition: QuickQuoteCreateRequest, QuickQuoteResponse,
QuickQuotePriceResponse). Requests are the domain's input models; unknown fields are a 400."""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, RootModel

from chalicelib.accounts.models import ContactRole
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.priceable.schemas import ElementResponse, PolicyChargeResponse, Pricing, pricing
from chalicelib.quickquotes.models import QuickQuote, QuickQuoteChanges, QuickQuoteFields, QuickQuoteState


class QuickQuoteCreateRequest(QuickQuoteFields):
    pass


class QuickQuoteUpdateRequest(QuickQuoteChanges):
    pass


class ConstraintValuesRequest(RootModel[dict[str, dict[str, dict[str, Any]]]]):
    """Element locator -> groups of field values (e.g. {"data": {...}}), merged."""


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


class QuickQuotePriceResponse(Pricing):
    quickQuoteLocator: str
    accountLocator: str | None = None
    quickQuoteState: QuickQuoteState
    state: QuickQuoteState
    items: list[PolicyChargeResponse]

    @classmethod
    def of(cls, tenant: str, quick: QuickQuote) -> QuickQuotePriceResponse:
        return cls(**pricing(tenant, quick), quickQuoteLocator=quick.locator, accountLocator=quick.accountLocator,
                   quickQuoteState=quick.quickQuoteState, state=quick.quickQuoteState,
                   items=[PolicyChargeResponse.of(charge) for charge in quick.charges or []])
