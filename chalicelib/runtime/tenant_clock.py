"""The tenant's clock (DECISIONS.md "Test clocks"): where a tenant's business time comes from.

Business time (the `now` of records, events and their timestamps, statuses, schedules:
`CallContext.now`) is the tenant's clock; authentication, token expiry, job leases and the event
stream's settle window stay on real time (`wiring.clock()`). A job works at the business time of what
enqueued it (`business_now`), a due entry at its due time (runtime/due.py). An ordinary tenant's clock
is the real one. A tenant created with `createTenant?testClock=true` has a test clock: one item
(`storage/keys.tenant_clock`) holding its position, which starts at the real time of creation and moves
only forward, only when an advance (chalicelib/clock) moves it.

While a clock advances, requests on its tenant see the clock's position, which the advance moves page
by page: the due time of the last due entry it has run (never behind where the advance started), and
the target once the advance is done. The due entries themselves run each at its own due time (the
pager in runtime/due.py gives each handler a CallContext whose `now` is the entry's due time).

Cheap: whether a tenant has a test clock is fixed at its creation, so this process keeps that fact for
the tenants it has seen (a bounded cache). An ordinary tenant costs one GetItem per process at most (none
when this process created it); a test-clock tenant one consistent GetItem per request, its position
being the thing that moves.
"""
from __future__ import annotations

from collections import OrderedDict
from datetime import datetime
from enum import StrEnum
from threading import Lock
from typing import Any

from pydantic import BaseModel

from chalicelib.core import codes
from chalicelib.core.clock import Clock, FixedClock
from chalicelib.runtime import wiring
from chalicelib.storage import codec, keys, table
from chalicelib.storage.table import WriteOp

ENTITY = "testClock"
KNOWN_TENANTS = 10_000
"""Tenants whose 'has a test clock' fact this process keeps (least recently used ones are forgotten)."""


class ClockStatus(StrEnum):
    READY = "ready"
    ADVANCING = "advancing"


class ClockState(BaseModel):
    """A test clock as stored."""

    tenantLocator: str
    now: datetime
    status: ClockStatus = ClockStatus.READY
    advancingTo: datetime | None = None
    advanceStartedAt: datetime | None = None
    """Where the clock stood when the running advance began: due entries that fell due before it run at it."""
    advanceLocator: str | None = None
    """The advance under way (its jobs' locators derive from it)."""
    createdAt: datetime
    version: int = 1


_known: OrderedDict[str, bool] = OrderedDict()
_lock = Lock()


def remember(tenant: str, has_test_clock: bool) -> None:
    """Keep the fact (fixed at the tenant's creation) that `tenant` has a test clock, or has none."""
    with _lock:
        _known[tenant] = has_test_clock
        _known.move_to_end(tenant)
        while len(_known) > KNOWN_TENANTS:
            _known.popitem(last=False)


def forget(tenant: str) -> None:
    """Drop what this process knows of `tenant` (tests: a process that never saw it)."""
    with _lock:
        _known.pop(tenant, None)


def known(tenant: str) -> bool | None:
    """Whether this process knows `tenant` has a test clock (None: it does not know yet)."""
    with _lock:
        found = _known.get(tenant)
        if found is not None:
            _known.move_to_end(tenant)
        return found


def read(tenant: str) -> ClockState | None:
    """The tenant's test clock as stored now (one consistent GetItem), or None for an ordinary tenant."""
    item = table.gateway().get(keys.tenant_scope(tenant), keys.tenant_clock(tenant))
    remember(tenant, item is not None)
    return ClockState.model_validate(codec.without_keys(item)) if item else None


def has_test_clock(tenant: str) -> bool:
    """Whether `tenant` has a test clock (no read once this process knows: every request and job on the
    tenant asked its clock before)."""
    found = known(tenant)
    return read(tenant) is not None if found is None else found


def clock_for(tenant: str) -> Clock:
    """The tenant's clock: the real one for an ordinary tenant (no read once this process knows it is one),
    else one standing at the test clock's position."""
    if known(tenant) is False:
        return wiring.clock()
    found = read(tenant)
    return wiring.clock() if found is None else FixedClock(found.now)


def business_now(tenant: str, caused_at: datetime | None) -> datetime:
    """The business time of work that `caused_at` caused (a job, at the business time of the unit of work
    that enqueued it): the real time for an ordinary tenant, else `caused_at` itself, so a job works at the
    moment of what caused it, as it would have run at once, however far the clock moved before it ran (an
    advance's due work enqueues jobs that run after its step: a renewal's billing at the renewal's time, not
    at the advance's target). Work with no such time takes the clock's position."""
    if caused_at is not None and known(tenant) is True:
        return caused_at
    found = None if known(tenant) is False else read(tenant)
    if found is None:
        return wiring.clock().now()
    return caused_at or found.now


# --- writes (the identity domain starts a clock, the clock domain advances it) --------------------------


def start(tenant: str, at: datetime) -> WriteOp:
    """A new test clock for `tenant`, standing at `at`."""
    clock = ClockState(tenantLocator=tenant, now=at, createdAt=at)
    return table.put_new({**keys.tenant_clock(tenant).as_dict(), "entity": ENTITY, **clock.model_dump()},
                         lambda: codes.CONFLICT_ALREADY_EXISTS("The tenant has a test clock already"))


def begin_advance(clock: ClockState, to: datetime, advance_locator: str) -> WriteOp:
    """The clock advancing to `to`, on condition that it is still as read (else 409 `clock.advancing`:
    another advance began first)."""
    return _rewrite(clock, {"status": ClockStatus.ADVANCING.value, "advancingTo": to,
                            "advanceStartedAt": clock.now, "advanceLocator": advance_locator},
                    lambda: codes.CLOCK_ADVANCING("Another advance of this clock began first"))


def moved(clock: ClockState, at: datetime) -> WriteOp:
    """The advancing clock's position at `at` (its progress), on condition that it is still as read."""
    return _rewrite(clock, {"now": at})


def finish_advance(clock: ClockState) -> WriteOp:
    """The clock at its advance's target and ready again, on condition that it is still as read."""
    assert clock.advancingTo is not None
    return _rewrite(clock, {"now": clock.advancingTo, "status": ClockStatus.READY.value},
                    remove=("advancingTo", "advanceStartedAt", "advanceLocator"))


def _rewrite(clock: ClockState, changes: dict[str, Any], on_failure: Any = None,
             remove: tuple[str, ...] = ()) -> WriteOp:
    return table.update(keys.tenant_clock(clock.tenantLocator), changes, expected_version=clock.version,
                        remove=remove, on_failure=on_failure)
