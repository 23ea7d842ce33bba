"""Jobs that keep their job item themselves (`@job_handler(keeps_its_job=True)`, a migration's accounts): dispatch
neither reads the item nor moves it to running; the handler finishes it in its own write (`finish_in`), else
dispatch does; a message of a job that is over is told by the handler's own read (`kept_job_over`); a message
without its business time (sent before it was carried) runs as any other job's."""

from __future__ import annotations

from collections import Counter
from typing import cast

import pytest
from pydantic import BaseModel

from chalicelib.core import codes
from chalicelib.runtime import jobs, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import JobMessage, JobStatus, dispatch, enqueue, get_job, job_handler
from chalicelib.storage import keys, table
from tests.builders import system_ctx

KEPT = cast(JobType, "test.jobs.kept")  # a job type of this test alone
runs: Counter[str] = Counter()
seen: dict[str, str | None] = {}  # the job item's status as the handler read it, per key


class Kept(BaseModel):
    key: str
    write: bool = True
    refuse: bool = False
    crash: bool = False


@job_handler(KEPT, payload=Kept, keeps_its_job=True)
def kept(ctx, payload: Kept):
    runs[payload.key] += 1
    job_key = jobs.kept_job_key()
    item = table.gateway().get(keys.tenant_scope(ctx.tenant), job_key) if job_key is not None else None
    seen[payload.key] = None if item is None else item["status"]
    if jobs.kept_job_over(item):
        return {"skipped": True}
    if payload.refuse:
        raise codes.TRANSACTION_POLICY_NOT_CANCELLED("no thanks")
    if payload.crash:
        raise RuntimeError("the network blinked")
    if payload.write:
        uow = wiring.unit_of_work(ctx)
        uow.add(table.put({**keys.Key(f"{keys.tenant_scope(ctx.tenant)}TEST#{payload.key}").as_dict(), "n": 1}))
        jobs.finish_in(uow, {"wrote": payload.key})
        uow.commit()
    return {"done": payload.key}


def _start(tenant, queue, key, **payload) -> tuple[str, JobMessage]:
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    locator = enqueue(uow, KEPT, {"key": key, **payload})
    uow.commit()
    return locator, queue.sent[-1]


def test_the_job_item_is_finished_by_the_handlers_own_write_and_never_marked_running(tenant, jobs, ddb_calls):
    locator, message = _start(tenant, jobs, "k1")
    assert message.business_time is not None
    ddb_calls.clear()
    assert dispatch(message) == JobStatus.FINISHED
    # the handler's read and its write (which finished the job): no read or move of dispatch's own
    assert ddb_calls == ["GetItem", "TransactWriteItems"]
    assert seen["k1"] == "queued"  # not moved to running before the handler
    job = get_job(tenant, locator)
    assert (job["status"], job["result"], job["attempts"], job["version"]) == ("finished", {"wrote": "k1"}, 1, 2)
    assert "leaseUntil" not in job and "GSI1PK" not in job  # the reaper leaves it alone


def test_delivered_again_after_it_finished_the_handler_sees_it_over(tenant, jobs):
    locator, message = _start(tenant, jobs, "k2")
    dispatch(message)
    assert dispatch(message) == JobStatus.FINISHED
    assert runs["k2"] == 2 and seen["k2"] == "finished"
    assert get_job(tenant, locator)["result"] == {"wrote": "k2"}  # the second delivery changed nothing


def test_a_handler_that_does_not_finish_it_has_it_finished_by_dispatch(tenant, jobs):
    locator, message = _start(tenant, jobs, "k3", write=False)
    assert dispatch(message) == JobStatus.FINISHED
    job = get_job(tenant, locator)
    assert (job["status"], job["result"]) == ("finished", {"done": "k3"})


def test_a_domain_error_fails_it_and_a_transient_one_leaves_it_queued(tenant, jobs):
    refused, message = _start(tenant, jobs, "k4", refuse=True)
    assert dispatch(message) == JobStatus.FAILED
    assert get_job(tenant, refused)["status"] == "failed"
    crashed, message = _start(tenant, jobs, "k5", crash=True)
    with pytest.raises(RuntimeError):
        dispatch(message)
    job = get_job(tenant, crashed)
    assert job["status"] == "queued" and "leaseUntil" in job  # its message comes back, or the reaper sends it


def test_a_message_without_its_business_time_runs_as_any_other_jobs(tenant, jobs):
    locator, message = _start(tenant, jobs, "k6")
    old = message.model_copy(update={"business_time": None})
    assert dispatch(old) == JobStatus.FINISHED
    assert seen["k6"] is None  # no job key of its own to read: dispatch read and claimed it, as before
    job = get_job(tenant, locator)
    assert (job["status"], job["result"]) == ("finished", {"done": "k6"})
