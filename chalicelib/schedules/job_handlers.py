"""The deserialization job's steps (each reads one chunk of the file and queues the next), and the cleanups
after a committed patch or delete and after a run that never commits."""

from __future__ import annotations

from typing import Any

from chalicelib.core.context import CallContext
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler
from chalicelib.schedules import cleanup, service
from chalicelib.schedules.service import DeserializeStep


@job_handler(JobType.SCHEDULE_ITEMS_DESERIALIZE, payload=DeserializeStep, on_give_up=service.interrupt)
def deserialize_step(ctx: CallContext, step: DeserializeStep) -> dict[str, Any]:
    return service.run_step(ctx, step)


@job_handler(JobType.SCHEDULE_ITEMS_CLEANUP, payload=cleanup.ItemsCleanup)
def clean_items(ctx: CallContext, payload: cleanup.ItemsCleanup) -> dict[str, Any]:
    return cleanup.clean(ctx, payload)


@job_handler(JobType.SCHEDULE_ITEMS_DROP_RUN, payload=cleanup.RunItems)
def drop_run_items(ctx: CallContext, payload: cleanup.RunItems) -> dict[str, Any]:
    return cleanup.drop_run(ctx, payload)
