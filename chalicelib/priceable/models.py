"""The records every priceable thing (quote, quick quote, policy transaction) and the policies it
becomes share: the element tree, a charge, an underwriting flag. These are the only definitions;
response schemas convert them, nothing else does. Pure.
"""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, model_validator

FlagLevel = Literal["approve", "block", "decline", "reject", "info"]


class DurationBasis(StrEnum):
    YEARS = "years"
    MONTHS = "months"
    WEEKS = "weeks"
    DAYS = "days"
    HOURS = "hours"


class Element(BaseModel):
    """One node of an element tree; the root's type is the product. In a quote the root has no
    parent; in a policy segment its parent is the segment, and `originalEffectiveTime` is set."""

    locator: str
    staticLocator: str
    type: str
    category: str | None = None
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
    chargeCategory: str
    rate: Decimal
    amount: Decimal
    referenceRate: Decimal | None = None
    tag: str | None = None
    handling: str = "normal"
    invoicing: str = "scheduled"
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
