"""Persistence of quick quotes (keys.py, "quotes"): one item `T#{t}#QQTE#{q}`, listed on GSI2
(`T#{t}#QQUOTES`); every change is one conditional write on its `version`.
"""

from __future__ import annotations

from chalicelib.quickquotes.models import QuickQuote
from chalicelib.storage import codec, contact_index, keys, table
from chalicelib.storage.unit_of_work import UnitOfWork

TENANT_INDEX = "GSI2"


def get(tenant: str, locator: str) -> QuickQuote | None:
    item = table.gateway().get(keys.tenant_scope(tenant), keys.quick_quote(tenant, locator))
    return QuickQuote.model_validate(codec.without_keys(item)) if item else None


def add(uow: UnitOfWork, tenant: str, quick: QuickQuote) -> None:
    key = keys.quick_quote(tenant, quick.locator)
    index = {f"{TENANT_INDEX}PK": keys.quick_quotes_index(tenant), f"{TENANT_INDEX}SK": quick.locator}
    exists = "The quick quote already exists"
    uow.add(*contact_index.put_new_holder(tenant, key, "quickQuote", quick, indexes=index, exists=exists))


def save(uow: UnitOfWork, tenant: str, quick: QuickQuote) -> None:
    """Rewrites the quick quote, on condition that it is still at `quick.version` (else 409)."""
    uow.add(*contact_index.rewrite_holder(tenant, keys.quick_quote(tenant, quick.locator), "quickQuote", quick))
