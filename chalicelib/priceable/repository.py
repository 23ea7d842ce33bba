"""What the engine reads of storage for plugins: the items of the schedules of the subject's elements
(storage/keys.py, "schedules"; the schedules domain writes them). An item shows in its latest version
whose write committed (its commit record exists), unless that version deletes it. A transaction's
schedule not written yet shows its base's, as schedules/service.py `_source` says."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chalicelib.priceable.subject import ScheduleOwner
from chalicelib.storage import keys, query, table

RENEWAL = "renewal"


def schedule_items(
    tenant: str, owners: tuple[ScheduleOwner, ...], scheduled: Iterable[tuple[str, bool]]
) -> dict[str, list[dict[str, Any]]]:
    """`{staticElementLocator: [{"locator", "data"}, ...]}` by item locator for each `(static locator,
    resetOnRenewal)` of `scheduled`: the schedule of the first of `owners` written to (a quote's
    always counts), none past a renewal of a schedule that resets. One GetItem per transaction passed,
    one Query (per MB) of the schedule read and one BatchGetItem (per hundred) of its commit records."""
    scope = keys.tenant_scope(tenant)
    found: dict[str, list[dict[str, Any]]] = {}
    for static, resets in scheduled:
        found[static] = []
        for owner in owners:
            partition = keys.schedule_partition(tenant, owner.kind, owner.locator, static)
            root = table.gateway().get(scope, keys.schedule_root(partition)) if owner.kind == "transaction" else None
            if owner.kind == "quote" or (root and root.get("owned")):
                found[static] = _visible(scope, partition)
                break
            if owner.category == RENEWAL and resets:
                break
    return found


def _visible(scope: str, partition: str) -> list[dict[str, Any]]:
    records = query.all_items(table.gateway(), scope, partition, sk_prefix=keys.SCHEDULE_ITEM_PREFIX, consistent=True)
    tokens = {str(version["token"]) for record in records for version in record.get("versions") or []}
    committed = (
        {
            str(record["token"])
            for record in table.gateway().batch_get(scope, [keys.schedule_commit(partition, token) for token in tokens])
        }
        if tokens
        else set()
    )
    return [
        {"locator": record["locator"], "data": shown["data"]}
        for record in records
        if (shown := _shown(record, committed)) is not None
    ]


def _shown(record: dict[str, Any], committed: set[str]) -> dict[str, Any] | None:
    current = next(
        (version for version in reversed(record.get("versions") or []) if version["token"] in committed), None
    )
    return None if current is None or current.get("deleted") else current
