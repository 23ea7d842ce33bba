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
    step: int = 0
    """Which step of the run this is (each reads the index from the start: what earlier steps ran is gone)."""


@job_handler(JobType.DUE_RUN, payload=DueRun)
def run_due(ctx: CallContext, payload: DueRun) -> dict[str, Any]:
    """Enqueued every quarter hour for every tenant without a test clock (schedules.py), then by each step
    that stopped at its limit for the next, once the step is done: the entries run in time order, one step
    after another. A retried step enqueues its continuation once (its locator derives from the run and the
    step's number)."""
    ran = due.run_step(ctx, payload.asOf)
    if ran.more:
        jobs.enqueue_once(
            ctx,
            JobType.DUE_RUN,
            DueRun(asOf=payload.asOf, step=payload.step + 1),
            locator=derived_locator(payload.asOf, f"{JobType.DUE_RUN}#{isoformat(payload.asOf)}#{payload.step + 1}"),
        )
    return {"asOf": isoformat(payload.asOf), **ran.result, **({"continued": True} if ran.more else {})}
