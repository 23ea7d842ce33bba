"""Quotes: the records as stored, and what clients send to create and change them."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field

from chalicelib.accounts.models import BillingLevel, ContactRole, Preferences
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core.messages import Input
from chalicelib.policies.models import HeldScope
from chalicelib.priceable.models import (
    Flag,
    Name,
    PriceableChanges,
    PriceableFields,
    PriceableRecord,
    Ulid,
)
from chalicelib.priceable.models import FlagInput as FlagInput
from chalicelib.priceable.models import ResetOptions as ResetOptions

ENTITY = "quote"
"""The entity kind of quote numbers and the `code` prefix of quote errors."""
RESERVED_POLICY_NUMBER_KIND = "reservedPolicyNumber"
"""Guards of reserved policy numbers: one quote per reserved number."""

NonNegative = Annotated[Decimal, Field(ge=0, allow_inf_nan=False)]


class QuoteState(StrEnum):
    DRAFT = "draft"
    VALIDATED = "validated"
    EARLY_UNDERWRITTEN = "earlyUnderwritten"
    PRICED = "priced"
    UNDERWRITTEN = "underwritten"
    ACCEPTED = "accepted"
    ISSUED = "issued"
    UNDERWRITTEN_BLOCKED = "underwrittenBlocked"
    DECLINED = "declined"
    REJECTED = "rejected"
    REFUSED = "refused"
    DISCARDED = "discarded"


class QuoteOptions(Input):
    """What a quote's requests add to a priceable thing's, on create and change alike."""

    preferences: Preferences | None = None
    delinquencyPlanName: Name | None = None
    autoRenewalPlanName: Name | None = None
    billingLevel: BillingLevel | None = None
    invoiceFeeAmount: NonNegative | None = None
    producerCode: Name | None = None


class QuoteFields(PriceableFields, QuoteOptions):
    """QuoteCreateRequest (also the body of validatePreview and pricePreview): an account and a start
    are required; left-out plans, currency, time zone, duration basis and term come from the
    account, the product and the tenant's defaults."""

    accountLocator: Ulid
    startTime: datetime
    region: Name | None = None
    quoteGroupLocator: Ulid | None = None
    static: dict[str, Any] = {}
    contacts: list[ContactRole] = []
    termDuration: Annotated[int, Field(ge=1, le=1200)] | None = None


class QuoteChanges(PriceableChanges, QuoteOptions):
    """QuoteUpdateRequest: a quote may also change its time zone, its account and its contacts' roles,
    and go back to the end its term gives (`resetEndTime`)."""

    timezone: Name | None = None
    resetEndTime: bool = False
    setContacts: list[ContactRole] = []
    accountLocator: Ulid | None = None


# --- what is stored --------------------------------------------------------------------------------


class Quote(PriceableRecord):
    """A quote as stored (priceable/models.py), with its account, plans, numbers, static data and
    underwriting flags; a draft follows the current configuration."""

    quoteState: QuoteState = QuoteState.DRAFT
    accountLocator: str
    termDuration: Decimal | None = None
    preferences: Preferences | None = None
    delinquencyPlanName: str | None = None
    autoRenewalPlanName: str | None = None
    installmentPlanName: str | None = None
    billingLevel: BillingLevel
    region: str | None = None
    producerCode: str | None = None
    groupLocator: str | None = None
    contacts: list[ContactRole] = []
    invoiceFeeAmount: Decimal | None = None
    static: dict[str, Any] = {}
    quoteNumber: str | None = None
    reservedPolicyNumber: str | None = None
    policyLocator: str | None = None
    policyNumber: str | None = None
    underwritingStatus: str | None = None
    validationResult: ValidationResult | None = None
    acceptedTime: datetime | None = None
    issuedTime: datetime | None = None
    anonymizedAt: datetime | None = None
    flags: list[Flag] = []
    entityHolds: list[HeldScope] = []
    """What the quote's active entity holds block (chalicelib/entity_holds)."""
