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
idempotent by itself; it calls `work.handled()` when that effect put or removed the entry already. A
DomainError of a handler is reported in the run's result and the entry is tried again RETRY_AFTER later,
up to MAX_ATTEMPTS runs, then dropped; any other error propagates (the job runs again from the start,
which repeats nothing settled).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.context import CallContext
from chalicelib.core.errors import AlreadyExists, ConcurrentModification, DomainError
from chalicelib.runtime import wiring
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.observability import logger
from chalicelib.storage import due_index
from chalicelib.storage.due_index import DueEntry
from chalicelib.storage.unit_of_work import UnitOfWork

STEP_ENTRIES = 100
"""Entries one job step runs: well inside the job lease at the slowest handler measured (a renewal)."""
RETRY_AFTER = timedelta(days=1)
MAX_ATTEMPTS = 3
"""Runs of an entry whose handler refused it (a DomainError) before it is dropped."""
MAX_SWEEPS = 3
"""Times a run goes back to the start for entries put behind its cursor while it ran (the next run takes
what is left)."""

__all__ = ["DueEntry", "DueKind", "DueWork", "due_handler", "schedule", "cancel", "entry", "run_step"]

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


# --- what a handler is given --------------------------------------------------------------------------


@dataclass
class PageState:
    """What the handlers of one page share: its entries (to read together what they need), and a place to
    keep what they read."""

    entries: list[DueEntry]
    shared: dict[str, Any] = field(default_factory=dict)


class DueWork:
    """One entry being run: the entry, the unit of work its effect goes in (the pager commits it with the
    entry's settlement), and the page it came in."""

    def __init__(self, entry: DueEntry, uow: UnitOfWork, page: PageState):
        self.entry = entry
        self.uow = uow
        self.page = page
        self._settlement: Literal["settle", "move", "handled"] = "settle"
        self._next: tuple[datetime, Mapping[str, Any] | None] | None = None

    @property
    def shared(self) -> dict[str, Any]:
        """Shared by the handlers of the entries of one page (e.g. records read for the whole page at once)."""
        return self.page.shared

    def of_page(self) -> list[DueEntry]:
        """The entries of this entry's kind in its page, in time order (itself included)."""
        return [other for other in self.page.entries if other.kind == self.entry.kind]

    def reschedule(self, at: datetime, payload: Mapping[str, Any] | None = None) -> None:
        """Move the entry to `at` (after its due time) instead of removing it; `payload` replaces its own."""
        if at <= self.entry.due_at:
            raise ValueError(f"an entry moves only forward: {isoformat(at)} is not after {isoformat(self.entry.due_at)}")
        self._settlement, self._next = "move", (at, payload)

    def handled(self) -> None:
        """The handler's effect put or removed the entry itself (in a unit of work of its own): leave it."""
        self._settlement = "handled"

    def settle(self) -> None:
        """Add the entry's settlement to the unit of work (the pager does, once the handler returned)."""
        if self._settlement == "settle":
            self.uow.add(due_index.settle(self.entry))
        elif self._settlement == "move":
            assert self._next is not None
            at, payload = self._next
            self.uow.add(due_index.move(self.entry, at, payload, attempts=0))


# --- the pager ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cursor:
    """Where a run goes on: after the sort key `after` (None: from the start), on its `sweep`th pass."""

    after: str | None = None
    sweep: int = 0


@dataclass
class DueStep:
    result: dict[str, Any]
    """What the step did: `entries` run, `alreadyDone`, `failed` (with their codes), and what the handlers
    answered, summed (numbers) and joined (lists)."""
    next: Cursor | None
    """Where the run goes on, or None: nothing more is due up to the moment it runs to."""
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


def run_step(ctx: CallContext, until: datetime, cursor: Cursor = Cursor(), *, floor: datetime | None = None,
             limit: int = STEP_ENTRIES) -> DueStep:
    """Runs one page (up to `limit`) of the tenant's entries due at or before `until`, after `cursor`, in
    time order, each at its own due time (not before `floor`). One Query and one BatchGetItem for the
    page, then per entry what its handler does and one commit of its unit of work."""
    page = due_index.page(ctx.tenant, until, after=cursor.after, limit=limit)
    state = PageState(page.entries)
    outcome = _Outcome()
    last_run_at = None
    for found in page.entries:
        at = max(found.due_at, floor) if floor is not None else found.due_at
        _run_entry(replace(ctx, now=at), found, state, outcome)
        last_run_at = at
    if page.after is not None:
        follow: Cursor | None = Cursor(page.after, cursor.sweep)
    elif cursor.after is not None and cursor.sweep + 1 < MAX_SWEEPS:
        follow = Cursor(None, cursor.sweep + 1)  # once more from the start: entries put behind the cursor
    else:
        follow = None
    return DueStep(outcome.result(), follow, last_run_at)


def _run_entry(ctx: CallContext, found: DueEntry, page: PageState, outcome: _Outcome) -> None:
    outcome.add({"entries": 1})
    work = DueWork(found, wiring.unit_of_work(ctx), page)
    try:
        handler = _handlers.get(found.kind)
        if handler is None:
            raise codes.DUE_UNKNOWN_KIND(f"no handler for due entries of kind {found.kind}")
        answer = handler(ctx, work)
        work.settle()
        work.uow.commit()
    except (ConcurrentModification, AlreadyExists):
        outcome.add({"alreadyDone": 1})  # another run settled or moved it, or did its effect first
        return
    except DomainError as error:
        outcome.add({"failed": [{"kind": found.kind, "ref": found.ref, "dueAt": isoformat(found.due_at),
                                 "code": error.code, "message": error.message}]})
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
