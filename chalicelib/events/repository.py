"""Reads of the event items that every unit of work writes (storage/unit_of_work.py).

An event is `{scope}EVT#{locator}`; GSI1 is the tenant's stream and GSI2 the stream of one event type,
both sorted by `{timestamp}#{locator}` (completion order), or on a test-clock tenant by
`{timestamp}#{committedAt}#{locator}` (business time, then completion order: storage/unit_of_work.py);
GSI3 groups the events of one request.
"""

from __future__ import annotations

from typing import Any

from chalicelib.events.models import Event
from chalicelib.storage import codec, keys, query, table

STREAM_INDEX = "GSI1"
TYPE_INDEX = "GSI2"
REQUEST_INDEX = "GSI3"


def _event(item: dict[str, Any]) -> Event:
    return Event.model_validate(codec.without_keys(item))


def get_event(tenant: str, locator: str) -> Event | None:
    scope = keys.tenant_scope(tenant)
    item = table.gateway().get(scope, keys.event(scope, locator))
    return _event(item) if item else None


def events_of_request(tenant: str, request_id: str) -> list[Event]:
    """In stream order (the events of one request are few: one transaction holds at most 100 items)."""
    scope = keys.tenant_scope(tenant)
    items = query.all_items(table.gateway(), scope, keys.events_by_request(scope, request_id), index=REQUEST_INDEX)
    items.sort(key=lambda item: item[f"{STREAM_INDEX}SK"])
    return [_event(item) for item in items]


def stream(
    tenant: str,
    *,
    event_type: str | None,
    after: str | None,
    until: str | None,
    limit: int,
    committed_before: str | None = None,
) -> tuple[list[Event], str | None]:
    """One Query: up to `limit` events sorted after the position `after` and before `until` (both stream
    sort keys or prefixes of one), of `event_type` when given; with `committed_before`, only those before
    the first one committed at or after it (a position its commit time does not lead with). Answers the
    events and the position of the last one (None when there is none)."""
    if after is not None and until is not None and after >= until:
        return [], None
    scope = keys.tenant_scope(tenant)
    if event_type is None:
        pk, index = keys.events_stream(scope), STREAM_INDEX
    else:
        pk, index = keys.events_by_type(scope, event_type), TYPE_INDEX
    items, _ = table.gateway().query(scope, pk, index=index, sk_after=after, sk_to=until, limit=limit)
    if committed_before is not None:
        late = next(
            (n for n, item in enumerate(items) if str(item.get("committedAt", "")) >= committed_before), len(items)
        )
        items = items[:late]
    last = items[-1][f"{index}SK"] if items else None
    return [_event(item) for item in items], last
