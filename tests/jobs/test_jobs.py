"""Jobs: enqueue after commit, dispatch and its status moves, redelivery, the reaper, the SQS worker."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import cast

import pytest
from pydantic import BaseModel

from chalicelib.core import codes
from chalicelib.core.clock import parse_datetime
from chalicelib.core.errors import AlreadyExists, Unavailable
from chalicelib.runtime import wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import (
    MAX_ATTEMPTS,
    JobMessage,
    JobStatus,
    dispatch,
    enqueue,
    get_job,
    job_handler,
    reap_expired,
    take_over,
)
from chalicelib.settings import settings
from chalicelib.storage import keys, table
from tests.builders import system_ctx
from tests.support.schedules import fan_out, invoke_schedule

ECHO = cast(JobType, "test.jobs.echo")  # a job type of this test alone (JobType lists the service's)
runs: Counter[str] = Counter()  # handler runs per job key
seen_status: dict[str, str] = {}  # the job's status as its handler saw it, per job key
started: dict[str, tuple[str, JobMessage]] = {}  # job key -> (job locator, its message)


class WorkerDied(BaseException):
    """Stands in for a worker killed mid-job (a Lambda timeout): nothing in dispatch can catch it."""


class Echo(BaseModel):
    key: str
    say: str | None = None
    crash: int = 0
    die: int = 0
    refuse: bool = False
    redeliver: bool = False
    race: int = 0
    busy: int = 0


@job_handler(ECHO, payload=Echo)
def echo(ctx, payload: Echo):
    """Behaves as the payload says: `crash` (transient) or `die` for the first runs, `refuse`, or
    `redeliver` (the same message arrives again while the job runs)."""
    key = payload.key
    locator, message = started[key]
    runs[key] += 1
    job = get_job(ctx.tenant, locator)
    assert job is not None
    seen_status[key] = job["status"]
    if payload.refuse:
        raise codes.TRANSACTION_POLICY_NOT_CANCELLED("no thanks")
    if runs[key] <= payload.race:
        raise codes.CONCURRENT_MODIFICATION("another write came first")
    if runs[key] <= payload.crash:
        raise RuntimeError("the network blinked")
    if runs[key] <= payload.busy:
        raise codes.SERVICE_UNAVAILABLE("The data store is busy; retry shortly")
    if runs[key] <= payload.die:
        raise WorkerDied()
    if payload.redeliver:
        assert dispatch(message) is None
    return {"echo": payload.say, "tenant": ctx.tenant, "now": ctx.now}


def start(tenant, queue, **payload):
    """Enqueue one echo job in its own committed unit of work; answers (job locator, its message)."""
    key = f"job{len(started)}"
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    locator = enqueue(uow, ECHO, {"key": key, **payload})
    uow.commit()
    started[key] = (locator, queue.sent[-1])
    return started[key]


def runs_of(tenant, locator):
    return runs[get_job(tenant, locator)["payload"]["key"]]


def past_the_lease(clock):
    clock.advance(seconds=settings().job_lease_seconds + 1)


# --- enqueue ------------------------------------------------------------------------------------


def test_the_message_is_sent_only_once_the_unit_of_work_commits(tenant, jobs):
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    locator = enqueue(uow, ECHO, {"key": "unused"})

    assert jobs.sent == []
    assert get_job(tenant, locator) is None
    uow.commit()

    assert [(m.job_type, m.tenant, m.job_locator) for m in jobs.sent] == [(ECHO, tenant, locator)]
    assert jobs.sent[0].correlation_id == uow.ctx.request_id
    assert get_job(tenant, locator)["status"] == "queued"


def test_no_job_and_no_message_when_the_commit_fails(tenant, jobs):
    taken = {**keys.Key(f"{keys.tenant_scope(tenant)}TEST#taken").as_dict(), "entity": "test"}
    first = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    first.add(table.put_new(taken))
    first.commit()

    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    uow.add(table.put_new(taken))
    locator = enqueue(uow, ECHO, {"key": "unused"})
    with pytest.raises(AlreadyExists):
        uow.commit()

    assert jobs.sent == []
    assert get_job(tenant, locator) is None


def test_an_unknown_job_type_cannot_be_enqueued(tenant):
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))

    with pytest.raises(ValueError):
        enqueue(uow, "test.jobs.nobody", {})


# --- dispatch -----------------------------------------------------------------------------------


def test_a_job_runs_queued_then_running_then_finished_with_its_result(tenant, jobs, clock):
    locator, _ = start(tenant, jobs, say="hello")
    clock.advance(minutes=1)

    assert jobs.drain() == 1

    job = get_job(tenant, locator)
    assert seen_status[job["payload"]["key"]] == "running"
    assert job["status"] == "finished"
    assert job["result"] == {"echo": "hello", "tenant": tenant, "now": "2026-01-15T09:31:00.000Z"}
    assert job["attempts"] == 1
    assert job["finishedAt"] == "2026-01-15T09:31:00.000Z"
    assert "leaseUntil" not in job and "GSI1PK" not in job  # off the reaper's index


def test_a_domain_error_fails_the_job_and_consumes_the_message(tenant, jobs):
    locator, message = start(tenant, jobs, refuse=True)

    assert jobs.drain() == 1

    job = get_job(tenant, locator)
    assert job["status"] == "failed"
    assert job["error"] == "transaction.policy_not_cancelled: no thanks"
    assert jobs.messages == []
    assert dispatch(message) is None  # a redelivery finds nothing to do
    assert runs_of(tenant, locator) == 1


def test_a_job_that_lost_a_race_is_queued_again_and_runs_once_the_other_write_committed(tenant, jobs):
    locator, _ = start(tenant, jobs, race=2, say="third time")

    assert jobs.drain() == 3

    job = get_job(tenant, locator)
    assert (job["status"], job["result"]["echo"], int(job["attempts"])) == ("finished", "third time", 3)
    assert runs_of(tenant, locator) == 3 and jobs.messages == []


def test_a_job_that_keeps_losing_races_fails_after_the_last_attempt(tenant, jobs):
    locator, _ = start(tenant, jobs, race=100)

    assert jobs.drain() == MAX_ATTEMPTS

    job = get_job(tenant, locator)
    assert job["status"] == "failed"
    assert job["error"] == "conflict.concurrent_modification: another write came first"
    assert runs_of(tenant, locator) == MAX_ATTEMPTS and jobs.messages == []


@pytest.mark.parametrize("payload", [{}, {"key": ["not", "a", "string"]}, {"key": "k", "crash": "twice"}])
def test_a_payload_that_does_not_fit_the_handlers_model_fails_the_job_at_once(tenant, jobs, payload):
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    locator = enqueue(uow, ECHO, payload)
    uow.commit()

    assert jobs.drain() == 1

    job = get_job(tenant, locator)
    assert job["status"] == "failed"
    assert job["error"].startswith("job.invalid_payload: The payload of this test.jobs.echo job does not fit Echo: ")
    assert jobs.messages == []


def test_a_payload_model_is_enqueued_as_its_json(tenant, jobs):
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    locator = enqueue(uow, ECHO, Echo(key="model", say="typed"))
    uow.commit()
    started["model"] = (locator, jobs.sent[-1])

    jobs.drain()

    job = get_job(tenant, locator)
    assert job["payload"] == {
        "key": "model",
        "say": "typed",
        "crash": 0,
        "die": 0,
        "refuse": False,
        "redeliver": False,
        "race": 0,
        "busy": 0,
    }
    assert job["result"]["echo"] == "typed"


def test_any_other_error_puts_the_job_back_and_propagates_for_redelivery(tenant, jobs):
    locator, message = start(tenant, jobs, crash=1, say="again")

    with pytest.raises(RuntimeError):
        jobs.drain()
    assert get_job(tenant, locator)["status"] == "queued"

    assert dispatch(message) == JobStatus.FINISHED  # SQS delivers it again
    job = get_job(tenant, locator)
    assert (job["status"], job["attempts"], job["result"]["echo"]) == ("finished", 2, "again")


def test_a_busy_dependency_is_transient_though_a_domain_error(tenant, jobs):
    """503 service.unavailable (DynamoDB throttled past botocore's retries, a timeout) fails nothing: the job
    goes back to queued and SQS delivers it again, where any other domain error fails the job for good."""
    locator, message = start(tenant, jobs, busy=1, say="later")

    with pytest.raises(Unavailable):
        jobs.drain()
    assert get_job(tenant, locator)["status"] == "queued"

    assert dispatch(message) == JobStatus.FINISHED
    job = get_job(tenant, locator)
    assert (job["status"], job["attempts"], job["result"]["echo"]) == ("finished", 2, "later")


def test_a_duplicate_delivery_runs_the_handler_once(tenant, jobs):
    locator, message = start(tenant, jobs)
    jobs.send(message.model_dump_json())

    assert jobs.drain() == 2

    assert runs_of(tenant, locator) == 1
    assert get_job(tenant, locator)["status"] == "finished"


def test_a_duplicate_delivered_while_the_job_runs_does_nothing(tenant, jobs):
    locator, _ = start(tenant, jobs, redeliver=True)

    jobs.drain()

    assert (get_job(tenant, locator)["status"], runs_of(tenant, locator)) == ("finished", 1)


def test_a_message_of_a_job_that_does_not_exist_is_dropped(tenant):
    ghost = JobMessage(job_type=ECHO, tenant=tenant, job_locator="01ARZ3NDEKTSV4RRFFQ69G5FAV", correlation_id="r")

    assert dispatch(ghost) is None


# --- the reaper ---------------------------------------------------------------------------------


def test_a_job_whose_message_was_lost_is_requeued_once_its_lease_runs_out(tenant, jobs, clock):
    locator, message = start(tenant, jobs, say="late")
    jobs.messages.clear()  # the message is lost

    assert reap_expired(tenant, clock.now() + timedelta(seconds=settings().job_lease_seconds - 1)) == 0
    past_the_lease(clock)
    assert reap_expired(tenant, clock.now()) == 1

    assert jobs.sent[-1].job_locator == locator
    assert get_job(tenant, locator)["requeues"] == 1
    assert reap_expired(tenant, clock.now()) == 0  # the new lease runs from now
    assert jobs.drain() == 1
    assert get_job(tenant, locator)["result"]["echo"] == "late"


def test_a_job_whose_worker_died_is_requeued_and_then_runs(tenant, jobs, clock):
    locator, _ = start(tenant, jobs, die=1)
    with pytest.raises(WorkerDied):
        jobs.drain()
    assert get_job(tenant, locator)["status"] == "running"

    past_the_lease(clock)
    assert reap_expired(tenant, clock.now()) == 1
    assert get_job(tenant, locator)["status"] == "queued"
    jobs.drain()

    job = get_job(tenant, locator)
    assert (job["status"], job["attempts"]) == ("finished", 2)


def past_its_lease(clock, tenant, locator):
    """The clock just past the job's own lease (a re-queued job still queued gets a longer one each time)."""
    clock.advance(seconds=(parse_datetime(get_job(tenant, locator)["leaseUntil"]) - clock.now()).total_seconds() + 1)


def test_the_reaper_gives_up_after_the_last_attempt(tenant, jobs, clock):
    locator, _ = start(tenant, jobs)
    for _ in range(MAX_ATTEMPTS):
        jobs.messages.clear()  # every message is lost
        past_its_lease(clock, tenant, locator)
        assert reap_expired(tenant, clock.now()) == 1
    jobs.messages.clear()
    sent = len(jobs.sent)

    past_its_lease(clock, tenant, locator)
    assert reap_expired(tenant, clock.now()) == 1

    job = get_job(tenant, locator)
    assert job["status"] == "failed"
    assert job["error"].startswith("job.lease_expired")
    assert len(jobs.sent) == sent  # no further message
    past_the_lease(clock)
    assert reap_expired(tenant, clock.now()) == 0


def test_a_job_queued_behind_a_backlog_is_sent_again_ever_later_and_failed_only_after_63_leases(tenant, jobs, clock):
    locator, _ = start(tenant, jobs, say="patient")
    lease = settings().job_lease_seconds
    resends = []
    for requeues in range(MAX_ATTEMPTS):
        before = get_job(tenant, locator)["leaseUntil"]
        past_its_lease(clock, tenant, locator)
        assert reap_expired(tenant, clock.now()) == 1
        job = get_job(tenant, locator)
        assert (job["status"], job["requeues"]) == ("queued", requeues + 1)
        resends.append(round((parse_datetime(job["leaseUntil"]) - parse_datetime(before)).total_seconds() / lease))
    assert resends == [2, 4, 8, 16, 32]  # each lease twice the last, counted from its own expiry (+1 s)
    job = get_job(tenant, locator)
    waited = parse_datetime(job["leaseUntil"]) - parse_datetime(job["createdAt"])
    assert round(waited.total_seconds() / lease) == 63  # the next reap fails it (the test above)

    assert jobs.drain() >= 1  # the backlog clears: the job runs once, however many of its messages wait
    job = get_job(tenant, locator)
    assert (job["status"], job["result"]["echo"], runs_of(tenant, locator)) == ("finished", "patient", 1)


def test_a_job_whose_worker_died_gets_one_lease_again_however_often_it_was_requeued(tenant, jobs, clock):
    locator, _ = start(tenant, jobs, die=2)
    for _ in range(2):
        with pytest.raises(WorkerDied):
            jobs.drain()
        past_the_lease(clock)
        assert reap_expired(tenant, clock.now()) == 1
        job = get_job(tenant, locator)
        assert parse_datetime(job["leaseUntil"]) - clock.now() == timedelta(seconds=settings().job_lease_seconds)
    jobs.drain()
    assert get_job(tenant, locator)["status"] == "finished"


def test_taking_over_requeues_the_jobs_left_before_a_moment_whatever_their_lease_and_no_later_one(tenant, jobs, clock):
    died, _ = start(tenant, jobs, die=1, say="died")
    with pytest.raises(WorkerDied):
        jobs.drain()
    lost, _ = start(tenant, jobs, say="lost")
    jobs.messages.clear()  # the run ends: its worker and its messages are gone
    clock.advance(minutes=1)
    started_at = clock.now()
    mine, _ = start(tenant, jobs, say="mine")  # enqueued by the new run, its message on the queue

    assert take_over(tenant, started_at, clock.now()) == 2

    assert [m.job_locator for m in jobs.sent[-2:]] == [died, lost]
    assert [get_job(tenant, job)["requeues"] for job in (died, lost, mine)] == [1, 1, 0]
    assert take_over(tenant, started_at, clock.now()) == 0
    assert jobs.drain() == 3
    assert [get_job(tenant, job)["result"]["echo"] for job in (died, lost, mine)] == ["died", "lost", "mine"]


# --- the Lambda entry points --------------------------------------------------------------------


def _run_for(queue, tenant):
    """Dispatch the queued messages of `tenant` only (other tests' tenants keep their own jobs)."""
    queue.messages = [m for m in queue.messages if JobMessage.model_validate_json(m).tenant == tenant]
    return queue.drain()


@pytest.mark.before_the_session_grows  # its schedule fans out over every tenant of the process
def test_the_reap_schedule_enqueues_one_reap_job_per_tenant_which_requeues_expired_jobs(api, tenant, jobs, clock):
    from chalicelib.identity import service as identity

    lost, _ = start(tenant, jobs)
    jobs.messages.clear()
    past_the_lease(clock)
    jobs.sent.clear()

    invoke_schedule(api, "reap_jobs")
    fan_out(jobs)

    reaps = Counter(m.tenant for m in jobs.sent if m.job_type == "jobs.reap")
    assert set(reaps.values()) == {1}
    assert set(reaps) == set(identity.list_tenant_locators())
    [reap] = [m for m in jobs.sent if m.tenant == tenant and m.job_type == JobType.REAP_JOBS]
    assert _run_for(jobs, tenant) == 2  # the reap job, then the job it re-queued
    assert get_job(tenant, reap.job_locator)["result"] == {"requeuedOrFailed": 1}
    assert get_job(tenant, lost)["status"] == "finished"


def test_the_sqs_worker_dispatches_the_message(api, tenant, jobs):
    locator, message = start(tenant, jobs, say="via sqs")

    api.lambda_.invoke("run_job", api.events.generate_sqs_event([message.model_dump_json()], queue_name="pas-jobs"))

    assert get_job(tenant, locator)["result"]["echo"] == "via sqs"


def test_the_sqs_worker_lets_a_transient_error_through_so_sqs_delivers_again(api, tenant, jobs):
    locator, message = start(tenant, jobs, crash=1)
    event = api.events.generate_sqs_event([message.model_dump_json()], queue_name="pas-jobs")

    with pytest.raises(RuntimeError):
        api.lambda_.invoke("run_job", event)
    api.lambda_.invoke("run_job", event)

    assert get_job(tenant, locator)["status"] == "finished"
