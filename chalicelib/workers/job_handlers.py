"""The schedules' fan-out (schedules.py): a page of tenants after another."""
from __future__ import annotations

from typing import Any

from chalicelib.core.context import CallContext
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler
from chalicelib.workers.schedules import FanOut, fan_out


@job_handler(JobType.SCHEDULE_FAN_OUT)
def fan_out_page(ctx: CallContext, payload: dict[str, Any]) -> dict[str, Any]:
    """Enqueued by a scheduled function or by the fan-out job of the page before (payload: FanOut's)."""
    work, after = FanOut.of(payload)
    return {"enqueued": fan_out(ctx, work, after)}
