"""Persistence of anonymization: its jobs (`ANONJOB#{locator}`), where each referenced record stands
(`ANONREF#{type}#{locator}`), and the stored records of an account that hold its personal data.

An account's records are read as stored, whatever domain wrote them: the account item, each of its
quotes' and policies' item collections (roots, terms, segments with their element trees, transactions,
static data history; found through the account's GSI1 lists) and its billing partition (payments,
invoices, installments). They are rewritten in place, attribute by attribute, on condition of the
version of those that have one (a concurrent change fails the write with 409 and the job runs again),
in transactions of at most 100 items: a record read again after a crash is replaced again to the same
value, so a rerun finishes what an interrupted one began. An attribute stored as one document (an element tree,
a transaction's charges: storage/codec.py STORED_AS_DOCUMENTS) is read as its plain value, scrubbed as any, and
written again as a document."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from chalicelib.compliance.models import CONTACT_HOLDERS, AnonymizationJob, AnonymizationReference, names_contact
from chalicelib.core import codes
from chalicelib.storage import codec, contact_index, keys, query, table
from chalicelib.storage.keys import Key
from chalicelib.storage.table import MAX_TRANSACTION_ITEMS, WriteOp
from chalicelib.storage.unit_of_work import UnitOfWork
from chalicelib.storage.versioned import rewrite

MARKED = frozenset({"account", "quote", "policy", "transaction", "segment", "term", "payment"})
"""The records that show `anonymizedAt` once their account is anonymized."""


def _scope(tenant: str) -> str:
    return keys.tenant_scope(tenant)


# --- jobs and references ------------------------------------------------------------------------------


def add_job(uow: UnitOfWork, tenant: str, job: AnonymizationJob) -> None:
    uow.add(
        table.put_new(
            {
                **keys.anonymization_job(tenant, job.locator).as_dict(),
                "entity": "anonymizationJob",
                **job.model_dump(mode="json", exclude_none=True),
            }
        )
    )


def save_job(uow: UnitOfWork, tenant: str, job: AnonymizationJob) -> None:
    uow.add(rewrite(keys.anonymization_job(tenant, job.locator), job))


def get_job(tenant: str, locator: str) -> AnonymizationJob | None:
    item = table.gateway().get(_scope(tenant), keys.anonymization_job(tenant, locator))
    return AnonymizationJob.model_validate(codec.without_keys(item)) if item else None


def get_jobs(tenant: str, locators: list[str]) -> list[AnonymizationJob]:
    items = table.gateway().batch_get(_scope(tenant), [keys.anonymization_job(tenant, locator) for locator in locators])
    return [AnonymizationJob.model_validate(codec.without_keys(item)) for item in items]


def get_references(tenant: str, reference_type: str, locators: list[str]) -> dict[str, AnonymizationReference]:
    items = table.gateway().batch_get(
        _scope(tenant), [keys.anonymization_reference(tenant, reference_type, locator) for locator in locators]
    )
    found = [AnonymizationReference.model_validate(codec.without_keys(item)) for item in items]
    return {reference.referenceLocator: reference for reference in found}


def put_reference(uow: UnitOfWork, tenant: str, reference: AnonymizationReference, *, new: bool) -> None:
    """A first reference is written new (409 conflict.concurrent_modification when a concurrent request wrote it:
    its retry answers that request's job), a later one on its version."""
    key = keys.anonymization_reference(tenant, reference.referenceType, reference.referenceLocator)
    if new:
        uow.add(
            table.put_new(
                {
                    **key.as_dict(),
                    "entity": "anonymizationReference",
                    **reference.model_dump(mode="json", exclude_none=True),
                },
                on_exists=lambda: codes.CONCURRENT_MODIFICATION(
                    f"Another request started the anonymization of {reference.referenceType} "
                    f"{reference.referenceLocator} meanwhile; retry to get its job"
                ),
            )
        )
    else:
        uow.add(rewrite(key, reference))


# --- the stored records of an account ----------------------------------------------------------------


def account_records(tenant: str, account: str) -> list[dict[str, Any]]:
    """Every stored record of the account that may hold its personal data (see the module); one Query per
    quote and policy collection (and per MB read)."""
    gateway, scope = table.gateway(), _scope(tenant)
    root = gateway.get(scope, keys.account(tenant, account))
    if root is None:
        return []
    quotes = query.all_items(gateway, scope, keys.account_quotes_index(tenant, account), index="GSI1")
    policies = query.all_items(gateway, scope, keys.account_policies_index(tenant, account), index="GSI1")
    records = [root]
    for item in quotes + policies:
        records += query.all_items(gateway, scope, item["PK"], consistent=True)
    records += query.all_items(gateway, scope, keys.billing_partition(tenant, account), consistent=True)
    return records


def collection_records(tenant: str, quotes: Iterable[str], policies: Iterable[str]) -> list[dict[str, Any]]:
    """Every stored record of the item collections of the quotes and policies named (a quote's or policy's
    root with its terms, segments, transactions and static data history); one Query each (and per MB)."""
    gateway, scope = table.gateway(), _scope(tenant)
    partitions = [keys.quote(tenant, q).pk for q in quotes] + [keys.policy_partition(tenant, p) for p in policies]
    return [item for pk in partitions for item in query.all_items(gateway, scope, pk, consistent=True)]


def payment_record(tenant: str, account: str, payment: str) -> list[dict[str, Any]]:
    """The stored payment (in its account's billing partition), or nothing."""
    key = keys.billing_record(tenant, account, keys.BILLING_PAYMENT_PREFIX, payment)
    item = table.gateway().get(_scope(tenant), key)
    return [item] if item else []


HOLDER_KEYS: dict[str, Callable[[str, str], Key]] = {
    "account": keys.account,
    "quote": keys.quote,
    "quickQuote": keys.quick_quote,
    "policy": keys.policy,
}
"""The root item of each record type that may list contacts (CONTACT_HOLDERS)."""


LISTS: dict[str, Callable[[str], str]] = {
    "account": keys.accounts_index,
    "quote": keys.quotes_index,
    "quickQuote": keys.quick_quotes_index,
    "policy": keys.policies_index,
}
"""The tenant-wide list of each record type that may list contacts, on LISTS_INDEX (accounts, quotes, quick quotes
and policies repositories: each lists every record of its type there)."""
LISTS_INDEX = "GSI2"


def backfill_contact_index(tenant: str) -> dict[str, int]:
    """The contact index entries of every record of the tenant that lists contacts (storage/contact_index.backfill),
    read from each type's tenant-wide list a Query page (1 MB) at a time: for records stored before the index;
    answers the entries written by holder type. A job's work, not a request's."""
    gateway, written = table.gateway(), {}
    for kind, listed in LISTS.items():
        written[kind], start_key = 0, None
        while True:
            batch, start_key = gateway.query(_scope(tenant), listed(tenant), index=LISTS_INDEX, start_key=start_key)
            written[kind] += contact_index.backfill(tenant, kind, batch)
            if start_key is None:
                break
    return written


def contact_holders(tenant: str, contacts: Iterable[str]) -> dict[str, dict[str, list[str]]]:
    """By contact, the locators (by holder type) of the records whose `contacts` list it: the records the contact's
    index names (storage/contact_index.py: one Query a contact), read in one batch and kept where they still list
    it (an entry outlives the contact's removal from its record)."""
    wanted = list(dict.fromkeys(contacts))
    named = {contact: contact_index.holders(tenant, contact) for contact in wanted}
    unique = list(dict.fromkeys(holder for holders in named.values() for holder in holders))
    items = table.gateway().batch_get(_scope(tenant), [HOLDER_KEYS[kind](tenant, locator) for kind, locator in unique])
    by_key = {(item["PK"], item["SK"]): item for item in items}
    found: dict[str, dict[str, list[str]]] = {contact: {kind: [] for kind in CONTACT_HOLDERS} for contact in wanted}
    for contact, holders in named.items():
        for kind, locator in holders:
            key = HOLDER_KEYS[kind](tenant, locator)
            item = by_key.get((key.pk, key.sk))
            if item is not None and names_contact(item, contact) and locator not in found[contact][kind]:
                found[contact][kind].append(locator)
    return found


def forget_contact(tenant: str, contact: str) -> list[WriteOp]:
    """The deletes of the contact's index entries (once no record lists it)."""
    return contact_index.removals(tenant, contact, contact_index.holders(tenant, contact))


def holder_records(tenant: str, holders: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The stored root items of the records named (by holder type)."""
    return table.gateway().batch_get(
        _scope(tenant),
        [HOLDER_KEYS[kind](tenant, locator) for kind, locators in holders.items() for locator in locators],
    )


def replace_records(
    tenant: str,
    records: Iterable[dict[str, Any]],
    replaced: Callable[[dict[str, Any]], Any],
    at: datetime,
    *,
    mark: bool = True,
) -> list[dict[str, Any]]:
    """Rewrite each record whose `replaced` form differs, and (`mark`) mark the MARKED ones not yet marked with
    `anonymizedAt`; answers the records written (as they were read)."""
    ops: list[tuple[dict[str, Any], WriteOp]] = []
    for item in records:
        new = replaced(item)
        changes = {
            name: value for name, value in new.items() if name not in codec.KEY_ATTRIBUTES and item.get(name) != value
        }
        if mark and item.get("entity") in MARKED and item.get("anonymizedAt") is None:
            changes["anonymizedAt"] = at
        if not changes:
            continue
        changes = codec.as_stored(item.get("entity"), changes)  # an element tree stays one document
        version = item.get("version")
        ops.append(
            (
                item,
                table.update(
                    Key(item["PK"], item["SK"]), changes, expected_version=int(version) if version is not None else None
                ),
            )
        )
    for start in range(0, len(ops), MAX_TRANSACTION_ITEMS):
        table.gateway().transact(_scope(tenant), [op for _, op in ops[start : start + MAX_TRANSACTION_ITEMS]])
    return [item for item, _ in ops]
