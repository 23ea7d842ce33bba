"""The records every priceable thing (quote, quick quote, policy transaction) and the policies it
becomes share: the element tree, a charge, an underwriting flag. These are the only definitions;
response schemas convert them, nothing else does. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, StringConstraints, model_validator

from chalicelib.core.messages import Input

FlagLevel = Literal["approve", "block", "decline", "reject", "info"]
ElementCategory = Literal["product", "coverage", "exposure", "exposureGroup", "policyLine"]
"""What an element's type is in the configuration: the product, or an entry of its coverages, exposures,
exposureGroups or policyLines (configuration.datamodel.ELEMENT_CATEGORIES)."""
ChargeCategory = Literal[
    "none", "premium", "tax", "fee", "credit", "invoiceFee", "cededPremium", "nonFinancial", "surcharge"
]
ChargeHandling = Literal["flat", "normal", "retention"]
ChargeInvoicing = Literal["scheduled", "next", "immediate"]
Name = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Ulid = Annotated[str, StringConstraints(pattern=r"^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$")]


@dataclass(frozen=True)
class Entity:
    """How a user of the engine is named in error codes (`quote.invalid_element`) and messages."""

    code: str
    noun: str


class DurationBasis(StrEnum):
    YEARS = "years"
    MONTHS = "months"
    WEEKS = "weeks"
    DAYS = "days"
    HOURS = "hours"


class SegmentType(StrEnum):
    """A policy segment's: coverage held, or a gap (a cancellation's)."""

    COVERAGE = "coverage"
    GAP = "gap"


class ElementInput(Input):
    """ElementCreateRequest: an element and its children; `parentLocator` only when adding elements
    to an existing quote (default: the root)."""

    type: Name
    parentLocator: Ulid | None = None
    staticLocator: Ulid | None = None
    data: dict[str, Any] = {}
    coverageTerms: dict[str, Any] = {}
    elements: list[Self] = []


class ElementChanges(Input):
    """ElementUpdateRequest: data and coverage terms removed, then set, on one element."""

    locator: Ulid
    setData: dict[str, Any] = {}
    removeData: dict[str, Any] = {}
    setCoverageTerms: dict[str, Any] = {}
    removeCoverageTerms: dict[str, Any] = {}


# --- underwriting requests (quotes and transactions alike) ----------------------------------------


class TaskCreation(Input):
    """UnderwritingTaskCreateRequest: accepted for compatibility; no task is created (no work
    management yet)."""

    type: Name
    references: list[dict[str, Any]] = []
    underwritingFlagLocators: list[str] = []
    deadlineTime: datetime | None = None
    assignedTo: str | None = None
    description: str | None = None
    workgroupToBeAssignedLocator: str | None = None
    source: str | None = None
    tag: str | None = None


class FlagInput(Input):
    """UnderwritingFlagCreateRequest (the level comes from the path on the per-level endpoints)."""

    level: FlagLevel | None = None
    note: Annotated[str, StringConstraints(max_length=2000)] = ""
    tag: Annotated[str, StringConstraints(max_length=200)] = ""
    elementLocator: Ulid | None = None
    taskCreation: TaskCreation | None = None


class ResetOptions(Input):
    resetAllUnderwritingFlags: bool = False
    resetFlags: list[Ulid] = []
    resetFlagsAction: Literal["clear", "delete"] = "clear"
    deleteAllAutomaticDocuments: bool = False
    discardSchedules: bool = False
    deleteDocuments: list[str] = []


class Element(BaseModel):
    """One node of an element tree; the root's type is the product. In a quote the root has no
    parent; in a policy segment its parent is the segment, and `originalEffectiveTime` is set."""

    locator: str
    staticLocator: str
    type: str
    category: ElementCategory | None = None
    parentLocator: str | None = None
    originalEffectiveTime: datetime | None = None
    data: dict[str, Any] = {}
    coverageTerms: dict[str, Any] = {}
    elements: list[Element] = []


class Charge(BaseModel):
    """A priced charge (PolicyChargeResponse): `amount` = `rate` x the segment's duration, rounded to
    the currency's minor unit (or the amount the plugin gave). `referenceRate` defaults to the rate;
    `reversalOfLocator` and `rateDifference` belong to the charges of a reversing transaction."""

    locator: str
    elementLocator: str
    elementStaticLocator: str
    chargeType: str
    chargeCategory: ChargeCategory
    rate: Decimal
    amount: Decimal
    referenceRate: Decimal | None = None
    tag: str | None = None
    handling: ChargeHandling = "normal"
    invoicing: ChargeInvoicing = "scheduled"
    reversalOfLocator: str | None = None
    rateDifference: Decimal | None = None

    @model_validator(mode="after")
    def _reference_rate_defaults_to_the_rate(self) -> Charge:
        if self.referenceRate is None:
            self.referenceRate = self.rate
        return self


class Flag(BaseModel):
    """An underwriting flag. `source`: `manual` (the API) or `plugin` (the last underwriting run)."""

    locator: str
    level: FlagLevel
    note: str = ""
    tag: str = ""
    elementLocator: str | None = None
    source: Literal["manual", "plugin"]
    createdBy: str
    createdTime: datetime
    clearedBy: str | None = None
    clearedTime: datetime | None = None

    @property
    def cleared(self) -> bool:
        return self.clearedTime is not None


# --- the fields quotes and quick quotes share (contacts and validationResult are the users', whose
# --- types live in higher domains) ---------------------------------------------------------------

Currency = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")]


class PriceableFields(Input):
    """What creating one sends (QuoteCreateRequest, QuickQuoteCreateRequest); `data` and
    `coverageTerms` belong to the root element. A user overrides the fields it requires."""

    productName: Name
    accountLocator: Ulid | None = None
    startTime: datetime | None = None
    endTime: datetime | None = None
    expirationTime: datetime | None = None
    currency: Currency | None = None
    timezone: Name | None = None
    jurisdiction: Name | None = None
    coverageTerms: dict[str, Any] = {}
    data: dict[str, Any] = {}
    elements: Sequence[ElementInput] = []
    durationBasis: DurationBasis | None = None


class PriceableChanges(Input):
    """What changing one sends: what is left out stays; the root's data and terms are removed, then set."""

    setData: dict[str, Any] = {}
    removeData: dict[str, Any] = {}
    setCoverageTerms: dict[str, Any] = {}
    removeCoverageTerms: dict[str, Any] = {}
    currency: Currency | None = None
    startTime: datetime | None = None
    endTime: datetime | None = None
    expirationTime: datetime | None = None
    elements: list[ElementChanges] = []
    removeContacts: list[Ulid] = []
    jurisdiction: Name | None = None


class Priceable(BaseModel):
    """The fields one has as stored and as answered (priceable/schemas.PriceableResponse)."""

    locator: str
    productName: str
    accountLocator: str | None = None
    startTime: datetime
    endTime: datetime | None = None
    expirationTime: datetime | None = None
    timezone: str
    currency: str
    durationBasis: DurationBasis
    duration: Decimal | None = None
    jurisdiction: str | None = None
    createdAt: datetime
    createdBy: str


class StaticDataVersion(BaseModel):
    """A quote's or a policy's static data as one change (or issuing) left it."""

    historyLocator: str
    staticData: dict[str, Any]
    updatedBy: str
    updatedAt: datetime


class PriceableRecord(Priceable):
    """One as stored: one item holding its element tree and charges. `charges` is None until it is
    priced; `version` is the optimistic lock; `configVersion` the deployed configuration it was last
    checked against."""

    element: Element
    charges: list[Charge] | None = None
    configVersion: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1
