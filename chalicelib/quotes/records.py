"""One quote read and written by the quotes service modules: found by locator, checked against its
model, saved with its events in one transaction (conditional on the version it was read at)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chalicelib.configuration import service as configuration
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.quotes import repository
from chalicelib.quotes.lifecycle import ERRORS
from chalicelib.quotes.models import ENTITY, Quote, QuoteState
from chalicelib.runtime import versioned
from chalicelib.runtime.wiring import UnitOfWork

EVENT = "policy.quote."
MAX_LOCATOR_LENGTH = 64


def get_quote(ctx: CallContext, locator: str) -> Quote:
    """The quote (404 `quote.not_found` when this tenant has none with that locator)."""
    quote = repository.get(ctx.tenant, locator) if 0 < len(locator) <= MAX_LOCATOR_LENGTH else None
    if quote is None:
        raise codes.not_found(ENTITY, locator)
    return quote


def model_of(ctx: CallContext, quote: Quote) -> dict[str, Any]:
    """The model a quote is checked against: the current one for a draft, else the bound version."""
    if quote.quoteState == QuoteState.DRAFT:
        return configuration.current_model(ctx, resolved=True)[1]
    return configuration.model(ctx, quote.configVersion, resolved=True)


def save(
    ctx: CallContext,
    uow: UnitOfWork,
    quote: Quote,
    actions: list[str],
    event_data: dict[str, dict[str, Any]] | None = None,
    extra_events: Sequence[versioned.Event] = (),
) -> Quote:
    """Writes the changed quote (conditional on the version it was read at) with its events."""
    events = [
        (EVENT + action, {"quoteLocator": quote.locator, **(event_data or {}).get(action, {})}) for action in actions
    ]
    return versioned.save(
        ctx, uow, quote, repository.save, [*events, *extra_events], code=ERRORS.code, noun=ERRORS.noun
    )


def commit(uow: UnitOfWork, quote: Quote, actions: list[str]) -> None:
    """Commits `uow` with the quote's events (the quote itself is already in it)."""
    for action in actions:
        uow.record_event(EVENT + action, {"quoteLocator": quote.locator})
    uow.commit()
