"""The schedules' jobs (schedules.py): the fan-out, a page of tenants after another, and each tenant's due
run (runtime/due.py), a page of due entries after another."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from chalicelib.core.clock import isoformat
from chalicelib.core.context import CallContext
from chalicelib.core.ids import derived_locator
from chalicelib.runtime import due, jobs
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler
from chalicelib.workers.schedules import FanOut, fan_out


@job_handler(JobType.SCHEDULE_FAN_OUT, payload=FanOut)
def fan_out_page(ctx: CallContext, payload: FanOut) -> dict[str, Any]:
    """Enqueued by a scheduled function or by the fan-out job of the page before (`after`: the tenant it
    continues after)."""
    return {"enqueued": fan_out(ctx, payload, payload.after)}


class DueRun(BaseModel):
    asOf: datetime
    """The schedule's time: the entries due up to it run (each at its own due time)."""
    after: str | None = None
    """The due entry this step continues after (None: from the start)."""
    sweep: int = 0


@job_handler(JobType.DUE_RUN, payload=DueRun)
def run_due(ctx: CallContext, payload: DueRun) -> dict[str, Any]:
    """Enqueued every quarter hour for every tenant without a test clock (schedules.py), then by each step
    for the next page, once the step is done: entries run in time order, one page after another. A
    retried step enqueues its continuation once (its locator derives from the run and where it goes on)."""
    step = due.run_step(ctx, payload.asOf, due.Cursor(payload.after, payload.sweep))
    if step.next is not None:
        follow = DueRun(asOf=payload.asOf, after=step.next.after, sweep=step.next.sweep)
        jobs.enqueue_once(ctx, JobType.DUE_RUN, follow, locator=derived_locator(
            payload.asOf, f"{JobType.DUE_RUN}#{isoformat(payload.asOf)}#{follow.sweep}#{follow.after or ''}"))
    return {"asOf": isoformat(payload.asOf), **step.result,
            **({"continuedAfter": step.next.after or "", "sweep": step.next.sweep} if step.next else {})}
