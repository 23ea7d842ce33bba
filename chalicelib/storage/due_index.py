"""The due index: sparse entries of work that falls due at a moment, per tenant (storage/keys.py).

An entry is `{kind, ref, dueAt, payload}`: `kind` names what runs for it (a `runtime.due_kinds.DueKind`,
whose handler a domain registers with `runtime.due.due_handler`), `ref` the record it is about (a
policy, an account's billing container...). It is one item keyed by (kind, ref), so the domain that owns
the record puts, moves and removes it by that name alone, in the same unit of work as the change that
makes it due (`put`, `remove`: WriteOps for a unit of work). While it exists it sits on GSI3 under
`keys.due_index(tenant)`, sorted by `{dueAt}#{kind}#{ref}`: the tenant's entries due up to a moment, in
time order, are one Query (`page`).

Every put gives the entry a new `token`. The runner settles an entry it ran (`settle`: delete) or moves
it on (`move`) on condition that its token is still the one it read, in the unit of work of the entry's
effect where the handler has one, so a run that lost a race to another (or to a domain that put the
entry again meanwhile) changes nothing. A GSI is read eventually consistently: `page` reads the page's
entries again with one consistent BatchGetItem and answers only those still due where the index saw
them, so an entry just settled or moved is not run again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chalicelib.core import codes
from chalicelib.core.clock import isoformat, parse_datetime
from chalicelib.core.errors import ConcurrentModification
from chalicelib.core.ids import new_locator
from chalicelib.storage import codec, keys, table
from chalicelib.storage.table import WriteOp

INDEX = "GSI3"
ENTITY = "dueEntry"
END_OF_MOMENT = "#\uffff"
"""After every sort key of a moment (`{dueAt}#{kind}#{ref}`): kinds and refs are ASCII."""


@dataclass(frozen=True)
class DueEntry:
    tenant: str
    kind: str
    ref: str
    due_at: datetime
    payload: dict[str, Any] = field(default_factory=dict)
    token: str = ""
    """Changes with every put: a settle or move on condition of it never undoes a later put."""
    attempts: int = 0
    """How many runs of it failed so far (the runner retries a failed entry a few times, then drops it)."""

    @property
    def sort_key(self) -> str:
        return keys.due_sort_key(isoformat(self.due_at), self.kind, self.ref)


@dataclass(frozen=True)
class DuePage:
    entries: list[DueEntry]
    """The page's entries still due where the index saw them, in time order."""
    after: str | None
    """The sort key to continue after, or None: nothing more is due up to the moment asked."""


def put(
    tenant: str, kind: str, ref: str, due_at: datetime, payload: Mapping[str, Any] | None = None, *, attempts: int = 0
) -> WriteOp:
    """The entry (kind, ref) due at `due_at`, whether or not it existed (then: moved, with a new token)."""
    return table.put(_item(tenant, kind, ref, due_at, payload, attempts))


def put_new(tenant: str, kind: str, ref: str, due_at: datetime) -> WriteOp:
    """The entry (kind, ref) due at `due_at`, on condition that there is none (else 409: one was put meanwhile)."""
    return table.put_new(
        _item(tenant, kind, ref, due_at, None, 0),
        lambda: EntryMoved(f"The due entry {kind} {ref} was put meanwhile", codes.CONCURRENT_MODIFICATION),
    )


def remove(tenant: str, kind: str, ref: str) -> WriteOp:
    """No entry (kind, ref), whether or not there was one."""
    return table.delete(keys.due_entry(tenant, kind, ref))


def entry_key(entry: DueEntry) -> keys.Key:
    """The key of the entry's item."""
    return keys.due_entry(entry.tenant, entry.kind, entry.ref)


def settle(entry: DueEntry) -> WriteOp:
    """Deletes the entry, on condition that nobody put it again since it was read (else 409)."""
    params: dict[str, Any] = {"Key": codec.serialize(entry_key(entry).as_dict()), **_same_token(entry)}
    return WriteOp("Delete", params, entry_key(entry), _moved(entry))


def move(
    entry: DueEntry, due_at: datetime, payload: Mapping[str, Any] | None = None, *, attempts: int | None = None
) -> WriteOp:
    """The entry due at `due_at` instead (payload kept unless given), on condition that nobody put it again
    since it was read (else 409)."""
    item = _item(
        entry.tenant,
        entry.kind,
        entry.ref,
        due_at,
        entry.payload if payload is None else payload,
        entry.attempts if attempts is None else attempts,
    )
    return WriteOp(
        "Put",
        {"Item": codec.serialize(item), **_same_token(entry)},
        entry_key(entry),
        _moved(entry),
    )


def written(tenant: str, op: WriteOp) -> DueEntry:
    """The entry as a `put`, `put_new` or `move` writes it (its new token: what a later write in the same
    process, after that one committed, is conditional on)."""
    return _entry(tenant, codec.deserialize(op.params["Item"]))


def get(tenant: str, kind: str, ref: str) -> DueEntry | None:
    item = table.gateway().get(keys.tenant_scope(tenant), keys.due_entry(tenant, kind, ref))
    return _entry(tenant, item) if item else None


def page(tenant: str, until: datetime, *, after: str | None = None, limit: int = 100) -> DuePage:
    """Up to `limit` of the tenant's entries due at or before `until`, in time order, after the sort key
    `after` (None: from the first): one Query of the index, then one consistent BatchGetItem of what it
    found, which drops the entries settled or moved since the index saw them."""
    scope, partition = keys.tenant_scope(tenant), keys.due_index(tenant)
    last = isoformat(until) + END_OF_MOMENT
    if after is None:
        seen, more = table.gateway().query(scope, partition, index=INDEX, sk_to=last, limit=limit)
    else:
        seen, more = table.gateway().query(scope, partition, index=INDEX, sk_after=after, sk_to=last, limit=limit)
    if not seen:
        return DuePage([], None)
    fresh = {
        (item["kind"], item["ref"]): item
        for item in table.gateway().batch_get(
            scope, [keys.due_entry(tenant, item["kind"], item["ref"]) for item in seen]
        )
    }
    entries = []
    for item in seen:
        current = fresh.get((item["kind"], item["ref"]))
        if current is not None and current[f"{INDEX}SK"] == item[f"{INDEX}SK"]:
            entries.append(_entry(tenant, current))
    return DuePage(entries, str(seen[-1][f"{INDEX}SK"]) if more is not None else None)


def _item(
    tenant: str, kind: str, ref: str, due_at: datetime, payload: Mapping[str, Any] | None, attempts: int
) -> dict[str, Any]:
    if "#" in kind or not kind.isascii() or not ref.isascii():
        raise ValueError(f"a due entry's kind and ref are ASCII, the kind without '#': {kind!r}, {ref!r}")
    stamp = isoformat(due_at)
    return {
        **keys.due_entry(tenant, kind, ref).as_dict(),
        "entity": ENTITY,
        f"{INDEX}PK": keys.due_index(tenant),
        f"{INDEX}SK": keys.due_sort_key(stamp, kind, ref),
        "kind": kind,
        "ref": ref,
        "dueAt": stamp,
        "payload": dict(payload or {}),
        "token": new_locator(),
        "attempts": attempts,
    }


def entry_of(tenant: str, item: Mapping[str, Any] | None) -> DueEntry | None:
    """The entry a read of its key found (None: there is none)."""
    return _entry(tenant, dict(item)) if item else None


def _entry(tenant: str, item: dict[str, Any]) -> DueEntry:
    return DueEntry(
        tenant=tenant,
        kind=str(item["kind"]),
        ref=str(item["ref"]),
        due_at=parse_datetime(item["dueAt"]),
        payload=dict(item.get("payload") or {}),
        token=str(item["token"]),
        attempts=int(item.get("attempts") or 0),
    )


def _same_token(entry: DueEntry) -> dict[str, Any]:
    return {
        "ConditionExpression": "#token = :token",
        "ExpressionAttributeNames": {"#token": "token"},
        "ExpressionAttributeValues": {":token": codec.serialize_value(entry.token)},
    }


class EntryMoved(ConcurrentModification):
    """A settle or move found the entry settled or put again since it was read."""


def _moved(entry: DueEntry) -> Any:
    return lambda: EntryMoved(
        f"The due entry {entry.kind} {entry.ref} was settled or moved meanwhile", codes.CONCURRENT_MODIFICATION
    )
