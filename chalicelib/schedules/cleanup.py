"""Cleaning up after a committed patch or delete of schedule items (a `scheduleItems.cleanup` job the
commit enqueues): each item it rewrote keeps only its visible version, and an item it deleted goes. And
after a deserialization run that will never commit (terminated or failed): its items go
(`scheduleItems.dropRun`).

A rewrite leaves the item's previous version beside the new one (readers need it until the commit shows),
so without this every patch would grow the item and every deleted item would stay as a tombstone. The job
holds the schedule's lock, as patches and deletes do, so no writer changes the items under it; it drops
only versions no reader can show, in batches, so stopping halfway leaves what readers see unchanged and a
retry finishes it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError
from chalicelib.core.ids import new_locator
from chalicelib.runtime import jobs, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.wiring import UnitOfWork
from chalicelib.schedules import repository
from chalicelib.schedules.models import Owner, sequential_locators


class ItemsCleanup(BaseModel):
    """The job's payload: the schedule, and the items a committed write changed."""

    owner: Owner
    locators: list[str]


class ScheduleBusy(Exception):
    """Another writer holds the schedule: the job is retried (not a DomainError, which would fail it)."""


def enqueue(uow: UnitOfWork, owner: Owner, locators: list[str]) -> None:
    """The cleanup of `locators` once `uow` (the write that changed them) commits."""
    jobs.enqueue(uow, JobType.SCHEDULE_ITEMS_CLEANUP, ItemsCleanup(owner=owner, locators=locators))


def clean(ctx: CallContext, cleanup: ItemsCleanup) -> dict[str, Any]:
    partition = repository.partition(ctx.tenant, cleanup.owner)
    holder = new_locator()
    try:
        repository.lock(ctx.tenant, partition, holder, wiring.clock().now())
    except DomainError as error:
        if error.code == codes.SCHEDULE_BUSY.code:
            raise ScheduleBusy(f"schedule {partition} is being written; the cleanup runs again") from None
        raise
    try:
        found = repository.items_by_locator(ctx.tenant, partition, cleanup.locators)
        committed = repository.committed_tokens(ctx.tenant, partition, found.values())
        deleted, trimmed = [], []
        for item in found.values():
            current = item.current(committed)
            if current is None:
                continue  # no version of it committed (yet): not this job's to judge
            if current.deleted:
                deleted.append(item.locator)
            elif item.versions != [current]:
                trimmed.append(item.model_copy(update={"versions": [current]}))
        repository.write_items(ctx.tenant, partition, trimmed)
        repository.delete_items(ctx.tenant, partition, deleted)
    finally:
        repository.unlock(ctx.tenant, partition, holder)
    return {"trimmed": len(trimmed), "deleted": len(deleted)}


class RunItems(BaseModel):
    """The items a deserialization run wrote: `count` locators from `first` on (models.sequential_locators)."""

    owner: Owner
    first: str
    count: int


def enqueue_drop_run(uow: UnitOfWork, owner: Owner, first: str, count: int) -> None:
    """Deleting a run's `count` items once `uow` (which ends the run: terminate, fail) commits. Its token
    never commits after that, so no reader ever shows them; a step of the run still in flight deletes what
    it writes itself (service.run_step)."""
    if count:
        jobs.enqueue(uow, JobType.SCHEDULE_ITEMS_DROP_RUN, RunItems(owner=owner, first=first, count=count))


def drop_run(ctx: CallContext, run: RunItems) -> dict[str, Any]:
    repository.delete_items(
        ctx.tenant, repository.partition(ctx.tenant, run.owner), sequential_locators(run.first, run.count)
    )
    return {"deleted": run.count}
