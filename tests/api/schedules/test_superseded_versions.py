"""After a patch or a delete commits, its cleanup job drops what no reader can show any more: a patched
item keeps only its visible version, a deleted item's record goes. A cleanup that stops halfway leaves
the committed items as they were, and runs again to the end. A deserialization run that never commits
(terminated, failed) has its items dropped too."""

from __future__ import annotations

import pytest

from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import get_job
from chalicelib.schedules import repository, service
from chalicelib.schedules.models import Owner, sequential_locators
from tests.api.schedules.support import (
    deserialize,
    deserialize_job,
    equipment_csv,
    every_item,
    item,
    run_one_step,
    schedule_path,
)
from tests.support.api import call, ok

CLEANUP = frozenset({JobType.SCHEDULE_ITEMS_CLEANUP.value})
DROP_RUN = frozenset({JobType.SCHEDULE_ITEMS_DROP_RUN.value})


def _stored(tenant: str, quote: tuple[str, str], locators: list[str]) -> dict[str, int]:
    """How many versions each stored record of `locators` holds (a deleted record is absent)."""
    partition = repository.partition(tenant, Owner(kind="quote", locator=quote[0], staticElementLocator=quote[1]))
    return {
        locator: len(found.versions)
        for locator, found in repository.items_by_locator(tenant, partition, locators).items()
    }


def _changed(api, token, tenant, quote) -> tuple[list[dict], list[str]]:
    """60 items, the first 40 patched and the last 20 deleted; the visible items and every locator."""
    path = schedule_path(tenant, *quote)
    ok(call(api, "PUT", path, token, [item(f"AB{n:04d}", value=str(n)) for n in range(60)]))
    locators = [entry["locator"] for entry in every_item(api, token, path)]
    ok(
        call(
            api,
            "PATCH",
            path,
            token,
            [{"locator": locator, "setData": {"kind": "phone"}, "removeData": {}} for locator in locators[:40]],
        )
    )
    assert call(api, "DELETE", path, token, locators[40:]).status_code == 200
    return every_item(api, token, path), locators


def test_the_cleanup_keeps_the_visible_version_of_patched_items_and_removes_deleted_ones(
    api, admin_token, tenant, quote, jobs
):
    visible, locators = _changed(api, admin_token, tenant, quote)
    assert [entry["data"]["kind"] for entry in visible] == ["phone"] * 40
    assert _stored(tenant, quote, locators) == {locator: 2 for locator in locators}  # before the cleanup

    assert jobs.drain(job_types=CLEANUP) == 2  # the patch's and the delete's

    assert _stored(tenant, quote, locators) == {locator: 1 for locator in locators[:40]}
    assert every_item(api, admin_token, schedule_path(tenant, *quote)) == visible
    patched = call(
        api,
        "PATCH",
        schedule_path(tenant, *quote),
        admin_token,
        [{"locator": locators[0], "setData": {"value": "7"}, "removeData": {}}],
    )
    assert ok(patched)["success"] is True  # the cleanup let the schedule's lock go
    assert every_item(api, admin_token, schedule_path(tenant, *quote))[0]["data"]["value"] == 7


def test_a_cleanup_that_fails_halfway_leaves_the_committed_items_and_finishes_when_run_again(
    api, admin_token, tenant, quote, jobs, monkeypatch
):
    visible, locators = _changed(api, admin_token, tenant, quote)
    trimmed_only = monkeypatch.context()
    with trimmed_only as patch:

        def broken(tenant: str, partition: str, locators: list[str]) -> None:
            if locators:
                raise ConnectionError("the worker lost DynamoDB")

        patch.setattr(repository, "delete_items", broken)
        with pytest.raises(ConnectionError):
            jobs.drain(job_types=CLEANUP)  # the patch's cleanup ran; the delete's stopped after trimming
    assert every_item(api, admin_token, schedule_path(tenant, *quote)) == visible
    assert _stored(tenant, quote, locators) == {
        **{locator: 1 for locator in locators[:40]},
        **{locator: 2 for locator in locators[40:]},
    }

    jobs.messages.extend(message.model_dump_json() for message in jobs.sent[-1:])  # SQS delivers it again
    assert jobs.drain(job_types=CLEANUP) == 1
    assert _stored(tenant, quote, locators) == {locator: 1 for locator in locators[:40]}
    assert every_item(api, admin_token, schedule_path(tenant, *quote)) == visible


# --- the items of deserialization runs that never commit ------------------------------------------------

RUN_ROWS = 600
"""Three steps of 250 rows."""


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(service, "CHUNK_ROWS", 250)


def _run_items(tenant: str, job_locator: str, count: int = RUN_ROWS) -> int:
    """How many of the first `count` items of the job's current run are stored, visible or not."""
    job = repository.get_job(tenant, job_locator)
    assert job is not None
    return len(
        repository.items_by_locator(
            tenant, repository.partition(tenant, job.owner), sequential_locators(job.firstItemLocator, count)
        )
    )


def test_a_terminated_run_drops_its_items_and_a_step_in_flight_drops_its_own(
    api, admin_token, tenant, quote, jobs, small_chunks, monkeypatch
):
    locator = ok(deserialize(api, admin_token, tenant, quote, equipment_csv(RUN_ROWS)))["jobLocator"]
    run_one_step(jobs)
    assert _run_items(tenant, locator) == 250
    validated = service._validated

    def terminated_meanwhile(*args):
        assert (
            call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{locator}/terminate", admin_token).status_code == 200
        )
        return validated(*args)

    monkeypatch.setattr(service, "_validated", terminated_meanwhile)
    run_one_step(jobs)  # rows 251-500 written, then its commit fails: it deletes them
    monkeypatch.setattr(service, "_validated", validated)
    assert _run_items(tenant, locator) == 250
    assert deserialize_job(api, admin_token, tenant, locator)["jobState"] == "terminated"

    assert jobs.drain(job_types=DROP_RUN) == 1
    assert _run_items(tenant, locator) == 0
    [dropped] = [m for m in jobs.sent if m.job_type == JobType.SCHEDULE_ITEMS_DROP_RUN]
    assert get_job(tenant, dropped.job_locator)["result"] == {"deleted": 250}

    assert call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{locator}/restart", admin_token).status_code == 200
    jobs.drain()
    assert _run_items(tenant, locator) == RUN_ROWS
    assert len(every_item(api, admin_token, schedule_path(tenant, *quote))) == RUN_ROWS


def test_a_failed_run_drops_the_items_it_wrote(api, admin_token, tenant, quote, jobs, small_chunks):
    locator = ok(deserialize(api, admin_token, tenant, quote, equipment_csv(RUN_ROWS, {400: "EQ0400,tablet,1,false"})))[
        "jobLocator"
    ]
    run_one_step(jobs)
    assert _run_items(tenant, locator) == 250
    jobs.drain()
    job = deserialize_job(api, admin_token, tenant, locator)
    assert (job["jobState"], job["processingErrors"]) == ("failed", "row 400: data.kind: must be one of: laptop, phone")
    assert _run_items(tenant, locator) == 0
    assert every_item(api, admin_token, schedule_path(tenant, *quote)) == []
