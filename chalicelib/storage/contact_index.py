"""Which records list a contact, by the contact: one item per (contact, record) in the contact's partition
(keys.contact_holders), `{holder type}#{locator}` its sort key, put with every write of an account, quote, quick
quote or policy root that lists contacts, in the same unit of work (a plain put: writing it again changes
nothing). An entry outlives the contact's removal from its record (no write knows the contacts before it), so
a reader checks the record itself; anonymizing the contact deletes its entries. Records stored before the
index existed (stop 41) have none until `backfill` writes them (compliance's contact index backfill job)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from chalicelib.storage import keys, query, table
from chalicelib.storage.table import WriteOp


class _Listed(Protocol):
    @property
    def contactLocator(self) -> str: ...


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
