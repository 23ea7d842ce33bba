"""Quick quotes: a price for a product without an account or the quote lifecycle; the record as
stored and what clients send to create and change one."""
from __future__ import annotations

from enum import StrEnum

from chalicelib.accounts.models import ContactRole
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.priceable.models import PriceableChanges, PriceableFields, PriceableRecord

ENTITY = "quickQuote"
"""The `code` prefix of quick quote state errors (other errors are the quotes' `quote.*`)."""


class QuickQuoteState(StrEnum):
    DRAFT = "draft"
    VALIDATED = "validated"
    PRICED = "priced"
    QUOTED = "quoted"
    DISCARDED = "discarded"


class QuickQuoteFields(PriceableFields):
    """QuickQuoteCreateRequest: no account needed."""

    contacts: list[ContactRole] = []


class QuickQuoteChanges(PriceableChanges):
    setContacts: list[ContactRole] = []


class QuickQuote(PriceableRecord):
    quickQuoteState: QuickQuoteState = QuickQuoteState.DRAFT
    contacts: list[ContactRole] = []
    validationResult: ValidationResult | None = None
