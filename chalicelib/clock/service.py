"""Test clocks (DECISIONS.md "Test clocks"): a tenant's time, and advancing a test clock.

Business time (the `now` of records, events and their timestamps, statuses, schedules:
`CallContext.now`) is the tenant's clock; authentication, token expiry, job leases and the event
stream's settle window stay on real time (`wiring.clock()`). A job works at the business time of what
enqueued it (`business_now`), a due entry at its due time (runtime/due.py). An ordinary tenant's clock
is the real one. A tenant created with `createTenant?testClock=true` has a test clock: one item
(repository.py) holding its position, which starts at the real time of creation and moves only forward,
only when an advance moves it. The runtime asks for a tenant's clock through the port `wiring.TenantClocks`,
which the composition root (app.py) wires to this module: the runtime sits below the domains.

While a clock advances, requests on its tenant see the clock's position, which the advance moves page
by page: the due time of the last due entry it has run (never behind where the advance started), and
the target once the advance is done. The due entries themselves run each at its own due time (the
pager in runtime/due.py gives each handler a CallContext whose `now` is the entry's due time).

Cheap: whether a tenant has a test clock is fixed at its creation, so this process keeps that fact for
the tenants it has seen (a bounded cache). An ordinary tenant costs one GetItem per process at most (none
when this process created it); a test-clock tenant one consistent GetItem per request, its position
being the thing that moves.

An advance to `to` checks the clock (409 `clock.not_a_test_clock` without one, 409 `clock.advancing` while
another advance runs, 400 `clock.not_forward` unless `to` is after the clock's now), then marks the clock
advancing on condition of the version it read (so of two parallel advances one wins, the other answers 409)
and enqueues the advance's first job, both in one commit; the answer shows the clock advancing.

The advance's jobs (job_handlers.py, `advance_step`) run the one due pager (runtime/due.py) for the
tenant up to `to`, a page a job, in time order and each entry at its own due time (an entry that fell due
before the advance began runs at the moment it began), and move the clock's position to the due time of
the last entry each page ran: that is the time requests on the tenant see while it advances. The last
job puts the clock at `to` and ready again.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from datetime import datetime
from threading import Lock
from typing import Any

from pydantic import BaseModel

from chalicelib.clock import repository
from chalicelib.clock.models import ClockState, ClockStatus, TenantTime
from chalicelib.core import codes
from chalicelib.core.clock import Clock, FixedClock, isoformat
from chalicelib.core.context import CallContext
from chalicelib.core.errors import AlreadyExists, ConcurrentModification
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.runtime import due, jobs, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.wiring import UnitOfWork

KNOWN_TENANTS = 10_000
"""Tenants whose 'has a test clock' fact this process keeps (least recently used ones are forgotten)."""

_known: OrderedDict[str, bool] = OrderedDict()
_lock = Lock()


# --- the tenant's clock (runtime/wiring.py's TenantClocks) -------------------------------------------


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
    found = repository.get(tenant)
    remember(tenant, found is not None)
    return found


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


def start(uow: UnitOfWork, tenant: str, at: datetime) -> None:
    """A new test clock for `tenant`, standing at `at`, in `uow` (the identity domain, creating the tenant;
    it `remember`s the tenant once its registration is committed)."""
    uow.add(repository.start(tenant, at))


# --- the clock API and its advance ---------------------------------------------------------------------


ADVANCE_EVENT = "clock.advance.start"
ADVANCED_EVENT = "clock.advance.finish"


def time(ctx: CallContext) -> TenantTime:
    """The tenant's time: its test clock (one consistent GetItem), else the real time (ctx.now)."""
    found = None if known(ctx.tenant) is False else read(ctx.tenant)
    if found is None:
        return TenantTime(tenantLocator=ctx.tenant, testClock=False, now=ctx.now)
    return _time(found)


def advance(ctx: CallContext, to: datetime) -> TenantTime:
    """Starts advancing the tenant's test clock to `to`; answers the clock advancing."""
    found = read(ctx.tenant)
    if found is None:
        raise codes.CLOCK_NOT_A_TEST_CLOCK(f"Tenant {ctx.tenant} has no test clock: its time is the real time")
    if found.status == ClockStatus.ADVANCING:
        raise codes.CLOCK_ADVANCING(f"The clock is advancing to {isoformat(found.advancingTo or found.now)} already")
    if to <= found.now:
        raise codes.CLOCK_NOT_FORWARD(
            f"The clock stands at {isoformat(found.now)}; `to` ({isoformat(to)}) must be after it"
        )
    advance_locator = new_locator()
    uow = wiring.unit_of_work(ctx)
    uow.add(repository.begin_advance(found, to, advance_locator))
    jobs.enqueue(
        uow,
        JobType.CLOCK_ADVANCE,
        AdvanceStep(advance=advance_locator, to=to),
        locator=_step_locator(advance_locator, to, 0),
    )
    uow.record_event(ADVANCE_EVENT, {"tenantLocator": ctx.tenant, "from": isoformat(found.now), "to": isoformat(to)})
    uow.commit()
    return TenantTime(tenantLocator=ctx.tenant, testClock=True, now=found.now, status="advancing", advancingTo=to)


class AdvanceStep(BaseModel):
    """The payload of a `clock.advance` job: the advance it belongs to, where to, and where it goes on."""

    advance: str
    to: datetime
    step: int = 0


def advance_step(ctx: CallContext, step: AdvanceStep) -> dict[str, Any]:
    """One step of the advance `step.advance`: runs up to a step's worth of due entries (runtime/due.py),
    then, when more may be due, moves the clock to the last one's due time and enqueues the next step, or
    else puts the clock at `to` and ready. A job of an advance that is over (a redelivered message) does
    nothing."""
    found = read(ctx.tenant)
    if found is None or found.status != ClockStatus.ADVANCING or found.advanceLocator != step.advance:
        return {"advance": step.advance, "over": True}
    ran = due.run_step(ctx, step.to, floor=found.advanceStartedAt)
    # the step's own writes happen where it leaves the clock: at its last entry's time, or at the target
    at = step.to if not ran.more else max(ran.last_run_at or found.now, found.now)
    uow = wiring.unit_of_work(replace(ctx, now=at))
    if ran.more:
        if ran.last_run_at is not None and ran.last_run_at > found.now:
            uow.add(repository.moved(found, ran.last_run_at))
        follow = AdvanceStep(advance=step.advance, to=step.to, step=step.step + 1)
        jobs.enqueue(uow, JobType.CLOCK_ADVANCE, follow, locator=_step_locator(step.advance, step.to, follow.step))
    else:
        uow.add(repository.finish_advance(found))
        uow.record_event(ADVANCED_EVENT, {"tenantLocator": ctx.tenant, "to": isoformat(step.to)})
    try:
        uow.commit()
    except (AlreadyExists, ConcurrentModification):
        pass  # an earlier attempt of this step committed it
    return {"advance": step.advance, **ran.result, "done": not ran.more}


def _step_locator(advance_locator: str, to: datetime, step: int) -> str:
    return derived_locator(to, f"{JobType.CLOCK_ADVANCE}#{advance_locator}#{step}")


def _time(found: ClockState) -> TenantTime:
    return TenantTime(
        tenantLocator=found.tenantLocator,
        testClock=True,
        now=found.now,
        status=found.status.value,
        advancingTo=found.advancingTo,
    )
