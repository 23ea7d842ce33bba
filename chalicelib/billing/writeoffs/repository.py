"""Persistence of write-offs: the record in its account's billing partition (storage/keys.py
BILLING_WRITEOFF_PREFIX), its alias (billing/repository.py reads by locator through it) and its
references in the account's and the tenant's lists of write-offs, in creation order.

A write-off of more than INLINE_AMOUNTS items (a fleet's invoice: 5,000 or 10,000) keeps none of its item amounts on
its record: each allocation its `total`, the record the count of the pages (`amountPages`, keys.billing_writeoff_page)
that hold the amounts in order, written once with it in its write; what its reversals gave back is not stored item by
item but follows from its `reversedAmount` (allocation.given_back), so a reversal rewrites the record alone. `get` and
`get_many` read the pages back (one Query per MB of them), lists (`page`) do not: their answers show no item amounts.
A write-off of up to INLINE_AMOUNTS items is stored as before, byte for byte."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from chalicelib.billing import repository as billing
from chalicelib.billing.writeoffs import allocation
from chalicelib.billing.writeoffs.models import WriteOff
from chalicelib.core import records
from chalicelib.core.paging import Page, PageRequest
from chalicelib.storage import keys, query, table
from chalicelib.storage.unit_of_work import UnitOfWork

KIND = "writeOff"
LIST = "WOFF"
INLINE_AMOUNTS = 1_000
"""The most item amounts a write-off's record holds (as an application's, invoices/repository.py
APPLICATION_INLINE_AMOUNTS): one of more keeps them in pages beside it."""
PAGE_BYTES = 96_000
"""What one page of a write-off's item amounts holds at most, as JSON."""


def get(tenant: str, locator: str) -> WriteOff | None:
    found = billing.get(tenant, KIND, locator, WriteOff)
    return _with_amounts(tenant, found) if found is not None else None


def _key(tenant: str, record: WriteOff) -> keys.Key:
    return keys.billing_record(tenant, record.accountLocator, keys.BILLING_WRITEOFF_PREFIX, record.locator)


def _paged(record: WriteOff) -> bool:
    return record.amountPages is not None or sum(len(a.itemAmounts) for a in record.allocations) > INLINE_AMOUNTS


def _pages(record: WriteOff) -> list[str]:
    """The allocations' item amounts as JSON lists of [invoice, item, amount as text] (exact), in order, each of at
    most PAGE_BYTES."""
    entries = (
        json.dumps([each.invoiceLocator, item, str(amount)])
        for each in record.allocations
        for item, amount in each.itemAmounts.items()
    )
    return ["[" + ",".join(page) + "]" for page in records.packed(entries, len, PAGE_BYTES)]


def _stripped(record: WriteOff, pages: int | None = None) -> WriteOff:
    """The paged record as stored: its allocations without item amounts, each with its total."""
    return record.model_copy(
        update={
            "amountPages": record.amountPages if pages is None else pages,
            "allocations": [
                a.model_copy(update={"itemAmounts": {}, "reversedItemAmounts": {}, "total": a.amount})
                for a in record.allocations
            ],
        }
    )


def _with_amounts(tenant: str, record: WriteOff) -> WriteOff:
    """The write-off with its item amounts read from its pages when its record holds none (one Query per MB), and
    what its reversals gave back of each."""
    if not record.amountPages:
        return record
    prefix = keys.billing_writeoff_pages(tenant, record.accountLocator, record.locator)
    pages = query.all_items(table.gateway(), billing.scope(tenant), prefix.pk, sk_prefix=prefix.sk, consistent=True)
    amounts: dict[str, dict[str, Decimal]] = {}
    for page in pages[: record.amountPages]:
        for invoice, item, amount in json.loads(page["itemAmounts"]):
            amounts.setdefault(invoice, {})[item] = Decimal(amount)
    whole = record.model_copy(
        update={
            "allocations": [
                a.model_copy(update={"itemAmounts": amounts.get(a.invoiceLocator, {}), "total": None})
                for a in record.allocations
            ]
        }
    )
    allocation.given_back(whole.allocations, whole.reversedAmount)
    return whole


def add(uow: UnitOfWork, tenant: str, record: WriteOff) -> None:
    """The new write-off, its alias and references, and its pages of item amounts when it has more than its record
    holds (in the same write: a few puts of at most PAGE_BYTES)."""
    account = record.accountLocator
    pages = _pages(record) if _paged(record) else []
    uow.add(
        *[
            table.put_new(
                {
                    **keys.billing_writeoff_page(tenant, account, record.locator, number).as_dict(),
                    "entity": "writeOffPage",
                    "writeOffLocator": record.locator,
                    "itemAmounts": page,
                }
            )
            for number, page in enumerate(pages)
        ],
        table.put_new(
            {
                **_key(tenant, record).as_dict(),
                "entity": KIND,
                **(_stripped(record, len(pages)) if pages else record).model_dump(exclude_none=True),
            }
        ),
        table.put_new(
            {
                **keys.billing_alias(tenant, record.locator).as_dict(),
                "entity": "billingAlias",
                "kind": KIND,
                "accountLocator": account,
            }
        ),
        *[
            table.put(
                {
                    **keys.billing_ref(tenant, owner_kind, owner, LIST, record.locator).as_dict(),
                    "entity": "billingRef",
                    "kind": KIND,
                    "locator": record.locator,
                    "accountLocator": account,
                }
            )
            for owner_kind, owner in (("account", account), ("tenant", tenant))
        ],
    )


def save(uow: UnitOfWork, tenant: str, record: WriteOff) -> None:
    """Rewrite a changed write-off, conditional on the version it was read at (paged, its record alone: its pages
    never change)."""
    exclude: Any = {"locator": True, "version": True}
    if _paged(record):
        record = _stripped(record)
    else:
        exclude |= {"amountPages": True, "allocations": {"__all__": {"total"}}}
    fields = record.model_dump(exclude=exclude)
    uow.add(
        table.update(
            _key(tenant, record),
            {k: v for k, v in fields.items() if v is not None},
            remove=[k for k, v in fields.items() if v is None],
            expected_version=record.version,
        )
    )


def get_many(tenant: str, account: str, locators: list[str]) -> list[WriteOff]:
    return [_with_amounts(tenant, r) for r in billing.get_many(tenant, account, KIND, locators, WriteOff)]


def page(tenant: str, account: str | None, request: PageRequest) -> Page[WriteOff]:
    """The write-offs of the account (or of the tenant), oldest first."""
    owner_kind, owner = ("account", account) if account else ("tenant", tenant)
    return billing.page_of(tenant, owner_kind, owner, LIST, KIND, WriteOff, request)
