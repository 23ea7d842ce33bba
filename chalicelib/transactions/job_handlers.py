"""Asynchronous work of the transactions domain."""
from __future__ import annotations

from typing import Any

from chalicelib.core.clock import parse_datetime
from chalicelib.core.context import CallContext
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler
from chalicelib.transactions import auto_renewal


@job_handler(JobType.POLICIES_AUTO_RENEW)
def auto_renew(ctx: CallContext, payload: dict[str, Any]) -> dict[str, Any]:
    """Enqueued daily for every tenant by workers/schedules.py (payload `asOf`: the schedule's time), then
    by each step for the next one (`after`: the index entry it continues after)."""
    as_of = parse_datetime(payload["asOf"]) if payload.get("asOf") else ctx.now
    return auto_renewal.run(ctx, as_of, payload.get("after"))
