"""Asynchronous work of the clock domain: the pages of a test clock's advance."""

from __future__ import annotations

from typing import Any

from chalicelib.clock import service
from chalicelib.clock.service import AdvanceStep
from chalicelib.core.context import CallContext
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler


@job_handler(JobType.CLOCK_ADVANCE, payload=AdvanceStep)
def advance(ctx: CallContext, payload: AdvanceStep) -> dict[str, Any]:
    """Enqueued by `POST /clock/{tenantLocator}/advance`, then by each page for the next one."""
    return service.advance_step(ctx, payload)
