"""Quotes: the records as stored, and what clients send to create and change them."""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from chalicelib.accounts.models import BillingLevel, ContactRole, Preferences
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.priceable.models import (
    Charge,
    DurationBasis,
    Element,
    ElementChanges,
    ElementInput,
    Flag,
    Input,
    Name,
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


class QuoteFields(Input):
    """QuoteCreateRequest (also the body of validatePreview and pricePreview). `data` and
    `coverageTerms` belong to the root element; left-out plans, currency, time zone, duration basis
    and term come from the account, the product and the tenant's defaults."""

    productName: Name
    accountLocator: Ulid
    startTime: datetime
    endTime: datetime | None = None
    expirationTime: datetime | None = None
    currency: Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")] | None = None
    timezone: Name | None = None
    jurisdiction: Name | None = None
    coverageTerms: dict[str, Any] = {}
    data: dict[str, Any] = {}
    elements: list[ElementInput] = []
    durationBasis: DurationBasis | None = None
    preferences: Preferences | None = None
    delinquencyPlanName: Name | None = None
    autoRenewalPlanName: Name | None = None
    billingLevel: BillingLevel | None = None
    region: Name | None = None
    quoteGroupLocator: Ulid | None = None
    static: dict[str, Any] = {}
    contacts: list[ContactRole] = []
    invoiceFeeAmount: NonNegative | None = None
    termDuration: Annotated[int, Field(ge=1, le=1200)] | None = None
    producerCode: Name | None = None


class QuoteChanges(Input):
    """QuoteUpdateRequest: what is left out stays; data and terms of the root are removed, then set."""

    setData: dict[str, Any] = {}
    removeData: dict[str, Any] = {}
    setCoverageTerms: dict[str, Any] = {}
    removeCoverageTerms: dict[str, Any] = {}
    currency: Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")] | None = None
    timezone: Name | None = None
    startTime: datetime | None = None
    endTime: datetime | None = None
    resetEndTime: bool = False
    expirationTime: datetime | None = None
    elements: list[ElementChanges] = []
    preferences: Preferences | None = None
    delinquencyPlanName: Name | None = None
    autoRenewalPlanName: Name | None = None
    billingLevel: BillingLevel | None = None
    setContacts: list[ContactRole] = []
    removeContacts: list[Ulid] = []
    invoiceFeeAmount: NonNegative | None = None
    jurisdiction: Name | None = None
    producerCode: Name | None = None
    accountLocator: Ulid | None = None


# --- what is stored --------------------------------------------------------------------------------


class Quote(BaseModel):
    """A quote as stored: one item holding its element tree, charges and flags. `charges` is None
    until the quote is priced; `version` is the optimistic lock; `configVersion` the deployed
    configuration it was last checked against (a draft follows the current one)."""

    locator: str
    quoteState: QuoteState = QuoteState.DRAFT
    productName: str
    accountLocator: str
    startTime: datetime
    endTime: datetime | None = None
    expirationTime: datetime | None = None
    timezone: str
    currency: str
    durationBasis: DurationBasis
    termDuration: Decimal | None = None
    duration: Decimal | None = None
    element: Element
    preferences: Preferences | None = None
    delinquencyPlanName: str | None = None
    autoRenewalPlanName: str | None = None
    installmentPlanName: str | None = None
    billingLevel: BillingLevel
    region: str | None = None
    jurisdiction: str | None = None
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
    charges: list[Charge] | None = None
    flags: list[Flag] = []
    configVersion: str
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1


class StaticHistoryEntry(BaseModel):
    historyLocator: str
    staticData: dict[str, Any]
    updatedBy: str
    updatedAt: datetime
