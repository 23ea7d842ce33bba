"""Quick quotes: a price for a product without an account or the quote lifecycle; the record as
stored and what clients send to create and change one."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from chalicelib.accounts.models import ContactRole
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.priceable.models import (
    ElementCategory,
    ElementInput,
    PriceableChanges,
    PriceableFields,
    PriceableRecord,
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


class QuickQuoteElement(ElementInput):
    """An element of QuickQuoteCreateRequest, which the definition types as an ElementResponse: the fields
    only an answer has (`locator`, `originalEffectiveTime`, `category`) are taken and ignored, as a
    quick quote's elements get their own."""

    locator: Ulid | None = None
    originalEffectiveTime: datetime | None = None
    category: ElementCategory | None = None


class QuickQuoteFields(PriceableFields):
    """QuickQuoteCreateRequest: no account needed."""

    elements: list[QuickQuoteElement] = []
    contacts: list[ContactRole] = []


class QuickQuoteChanges(PriceableChanges):
    setContacts: list[ContactRole] = []


class QuickQuote(PriceableRecord):
    quickQuoteState: QuickQuoteState = QuickQuoteState.DRAFT
    contacts: list[ContactRole] = []
    validationResult: ValidationResult | None = None
