"""A deserialization job whose step never finishes (its messages lost, its worker killed) is marked
`interrupted` when the reaper gives the step up, and a restart continues it from the row it stopped at."""

from __future__ import annotations

import pytest

from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import MAX_ATTEMPTS
from chalicelib.schedules import service
from tests.api.schedules.support import (
    deserialize,
    deserialize_job,
    equipment_csv,
    every_item,
    run_one_step,
    schedule_path,
)
from tests.support.api import assert_error, call, event_types, ok
from tests.support.jobs import lose_every_message_until_given_up

ROWS = 600
CHUNK_ROWS = 250


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(service, "CHUNK_ROWS", CHUNK_ROWS)


def _give_up_the_queued_step(tenant, jobs, clock) -> None:
    """Every message of the queued step is lost until the reaper gives it up."""
    lose_every_message_until_given_up(tenant, jobs, clock)
    assert jobs.messages == []


def test_a_step_the_reaper_gives_up_interrupts_the_job_and_a_restart_continues_where_it_stopped(
    api, admin_token, tenant, quote, jobs, clock
):
    path = schedule_path(tenant, *quote)
    started = deserialize(api, admin_token, tenant, quote, equipment_csv(ROWS))
    locator = ok(started)["jobLocator"]
    run_one_step(jobs)  # rows 1-250 written, invisible; the step of rows 251-500 queued

    _give_up_the_queued_step(tenant, jobs, clock)

    job = deserialize_job(api, admin_token, tenant, locator)
    assert (job["jobState"], job["retryCount"]) == ("interrupted", 0)
    assert job["processingErrors"] == (
        f"Reading stopped after row 250: the step did not finish in {MAX_ATTEMPTS} "
        "attempts; restart continues from row 251"
    )
    assert event_types(api, admin_token, tenant, started) == [
        "schedule.deserialize.start",
        "schedule.deserialize.interrupt",
    ]
    assert every_item(api, admin_token, path) == []
    listed = ok(call(api, "GET", f"/policy/{tenant}/deserializeJobs/scheduleItems/list?state=interrupted", admin_token))
    assert [each["locator"] for each in listed["items"]] == [locator]

    restarted = call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{locator}/restart", admin_token)
    assert restarted.status_code == 200, restarted.body
    assert event_types(api, admin_token, tenant, restarted) == ["schedule.deserialize.restart"]
    job = deserialize_job(api, admin_token, tenant, locator)
    assert (job["jobState"], job["retryCount"]) == ("running", 1)
    assert "processingErrors" not in job
    assert [message.payload["step"] for message in jobs.sent[-1:]] == [1]  # the step that stopped, not the first

    assert jobs.drain() == 2  # rows 251-500 and 501-600: the first 250 are not read again
    job = deserialize_job(api, admin_token, tenant, locator)
    assert (job["jobState"], job["retryCount"]) == ("completed", 1)
    items = every_item(api, admin_token, path)
    assert [item["data"]["serial"] for item in items] == [f"EQ{n:04d}" for n in range(ROWS)]
    assert_error(
        call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{locator}/restart", admin_token),
        409,
        "deserializeJob.invalid_state",
    )


def test_an_interrupted_job_can_be_terminated_and_then_restarted_from_the_start(
    api, admin_token, tenant, quote, jobs, clock
):
    locator = ok(deserialize(api, admin_token, tenant, quote, equipment_csv(ROWS)))["jobLocator"]
    run_one_step(jobs)
    _give_up_the_queued_step(tenant, jobs, clock)

    terminated = call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{locator}/terminate", admin_token)
    assert terminated.status_code == 200, terminated.body
    assert deserialize_job(api, admin_token, tenant, locator)["jobState"] == "terminated"

    assert call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{locator}/restart", admin_token).status_code == 200
    assert deserialize_job(api, admin_token, tenant, locator)["jobState"] == "initialized"
    assert jobs.drain() == 4  # the terminated run's 250 items dropped, then three steps from the first row
    assert deserialize_job(api, admin_token, tenant, locator)["jobState"] == "completed"
    assert len(every_item(api, admin_token, schedule_path(tenant, *quote))) == ROWS


def test_a_step_given_up_after_the_job_moved_on_changes_nothing(api, admin_token, tenant, quote, jobs, clock):
    """The reaper gives up a step of a run that was terminated meanwhile: the job stays terminated."""
    started = deserialize(api, admin_token, tenant, quote, equipment_csv(ROWS))
    locator = ok(started)["jobLocator"]
    run_one_step(jobs)
    assert call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{locator}/terminate", admin_token).status_code == 200
    assert jobs.drain(job_types=frozenset({JobType.SCHEDULE_ITEMS_DROP_RUN.value})) == 1  # its items go
    _give_up_the_queued_step(tenant, jobs, clock)
    job = deserialize_job(api, admin_token, tenant, locator)
    assert job["jobState"] == "terminated"
    assert "processingErrors" not in job
    assert event_types(api, admin_token, tenant, started) == ["schedule.deserialize.start"]
