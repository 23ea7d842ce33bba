"""What the engine reads of storage for plugins: the items of the schedules of the subject's elements
(storage/keys.py, "schedules"; the schedules domain writes them). An item shows in its latest version
whose write committed (its commit record exists), unless that version deletes it."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chalicelib.storage import keys, query, table


def schedule_items(tenant: str, kind: str, locator: str,
                   static_locators: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """`{staticElementLocator: [{"locator", "data"}, ...]}` by item locator: one Query (per MB) of each
    schedule and one BatchGetItem (per hundred) of the commit records its items name."""
    scope = keys.tenant_scope(tenant)
    found: dict[str, list[dict[str, Any]]] = {}
    for static in static_locators:
        partition = keys.schedule_partition(tenant, kind, locator, static)
        records = query.all_items(table.gateway(), scope, partition, sk_prefix=keys.SCHEDULE_ITEM_PREFIX,
                                  consistent=True)
        tokens = {str(version["token"]) for record in records for version in record.get("versions") or []}
        committed = {str(record["token"]) for record in table.gateway().batch_get(
            scope, [keys.schedule_commit(partition, token) for token in tokens])} if tokens else set()
        found[static] = [{"locator": record["locator"], "data": shown["data"]} for record in records
                         if (shown := _shown(record, committed)) is not None]
    return found


def _shown(record: dict[str, Any], committed: set[str]) -> dict[str, Any] | None:
    current = next((version for version in reversed(record.get("versions") or [])
                    if version["token"] in committed), None)
    return None if current is None or current.get("deleted") else current
