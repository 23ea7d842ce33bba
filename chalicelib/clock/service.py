"""Test clocks (DECISIONS.md "Test clocks"): a tenant's time, and advancing a test clock.

A tenant's time is its clock (runtime/tenant_clock.py): the real time for an ordinary tenant, the test
clock's position for a tenant created with one. An advance to `to` checks the clock (409
`clock.not_a_test_clock` without one, 409 `clock.advancing` while another advance runs, 400
`clock.not_forward` unless `to` is after the clock's now), then marks the clock advancing on condition of
the version it read (so of two parallel advances one wins, the other answers 409) and enqueues the
advance's first job, both in one commit; the answer shows the clock advancing.

The advance's jobs (job_handlers.py, `advance_step`) run the one due pager (runtime/due.py) for the
tenant up to `to`, a page a job, in time order and each entry at its own due time (an entry that fell due
before the advance began runs at the moment it began), and move the clock's position to the due time of
the last entry each page ran: that is the time requests on the tenant see while it advances. The last
job puts the clock at `to` and ready again.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from chalicelib.clock.models import TenantTime
from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.context import CallContext
from chalicelib.core.errors import AlreadyExists, ConcurrentModification
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.runtime import due, jobs, tenant_clock, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.tenant_clock import ClockState, ClockStatus

ADVANCE_EVENT = "clock.advance.start"
ADVANCED_EVENT = "clock.advance.finish"


def time(ctx: CallContext) -> TenantTime:
    """The tenant's time: its test clock (one consistent GetItem), else the real time (ctx.now)."""
    found = None if tenant_clock.known(ctx.tenant) is False else tenant_clock.read(ctx.tenant)
    if found is None:
        return TenantTime(tenantLocator=ctx.tenant, testClock=False, now=ctx.now)
    return _time(found)


def advance(ctx: CallContext, to: datetime) -> TenantTime:
    """Starts advancing the tenant's test clock to `to`; answers the clock advancing."""
    found = tenant_clock.read(ctx.tenant)
    if found is None:
        raise codes.CLOCK_NOT_A_TEST_CLOCK(f"Tenant {ctx.tenant} has no test clock: its time is the real time")
    if found.status == ClockStatus.ADVANCING:
        raise codes.CLOCK_ADVANCING(f"The clock is advancing to {isoformat(found.advancingTo or found.now)} already")
    if to <= found.now:
        raise codes.CLOCK_NOT_FORWARD(f"The clock stands at {isoformat(found.now)}; `to` ({isoformat(to)}) must be "
                                      "after it")
    advance_locator = new_locator()
    uow = wiring.unit_of_work(ctx)
    uow.add(tenant_clock.begin_advance(found, to, advance_locator))
    jobs.enqueue(uow, JobType.CLOCK_ADVANCE, AdvanceStep(advance=advance_locator, to=to),
                 locator=_step_locator(advance_locator, to, 0))
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
    found = tenant_clock.read(ctx.tenant)
    if found is None or found.status != ClockStatus.ADVANCING or found.advanceLocator != step.advance:
        return {"advance": step.advance, "over": True}
    ran = due.run_step(ctx, step.to, floor=found.advanceStartedAt)
    # the step's own writes happen where it leaves the clock: at its last entry's time, or at the target
    at = step.to if not ran.more else max(ran.last_run_at or found.now, found.now)
    uow = wiring.unit_of_work(replace(ctx, now=at))
    if ran.more:
        if ran.last_run_at is not None and ran.last_run_at > found.now:
            uow.add(tenant_clock.moved(found, ran.last_run_at))
        follow = AdvanceStep(advance=step.advance, to=step.to, step=step.step + 1)
        jobs.enqueue(uow, JobType.CLOCK_ADVANCE, follow, locator=_step_locator(step.advance, step.to, follow.step))
    else:
        uow.add(tenant_clock.finish_advance(found))
        uow.record_event(ADVANCED_EVENT, {"tenantLocator": ctx.tenant, "to": isoformat(step.to)})
    try:
        uow.commit()
    except (AlreadyExists, ConcurrentModification):
        pass  # an earlier attempt of this step committed it
    return {"advance": step.advance, **ran.result, "done": not ran.more}


def _step_locator(advance_locator: str, to: datetime, step: int) -> str:
    return derived_locator(to, f"{JobType.CLOCK_ADVANCE}#{advance_locator}#{step}")


def _time(found: ClockState) -> TenantTime:
    return TenantTime(tenantLocator=found.tenantLocator, testClock=True, now=found.now, status=found.status.value,
                      advancingTo=found.advancingTo)
