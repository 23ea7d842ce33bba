"""Quick quotes: a price for a product without an account or the quote lifecycle; the record as
stored and what clients send to create and change one."""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, StringConstraints

from chalicelib.accounts.models import ContactRole
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.priceable.models import (
    Charge,
    DurationBasis,
    Element,
    ElementChanges,
    ElementInput,
    Input,
    Name,
    Ulid,
)

ENTITY = "quickQuote"
"""The `code` prefix of quick quote state errors (other errors are the quotes' `quote.*`)."""


class QuickQuoteState(StrEnum):
    DRAFT = "draft"
    VALIDATED = "validated"
    PRICED = "priced"
    QUOTED = "quoted"
    DISCARDED = "discarded"


class QuickQuoteFields(Input):
    """QuickQuoteCreateRequest: no account needed."""

    productName: Name
    accountLocator: Ulid | None = None
    startTime: datetime | None = None
    endTime: datetime | None = None
    expirationTime: datetime | None = None
    currency: Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")] | None = None
    timezone: Name | None = None
    jurisdiction: Name | None = None
    coverageTerms: dict[str, Any] = {}
    data: dict[str, Any] = {}
    elements: list[ElementInput] = []
    durationBasis: DurationBasis | None = None
    contacts: list[ContactRole] = []


class QuickQuoteChanges(Input):
    setData: dict[str, Any] = {}
    removeData: dict[str, Any] = {}
    setCoverageTerms: dict[str, Any] = {}
    removeCoverageTerms: dict[str, Any] = {}
    currency: Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")] | None = None
    startTime: datetime | None = None
    endTime: datetime | None = None
    expirationTime: datetime | None = None
    elements: list[ElementChanges] = []
    setContacts: list[ContactRole] = []
    removeContacts: list[Ulid] = []
    jurisdiction: Name | None = None


class QuickQuote(BaseModel):
    locator: str
    quickQuoteState: QuickQuoteState = QuickQuoteState.DRAFT
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
    element: Element
    contacts: list[ContactRole] = []
    validationResult: ValidationResult | None = None
    charges: list[Charge] | None = None
    configVersion: str
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1
