"""One quote read and written by the quotes service modules: found by locator, checked against its
model, saved with its events in one transaction (conditional on the version it was read at)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chalicelib.configuration import service as configuration
from chalicelib.core.context import CallContext
from chalicelib.core.errors import NotFound
from chalicelib.priceable import checks
from chalicelib.quotes import repository
from chalicelib.quotes.lifecycle import ERRORS
from chalicelib.quotes.models import ENTITY, Quote, QuoteState

EVENT = "policy.quote."
MAX_LOCATOR_LENGTH = 64


def get_quote(ctx: CallContext, locator: str) -> Quote:
    """The quote (404 `quote.not_found` when this tenant has none with that locator)."""
    quote = repository.get(ctx.tenant, locator) if 0 < len(locator) <= MAX_LOCATOR_LENGTH else None
    if quote is None:
        raise NotFound(ENTITY, locator)
    return quote


def model_of(ctx: CallContext, quote: Quote) -> dict[str, Any]:
    """The model a quote is checked against: the current one for a draft, else the bound version."""
    if quote.quoteState == QuoteState.DRAFT:
        return configuration.current_model(ctx, resolved=True)[1]
    return configuration.model(ctx, quote.configVersion, resolved=True)


def touched(ctx: CallContext, quote: Quote) -> Quote:
    return quote.model_copy(update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator})


def save(ctx: CallContext, uow: Any, quote: Quote, actions: list[str],
         event_data: dict[str, dict[str, Any]] | None = None,
         extra_events: Sequence[tuple[str, dict[str, Any]]] = ()) -> Quote:
    """Writes the changed quote (conditional on the version it was read at) with its events."""
    checks.check_size(quote, ERRORS)
    quote = touched(ctx, quote)
    repository.save(uow, ctx.tenant, quote)
    for action in actions:
        uow.record_event(EVENT + action, {"quoteLocator": quote.locator, **(event_data or {}).get(action, {})})
    for event_type, data in extra_events:
        uow.record_event(event_type, data)
    uow.commit()
    return quote.model_copy(update={"version": quote.version + 1})


def commit(uow: Any, quote: Quote, actions: list[str]) -> None:
    """Commits `uow` with the quote's events (the quote itself is already in it)."""
    for action in actions:
        uow.record_event(EVENT + action, {"quoteLocator": quote.locator})
    uow.commit()
