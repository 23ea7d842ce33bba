"""A quote's static data: changed in any state but discarded, each change kept in its history."""

from __future__ import annotations

from typing import Any

from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.ids import new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.priceable import elements
from chalicelib.priceable.models import StaticDataVersion
from chalicelib.quotes import repository
from chalicelib.quotes.models import Quote, QuoteState
from chalicelib.quotes.records import get_quote, save
from chalicelib.runtime import wiring


def static_history(ctx: CallContext, locator: str, page: PageRequest) -> Page[StaticDataVersion]:
    get_quote(ctx, locator)
    return repository.static_history(ctx.tenant, locator, page)


def add_static(ctx: CallContext, locator: str, values: dict[str, Any]) -> Quote:
    quote = get_quote(ctx, locator)
    return _change_static(ctx, quote, {**quote.static, **values}, "add")


def replace_static(ctx: CallContext, locator: str, values: dict[str, Any]) -> Quote:
    return _change_static(ctx, get_quote(ctx, locator), values, "replace")


def update_static(ctx: CallContext, locator: str, set_data: dict[str, Any], remove_data: dict[str, Any]) -> Quote:
    quote = get_quote(ctx, locator)
    return _change_static(ctx, quote, elements.merged(quote.static, remove_data, set_data), "update")


def _change_static(ctx: CallContext, quote: Quote, static: dict[str, Any], action: str) -> Quote:
    """Static data changes in any state but discarded; each change is kept in the history."""
    if quote.quoteState == QuoteState.DISCARDED:
        raise codes.INVALID_STATE["quote"]("A discarded quote's static data cannot change")
    held = next((h for h in quote.entityHolds if h.staticData), None)
    if held is not None:
        raise codes.QUOTE_HELD(f"Hold {held.holdLocator} keeps quote {quote.locator}'s static data as it is")
    uow = wiring.unit_of_work(ctx)
    repository.add_static_history(
        uow,
        ctx.tenant,
        quote.locator,
        StaticDataVersion(
            historyLocator=new_locator(), staticData=static, updatedBy=ctx.user_locator, updatedAt=ctx.now
        ),
    )
    return save(ctx, uow, quote.model_copy(update={"static": static}), [f"staticdata.{action}"])
