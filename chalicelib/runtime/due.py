"""Due work: what runs when a due entry (storage/due_index.py) falls due, and the one pager that runs a
tenant's due entries up to a moment.

Domains make work due by adding an entry to the unit of work of the change that makes it due
(`schedule(uow, kind, ref, at, payload)`, `cancel(uow, kind, ref)`), and register what runs for a kind
with `@due_handler(kind)` in their job_handlers module (kinds: runtime/due_kinds.py), so the pager never
imports a domain. The pager (`run_step`) is the one code path of both the scheduled due run (one
`due.run` job per tenant every quarter hour, workers/schedules.py) and a test clock's advance
(chalicelib/clock): it pages the tenant's entries due up to a moment, in time order, and runs each at
its own due time: the handler's `CallContext.now` is the entry's due time (a test clock's advance runs an
entry that fell due before the advance began at the moment it began, `floor`, so its time never goes
back).

A handler `fn(ctx, work: DueWork) -> result | None` adds its effect to `work.uow`, a unit of work the
pager commits after it returns together with the entry's settlement: the entry is removed, or moved on
(`work.reschedule(at)`), on condition that nobody put it again since it was read, so the effect of an
entry happens once however many runs race for it (the loser's commit fails and counts as `alreadyDone`).
A handler whose effect commits through other units of work (a service that commits its own) must be
idempotent by itself; when that effect put the entry again (an issue moving a policy's end), the
settlement finds it changed and leaves it. A DomainError of a handler is reported in the run's result and
the entry is tried again RETRY_AFTER later, up to MAX_ATTEMPTS runs, then dropped; any other error
propagates (the job runs again from the start, which repeats nothing settled).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.context import CallContext, IdempotencyClaim
from chalicelib.core.errors import AlreadyExists, ConcurrentModification, DomainError
from chalicelib.runtime import wiring
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.observability import logger
from chalicelib.storage import due_index, keys
from chalicelib.storage.due_index import DueEntry
from chalicelib.storage.unit_of_work import UnitOfWork, idempotency_guard

STEP_ENTRIES = 100
"""Entries one job step runs: well inside the job lease at the slowest handler measured (a renewal)."""
RETRY_AFTER = timedelta(days=1)
MAX_ATTEMPTS = 3
"""Runs of an entry whose handler refused it (a DomainError) before it is dropped."""

__all__ = ["DueEntry", "DueKind", "DueWork", "due_handler", "schedule", "cancel", "entry", "run_step", "bring_forward"]

DueHandler = Callable[[CallContext, "DueWork"], Mapping[str, Any] | None]
_handlers: dict[str, DueHandler] = {}
"""Filled by @due_handler as the job_handlers modules load (chalicelib/workers/handlers.py)."""


def due_handler(kind: DueKind) -> Callable[[DueHandler], DueHandler]:
    """Register `fn(ctx, work) -> result | None` as what runs for due entries of `kind`."""

    def register(fn: DueHandler) -> DueHandler:
        if kind in _handlers and _handlers[kind] is not fn:
            raise ValueError(f"two handlers for due entries of kind {kind}")
        _handlers[kind] = fn
        return fn

    return register


def registered_kinds() -> list[str]:
    return sorted(_handlers)


# --- what domains call ----------------------------------------------------------------------------


def schedule(uow: UnitOfWork, kind: DueKind, ref: str, at: datetime, payload: Mapping[str, Any] | None = None) -> None:
    """Adds to `uow` the entry (kind, ref) due at `at`: put, or moved there if it exists (whatever a run
    made of it before)."""
    uow.add(due_index.put(uow.ctx.tenant, kind, ref, at, payload))


def cancel(uow: UnitOfWork, kind: DueKind, ref: str) -> None:
    """Adds to `uow` the removal of the entry (kind, ref), whether or not it exists."""
    uow.add(due_index.remove(uow.ctx.tenant, kind, ref))


def entry(ctx: CallContext, kind: DueKind, ref: str) -> DueEntry | None:
    """The entry (kind, ref) as stored now (one consistent GetItem)."""
    return due_index.get(ctx.tenant, kind, ref)


def bring_forward(uow: UnitOfWork, kind: DueKind, ref: str, at: datetime, *, put_again: bool = False) -> None:
    """Adds to `uow` the entry (kind, ref) due at `at`, or left at its own time where that is earlier, on
    condition that nobody put, moved or settled it since this read it (one consistent GetItem): writers that
    bring one entry forward at once (two billing containers of an account) never lose each other's time, the
    later commit fails with 409. `put_again`: rewrite it where it stands earlier too (with a new token, so a
    run that read it before this write finds it moved and leaves it)."""
    current = entry(uow.ctx, kind, ref)
    if current is None:
        uow.add(due_index.put_new(uow.ctx.tenant, kind, ref, at))
    elif at < current.due_at or put_again:
        uow.add(due_index.move(current, min(at, current.due_at), attempts=0))


def entry_key(ctx: CallContext, kind: DueKind, ref: str) -> tuple[str, str]:
    """The (PK, SK) of the entry (kind, ref), for a caller that reads it with other records (`entry_of`)."""
    key = keys.due_entry(ctx.tenant, kind, ref)
    return key.pk, key.sk


def entry_of(ctx: CallContext, item: Mapping[str, Any] | None) -> DueEntry | None:
    """The entry as a read of its key (`entry_key`) found it."""
    return due_index.entry_of(ctx.tenant, item)


def bring_forward_from(
    uow: UnitOfWork, current: DueEntry | None, kind: DueKind, ref: str, at: datetime, *, put_again: bool = False
) -> DueEntry | None:
    """`bring_forward` of the entry as the caller read it (`current`: None when there was none), on condition
    that it is still as read where it is rewritten (`put_again` as for `bring_forward`). Answers the entry as
    `uow` leaves it once it commits."""
    if current is None:
        op = due_index.put_new(uow.ctx.tenant, kind, ref, at)
    elif at < current.due_at or put_again:
        op = due_index.move(current, min(at, current.due_at), attempts=0)
    else:
        return current
    uow.add(op)
    return due_index.written(uow.ctx.tenant, op)


# --- what a handler is given --------------------------------------------------------------------------


@dataclass
class Batch:
    """What the handlers of one batch (the entries due at one moment, run together) share: its entries (to
    read together what they need), and a place to keep what they read."""

    entries: list[DueEntry]
    shared: dict[str, Any] = field(default_factory=dict)


class _EffectsCounted:
    """The unit of work of an entry's effect, counting what the handler adds to it (the pager tells an
    effect that did not commit from a settlement alone that found the entry changed)."""

    def __init__(self, inner: UnitOfWork):
        self._inner = inner
        self.ctx = inner.ctx
        self.effects = 0

    def add(self, *ops: Any) -> None:
        self.effects += len(ops)
        self._inner.add(*ops)

    def after_commit(self, action: Callable[[], object]) -> None:
        self._inner.after_commit(action)

    def after_failure(self, action: Callable[[], object]) -> None:
        self._inner.after_failure(action)

    def claim(self, op: Any) -> None:
        self._inner.claim(op)

    def record_event(self, event_type: str, data: dict[str, Any]) -> None:
        self.effects += 1
        self._inner.record_event(event_type, data)

    def commit(self) -> list[dict[str, Any]]:
        return self._inner.commit()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class DueWork:
    """One entry being run: the entry, the unit of work its effect goes in (the pager commits it with the
    entry's settlement), and the batch it runs in."""

    def __init__(self, entry: DueEntry, uow: UnitOfWork, batch: Batch):
        self.entry = entry
        self.uow: UnitOfWork = _EffectsCounted(uow)
        self.batch = batch
        self._next: tuple[datetime, Mapping[str, Any] | None] | None = None

    @property
    def shared(self) -> dict[str, Any]:
        """Shared by the handlers of the entries of one batch (e.g. records read for all of them at once)."""
        return self.batch.shared

    def of_batch(self) -> list[DueEntry]:
        """The entries of this entry's kind in its batch (itself included)."""
        return [other for other in self.batch.entries if other.kind == self.entry.kind]

    def reschedule(self, at: datetime, payload: Mapping[str, Any] | None = None) -> None:
        """Move the entry to `at` (after its due time) instead of removing it; `payload` replaces its own."""
        if at <= self.entry.due_at:
            raise ValueError(
                f"an entry moves only forward: {isoformat(at)} is not after {isoformat(self.entry.due_at)}"
            )
        self._next = (at, payload)

    def guard(self, claim: IdempotencyClaim) -> None:
        """Adds to `uow` the idempotency guard item of `claim` (for the context's user), put on condition that
        there is none: an effect done once, by a run that read the entry before another moved it on, fails
        with 409 `conflict.already_exists` (counted as already done)."""
        self.uow.add(
            idempotency_guard(
                keys.tenant_scope(self.uow.ctx.tenant), self.uow.ctx.user_locator, claim, wiring.clock().now()
            )
        )

    def effects(self) -> int:
        """How many writes and events the handler added to `uow`."""
        return self.uow.effects if isinstance(self.uow, _EffectsCounted) else 0

    def settle(self) -> None:
        """Add the entry's settlement to the unit of work (the pager does, once the handler returned):
        removed, or moved where the handler said, on condition that nobody put it again meanwhile (an
        effect that put it again, such as an issue moving a policy's end, wins). When the effect's own write
        puts the entry again (an issue in `uow` moving the policy's end), that put is made conditional on the
        entry as read instead (`UnitOfWork.claim`: one write names the entry once, and a run that lost the race
        for it changes nothing)."""
        if self._next is None:
            self.uow.claim(due_index.settle(self.entry))
        else:
            at, payload = self._next
            self.uow.claim(due_index.move(self.entry, at, payload, attempts=0))


# --- the pager ------------------------------------------------------------------------------------------


@dataclass
class DueStep:
    result: dict[str, Any]
    """What the step did: `entries` run, `alreadyDone`, `failed` (with their codes), and what the handlers
    answered, summed (numbers) and joined (lists)."""
    more: bool
    """The step stopped at its limit: more may be due up to the moment it runs to."""
    last_run_at: datetime | None
    """The business time of the last entry the step ran."""


@dataclass
class _Outcome:
    merged: dict[str, Any] = field(default_factory=lambda: {"entries": 0, "alreadyDone": 0, "failed": []})

    def add(self, answer: Mapping[str, Any] | None) -> None:
        """Numbers summed, lists joined, anything else the latest."""
        for name, value in (answer or {}).items():
            known = self.merged.get(name)
            if isinstance(value, int | Decimal) and not isinstance(value, bool) and isinstance(known, int | Decimal):
                self.merged[name] = known + value
            elif isinstance(value, list) and isinstance(known, list):
                self.merged[name] = known + value
            else:
                self.merged[name] = list(value) if isinstance(value, list) else value

    def result(self) -> dict[str, Any]:
        return dict(self.merged)


def run_step(ctx: CallContext, until: datetime, *, floor: datetime | None = None, limit: int | None = None) -> DueStep:
    """Runs up to `limit` (STEP_ENTRIES) of the tenant's entries due at or before `until`, in time order,
    each at its own due time (not before `floor`). It reads the earliest entries (one Query of the index
    and one consistent BatchGetItem), runs those due at the earliest moment together (a batch), and reads
    again from the start: what a batch settled is gone, what it moved or put (an entry moved to the
    renewal's next step, a billing entry an issue put) is read in its place, so the entries run in time
    order however the handlers change the index. Per entry: what its handler does, and one commit of its
    unit of work."""
    limit = limit or STEP_ENTRIES
    outcome = _Outcome()
    ran, skip_after, last_run_at = 0, None, None
    while ran < limit:
        page = due_index.page(ctx.tenant, until, after=skip_after, limit=limit - ran)
        if not page.entries:
            if page.after is None:
                return DueStep(outcome.result(), False, last_run_at)
            skip_after = page.after  # the index still shows entries just settled: read past them
            continue
        moment = page.entries[0].due_at
        batch = Batch([found for found in page.entries if found.due_at == moment])
        at = max(moment, floor) if floor is not None else moment
        for found in batch.entries:
            _run_entry(replace(ctx, now=at), found, batch, outcome)
        ran += len(batch.entries)
        last_run_at, skip_after = at, None
    return DueStep(outcome.result(), True, last_run_at)


def _run_entry(ctx: CallContext, found: DueEntry, batch: Batch, outcome: _Outcome) -> None:
    outcome.add({"entries": 1})
    work = DueWork(found, wiring.unit_of_work(ctx), batch)
    try:
        handler = _handlers.get(found.kind)
        if handler is None:
            raise codes.DUE_UNKNOWN_KIND(f"no handler for due entries of kind {found.kind}")
        answer = handler(ctx, work)
        effects = work.effects()
        work.settle()
        try:
            work.uow.commit()
        except due_index.EntryMoved:
            if effects:
                raise  # the effect did not commit either: another run got there first
            # the handler's own commits put the entry again (an issue moved the policy's end): that stands
    except (ConcurrentModification, AlreadyExists):
        outcome.add({"alreadyDone": 1})  # another run settled or moved it, or did its effect first
        # if nothing moved the entry, the conflict is its own (a record its handler keeps meeting): read from the
        # start again, it would run again at once, in this step and every next one; it waits RETRY_AFTER instead
        _retry_later(ctx, found)
        return
    except DomainError as error:
        outcome.add(
            {
                "failed": [
                    {
                        "kind": found.kind,
                        "ref": found.ref,
                        "dueAt": isoformat(found.due_at),
                        "code": error.code,
                        "message": error.message,
                    }
                ]
            }
        )
        _retry_later(ctx, found)
        return
    outcome.add(answer)


def _retry_later(ctx: CallContext, found: DueEntry) -> None:
    """The entry RETRY_AFTER later, or dropped after MAX_ATTEMPTS (a failed run changed nothing else)."""
    uow = wiring.unit_of_work(ctx)
    attempts = found.attempts + 1
    if attempts >= MAX_ATTEMPTS:
        logger().warning("due entry dropped after its last attempt", extra={"kind": found.kind, "ref": found.ref})
        uow.add(due_index.settle(found))
    else:
        uow.add(due_index.move(found, found.due_at + RETRY_AFTER, attempts=attempts))
    try:
        uow.commit()
    except ConcurrentModification:
        pass  # put again meanwhile: the new entry stands
