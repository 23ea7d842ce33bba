"""A scheduled function enqueues one job per tenant, a page at a time (chalicelib/workers/schedules.py): the
tests run its fan-out jobs and leave the jobs it enqueued for them to pick from."""

from __future__ import annotations

from typing import Any

from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import JobMessage, dispatch


def invoke_schedule(api: Any, name: str) -> None:
    """The scheduled function `name` as EventBridge invokes it."""
    api.lambda_.invoke(
        name,
        api.events.generate_cw_event(
            source="aws.events", detail_type="Scheduled Event", detail={}, resources=[f"arn:aws:events:rule/{name}"]
        ),
    )


def fan_out(queue: Any) -> int:
    """Dispatches the queue's fan-out jobs, and those they enqueue, until none is left; every other message
    stays queued. Answers how many ran. Each message is read once (a schedule over the thousands of tenants
    of a test session enqueues thousands of messages)."""
    ran, kept = 0, []
    while queue.messages:
        body = queue.messages.pop(0)
        message = JobMessage.model_validate_json(body)
        if message.job_type != JobType.SCHEDULE_FAN_OUT:
            kept.append(body)
            continue
        dispatch(message)
        ran += 1
    queue.messages[:0] = kept
    return ran
