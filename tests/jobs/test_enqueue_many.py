"""`jobs.enqueue_many` (stop 43): many jobs in one unit of work, their job items as `enqueue` writes them and their
messages 10 to a SendMessageBatch once it commits; nothing when it does not."""

from __future__ import annotations

import math

import pytest

from chalicelib.core.errors import AlreadyExists
from chalicelib.core.ids import new_locator
from chalicelib.runtime import wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import JobMessage, enqueue, enqueue_many, get_job
from chalicelib.storage.queues import SqsJobQueue
from tests.builders import system_ctx

SAME = ("jobType", "status", "payload", "attempts", "requeues", "version", "correlationId", "entity", "GSI1PK")


@pytest.mark.parametrize("count", [1, 10, 11, 23])
def test_many_jobs_are_enqueued_as_one_each_and_sent_ten_to_a_call(tenant, jobs, count):
    ctx = system_ctx().for_tenant(tenant)
    single = wiring.unit_of_work(ctx)
    alone = enqueue(single, JobType.REAP_JOBS)
    single.commit()
    before = jobs.calls

    uow = wiring.unit_of_work(ctx)
    wanted = [new_locator() for _ in range(count)]
    locators = enqueue_many(uow, JobType.REAP_JOBS, [({"n": n}, locator) for n, locator in enumerate(wanted)])
    assert locators == wanted and jobs.calls == before
    uow.commit()

    assert jobs.calls - before == math.ceil(count / 10)
    assert [m.job_locator for m in jobs.sent[-count:]] == wanted
    assert [m.payload for m in jobs.sent[-count:]] == [{"n": n} for n in range(count)]
    reference = get_job(tenant, alone)
    for locator in wanted:
        item = get_job(tenant, locator)
        assert item is not None
        assert {name: item[name] for name in SAME if name != "payload"} == {
            name: reference[name] for name in SAME if name != "payload"
        }
        assert item["leaseUntil"] and item["GSI1SK"].endswith(f"#{locator}")
    assert jobs.drain() == count + 1
    assert {get_job(tenant, locator)["status"] for locator in wanted} == {"finished"}


def test_no_job_and_no_message_when_the_commit_fails(tenant, jobs):
    ctx = system_ctx().for_tenant(tenant)
    taken = new_locator()
    first = wiring.unit_of_work(ctx)
    enqueue(first, JobType.REAP_JOBS, locator=taken)
    first.commit()
    before, sent = jobs.calls, len(jobs.sent)

    uow = wiring.unit_of_work(ctx)
    others = enqueue_many(uow, JobType.REAP_JOBS, [(None, new_locator()), (None, taken), (None, None)])
    with pytest.raises(AlreadyExists):
        uow.commit()
    assert (jobs.calls, len(jobs.sent)) == (before, sent)
    assert get_job(tenant, others[0]) is None and get_job(tenant, others[2]) is None


def test_the_sqs_queue_sends_a_batch_in_one_call_and_receives_each_message(aws):
    queue = SqsJobQueue()
    bodies = [
        JobMessage(job_type="jobs.reap", tenant="t", job_locator=f"batch-{n}", correlation_id="c").model_dump_json()
        for n in range(10)
    ]
    queue.send_batch(bodies)
    received: list[str] = []
    for _ in range(10):
        got = queue.receive(wait_seconds=0)
        for handle, body in got:
            queue.delete(handle)
            received.append(body)
        if not got:
            break
    assert sorted(b for b in received if "batch-" in b) == sorted(bodies)
