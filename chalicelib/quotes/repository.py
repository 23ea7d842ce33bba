"""Persistence of quotes (keys.py, "quotes").

A quote is one item `T#{t}#QTE#{q}` / `#ROOT` holding its element tree, charges and flags, so reading
a quote is one GetItem and every change is one conditional write on its `version`. It is listed on
GSI2 (`T#{t}#QUOTES`, by locator: creation order) and on GSI1 under its account
(`T#{t}#ACC#{a}#QTES`). Its static data history items share its partition (`STATIC#{locator}`).
"""

from __future__ import annotations

from typing import Any

from chalicelib.core.paging import Page, PageRequest
from chalicelib.priceable.models import StaticDataVersion
from chalicelib.quotes.models import Quote
from chalicelib.storage import codec, contact_index, keys, query, table
from chalicelib.storage.unit_of_work import UnitOfWork

ACCOUNT_INDEX = "GSI1"
TENANT_INDEX = "GSI2"


def _quote(item: dict[str, Any]) -> Quote:
    return Quote.model_validate(codec.without_keys(item))


def get(tenant: str, locator: str) -> Quote | None:
    item = table.gateway().get(keys.tenant_scope(tenant), keys.quote(tenant, locator))
    return _quote(item) if item else None


def quotes(tenant: str, locators: list[str]) -> dict[str, Quote]:
    """The existing ones of the given quotes, by locator (one BatchGetItem per 100)."""
    items = table.gateway().batch_get(keys.tenant_scope(tenant), [keys.quote(tenant, locator) for locator in locators])
    return {quote.locator: quote for quote in (_quote(item) for item in items)}


def list_quotes(tenant: str, page: PageRequest) -> Page[Quote]:
    return _listed(tenant, keys.quotes_index(tenant), TENANT_INDEX, page)


def list_account_quotes(tenant: str, account_locator: str, page: PageRequest) -> Page[Quote]:
    return _listed(tenant, keys.account_quotes_index(tenant, account_locator), ACCOUNT_INDEX, page)


def _listed(tenant: str, partition: str, index: str, page: PageRequest) -> Page[Quote]:
    found = query.page(table.gateway(), keys.tenant_scope(tenant), partition, page, index=index)
    return Page([_quote(item) for item in found.items], found.list_completed)


def _indexes(tenant: str, quote: Quote) -> dict[str, str]:
    return {
        f"{ACCOUNT_INDEX}PK": keys.account_quotes_index(tenant, quote.accountLocator),
        f"{ACCOUNT_INDEX}SK": quote.locator,
        f"{TENANT_INDEX}PK": keys.quotes_index(tenant),
        f"{TENANT_INDEX}SK": quote.locator,
    }


def add(uow: UnitOfWork, tenant: str, quote: Quote) -> None:
    uow.add(
        *contact_index.put_new_holder(
            tenant,
            keys.quote(tenant, quote.locator),
            "quote",
            quote,
            indexes=_indexes(tenant, quote),
            exists="The quote already exists",
        )
    )


def save(uow: UnitOfWork, tenant: str, quote: Quote) -> None:
    """Rewrites the quote, on condition that it is still at `quote.version` (else 409)."""
    key = keys.quote(tenant, quote.locator)
    uow.add(*contact_index.rewrite_holder(tenant, key, "quote", quote, extra=_indexes(tenant, quote)))


def add_static_history(uow: UnitOfWork, tenant: str, quote_locator: str, entry: StaticDataVersion) -> None:
    uow.add(
        table.put_new(
            {
                **keys.quote_static_history(tenant, quote_locator, entry.historyLocator).as_dict(),
                "entity": "quoteStaticHistory",
                **entry.model_dump(),
            }
        )
    )


def static_history(tenant: str, quote_locator: str, page: PageRequest) -> Page[StaticDataVersion]:
    found = query.page(
        table.gateway(),
        keys.tenant_scope(tenant),
        keys.quote(tenant, quote_locator).pk,
        page,
        sk_prefix=keys.QUOTE_STATIC_HISTORY_PREFIX,
    )
    return Page(
        [StaticDataVersion.model_validate(codec.without_keys(item)) for item in found.items], found.list_completed
    )
