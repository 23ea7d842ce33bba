"""Which records list a contact, by the contact: one item per (contact, record) in the contact's partition
(keys.contact_holders), `{holder type}#{locator}` its sort key, put with every write of an account, quote, quick
quote or policy root that lists contacts, in the same unit of work (a plain put: writing it again changes
nothing). An entry outlives the contact's removal from its record (no write knows the contacts before it), so
a reader checks the record itself; anonymizing the contact deletes its entries. Records stored before the
index existed (stop 41) have none until `backfill` writes them (compliance's contact index backfill job)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from chalicelib.core import codes
from chalicelib.storage import keys, query, table, versioned
from chalicelib.storage.table import WriteOp


class _Listed(Protocol):
    @property
    def contactLocator(self) -> str: ...


class _Holder(Protocol):
    """A record that lists contacts: an account, quote, quick quote or policy root."""

    locator: str
    version: int

    @property
    def contacts(self) -> Sequence[_Listed]: ...

    def model_dump(self, *, exclude: set[str]) -> dict[str, Any]: ...


def put_new_holder(
    tenant: str,
    key: keys.Key,
    holder_type: str,
    record: _Holder,
    *,
    indexes: Mapping[str, Any],
    exists: str,
    exclude: Iterable[str] = (),
) -> list[WriteOp]:
    """The put of a new record that lists contacts, its `entity` the holder type and `indexes` (its index
    keys) beside its fields (409 `exists` when its key is taken), and its contacts' entries."""
    return [
        table.put_new(
            {**key.as_dict(), "entity": holder_type, **indexes, **record.model_dump(exclude=set(exclude))},
            lambda: codes.CONFLICT_ALREADY_EXISTS(exists),
        ),
        *entries(tenant, holder_type, record.locator, record.contacts),
    ]


def rewrite_holder(
    tenant: str,
    key: keys.Key,
    holder_type: str,
    record: _Holder,
    *,
    exclude: Iterable[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> list[WriteOp]:
    """The rewrite of a record that lists contacts (versioned.rewrite: 409 when it is no longer at its
    `version`), and its contacts' entries."""
    return [
        versioned.rewrite(key, record, exclude=exclude, extra=extra),
        *entries(tenant, holder_type, record.locator, record.contacts),
    ]


def entries(tenant: str, holder_type: str, holder_locator: str, contacts: Iterable[_Listed]) -> list[WriteOp]:
    """The puts naming the record in the partition of each contact it lists (none for a record with none)."""
    return [
        table.put(_entry(tenant, contact, holder_type, holder_locator))
        for contact in dict.fromkeys(contact.contactLocator for contact in contacts)
    ]


def _entry(tenant: str, contact: str, holder_type: str, holder_locator: str) -> dict[str, str]:
    return {
        **keys.contact_holder(tenant, contact, holder_type, holder_locator).as_dict(),
        "entity": "contactHolder",
        "holderType": holder_type,
        "holderLocator": holder_locator,
    }


def backfill(tenant: str, holder_type: str, records: Iterable[Mapping[str, Any]]) -> int:
    """Writes the entries of stored records (as read: `locator`, `contacts`) of one holder type, unconditional
    puts in BatchWriteItems (an entry there already is written again, unchanged); answers how many."""
    written = [
        _entry(tenant, contact, holder_type, str(record["locator"]))
        for record in records
        for contact in dict.fromkeys(
            str(listed["contactLocator"])
            for listed in (record.get("contacts") or [])
            if isinstance(listed, Mapping) and listed.get("contactLocator")
        )
    ]
    if written:
        table.gateway().batch_write(keys.tenant_scope(tenant), written)
    return len(written)


def holders(tenant: str, contact: str) -> list[tuple[str, str]]:
    """(holder type, locator) of each record that listed the contact when it was last written; one Query (and
    one per MB more)."""
    found = query.all_items(
        table.gateway(), keys.tenant_scope(tenant), keys.contact_holders(tenant, contact), consistent=True
    )
    return [(item["holderType"], item["holderLocator"]) for item in found]


def removals(tenant: str, contact: str, named: Iterable[tuple[str, str]]) -> list[WriteOp]:
    """The deletes of the contact's entries naming those records."""
    return [table.delete(keys.contact_holder(tenant, contact, kind, locator)) for kind, locator in named]
