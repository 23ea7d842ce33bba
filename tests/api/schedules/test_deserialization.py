"""Deserialization jobs through the API: a file of 1,200 rows read in chunks of 250 (one job step each),
terminated and restarted, its items shown only when the run completes; files that fail; the job list by
type and state. (A 100,000-row file: test_large_file.py, and benchmarks/schedules.py for its rate.)"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from chalicelib.schedules import service
from tests.api.quotes.support import UNKNOWN
from tests.api.schedules.support import (
    PARAMS,
    deserialize,
    deserialize_job,
    equipment_csv,
    every_item,
    run_one_step,
    schedule_path,
)
from tests.support.api import assert_error, call, event_types, ok

ROWS = 1200
CHUNK_ROWS = 250
"""Smaller than the service's chunk (2,000 rows): the steps are the same, and moto writes a fifth of the items."""


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(service, "CHUNK_ROWS", CHUNK_ROWS)


def test_a_file_is_read_in_chunks_terminated_restarted_and_shown_whole_when_done(api, admin_token, tenant, quote, jobs):
    path = schedule_path(tenant, *quote)
    started = deserialize(api, admin_token, tenant, quote, equipment_csv(ROWS))
    locator = ok(started)["jobLocator"]
    assert event_types(api, admin_token, tenant, started) == ["schedule.deserialize.start"]
    job = deserialize_job(api, admin_token, tenant, locator)
    assert job["jobState"] == "initialized" and job["retryCount"] == 0 and job["jobType"] == "scheduleItems"
    assert job["metadata"] == {
        "referenceLocator": quote[0],
        "staticElementLocator": quote[1],
        "fileName": "fleet.csv",
        "referenceType": "quote",
        "fileSize": len(equipment_csv(ROWS)),
        "params": {"source": "fleet"},
    }

    run_one_step(jobs)  # the first CHUNK_ROWS rows, written but not shown
    assert deserialize_job(api, admin_token, tenant, locator)["jobState"] == "running"
    assert every_item(api, admin_token, path) == []

    terminated = call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{locator}/terminate", admin_token)
    assert terminated.status_code == 200, terminated.body
    assert event_types(api, admin_token, tenant, terminated) == ["schedule.deserialize.terminate"]
    jobs.drain()  # the queued step of the terminated run does nothing
    assert deserialize_job(api, admin_token, tenant, locator)["jobState"] == "terminated"
    assert every_item(api, admin_token, path) == []
    assert_error(
        call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{locator}/terminate", admin_token),
        409,
        "deserializeJob.invalid_state",
    )

    restarted = call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{locator}/restart", admin_token)
    assert restarted.status_code == 200, restarted.body
    job = deserialize_job(api, admin_token, tenant, locator)
    assert (job["jobState"], job["retryCount"]) == ("initialized", 1)
    run_one_step(jobs)
    assert every_item(api, admin_token, path) == []
    assert jobs.drain() == -(-ROWS // CHUNK_ROWS) - 1
    job = deserialize_job(api, admin_token, tenant, locator)
    assert (job["jobState"], job["retryCount"]) == ("completed", 1)
    assert "processingErrors" not in job

    items = every_item(api, admin_token, path)
    assert len(items) == ROWS  # the terminated run's items never show
    assert [item["data"]["serial"] for item in items[:3]] == ["EQ0000", "EQ0001", "EQ0002"]
    assert items[1]["data"] == {"serial": "EQ0001", "kind": "laptop", "value": Decimal("1.50"), "insured": False}
    assert items[-1]["data"]["value"] == Decimal(f"{ROWS - 1}.50")
    assert_error(
        call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{locator}/restart", admin_token),
        409,
        "deserializeJob.invalid_state",
    )


def test_invalid_rows_fail_the_job_with_processing_errors_and_nothing_shows(api, admin_token, tenant, quote, jobs):
    bad = {2: "EQ0001,tablet,1,false", 600: "EQ0600,phone,lots,false", 1100: "EQ1100,phone,1"}
    locator = ok(deserialize(api, admin_token, tenant, quote, equipment_csv(ROWS, bad)))["jobLocator"]
    jobs.drain()
    job = deserialize_job(api, admin_token, tenant, locator)
    assert job["jobState"] == "failed"
    assert job["processingErrors"] == (
        "row 2: data.kind: must be one of: laptop, phone; "
        "row 600: data.value: must be a number; "
        "row 1100: has 3 cells where the header has 4"
    )
    assert every_item(api, admin_token, schedule_path(tenant, *quote)) == []
    failed = ok(call(api, "GET", f"/policy/{tenant}/deserializeJobs/scheduleItems/list?state=failed", admin_token))
    assert [each["locator"] for each in failed["items"]] == [locator] and failed["listCompleted"] is True


def test_the_job_stops_at_max_validation_errors(api, admin_token, tenant, quote, jobs):
    bad = {n: f"bad{n},phone,1,false" for n in range(1, 200)}
    locator = ok(deserialize(api, admin_token, tenant, quote, equipment_csv(ROWS, bad)))["jobLocator"]
    assert jobs.drain() == 1  # the first chunk holds 50 errors already: no further step
    job = deserialize_job(api, admin_token, tenant, locator)
    assert job["jobState"] == "failed"
    assert job["processingErrors"].count("row ") == 50


def test_a_json_file_of_item_data_is_read_too(api, admin_token, tenant, quote, jobs):
    entries = [{"serial": f"JS{n:04d}", "kind": "phone", "value": n} for n in range(400)]
    entries[7] = {"data": {"serial": "JS0007", "kind": "laptop", "value": "7.125", "tags": ["a", "b"]}}
    locator = ok(deserialize(api, admin_token, tenant, quote, json.dumps(entries), name="fleet.json"))["jobLocator"]
    assert jobs.drain() == 2  # 250 items, then 150
    assert deserialize_job(api, admin_token, tenant, locator)["jobState"] == "completed"
    items = every_item(api, admin_token, schedule_path(tenant, *quote))
    assert len(items) == 400
    assert items[7]["data"] == {"serial": "JS0007", "kind": "laptop", "value": Decimal("7.13"), "tags": ["a", "b"]}


def test_bad_files_and_unknown_jobs_are_refused(api, admin_token, tenant, quote, jobs):
    headers = {"Authorization": f"Bearer {admin_token}", "Content-Type": "text/csv"}
    path = schedule_path(tenant, quote[0], quote[1], f"/deserialize?{PARAMS}")
    assert_error(
        api.http.post(path, body=b"serial,owner.name\nAB0001,Ada\n", headers=headers), 400, "schedule.nested_column"
    )
    assert_error(api.http.post(path, body=b"", headers=headers), 400, "schedule.file_invalid")
    assert_error(
        api.http.post(
            schedule_path(tenant, quote[0], quote[1], "/deserialize"), body=b"serial\nAB0001\n", headers=headers
        ),
        400,
        "request.invalid",
    )
    assert_error(
        call(api, "GET", f"/policy/{tenant}/deserializeJobs/{UNKNOWN}", admin_token), 404, "deserializeJob.not_found"
    )
    assert_error(
        call(api, "PATCH", f"/policy/{tenant}/deserializeJobs/{UNKNOWN}/restart", admin_token),
        404,
        "deserializeJob.not_found",
    )
    assert ok(call(api, "GET", f"/policy/{tenant}/deserializeJobs/{UNKNOWN}/list", admin_token)) == {
        "listCompleted": True,
        "items": [],
    }
    assert_error(
        call(api, "GET", f"/policy/{tenant}/deserializeJobs/scheduleItems/list?state=sleeping", admin_token),
        400,
        "request.invalid",
    )
    assert jobs.messages == []


def test_jobs_list_by_type_and_state_oldest_first(api, admin_token, tenant, quote, jobs):
    first = ok(deserialize(api, admin_token, tenant, quote, equipment_csv(10)))["jobLocator"]
    jobs.drain()
    second = ok(deserialize(api, admin_token, tenant, quote, equipment_csv(10)))["jobLocator"]
    every = ok(call(api, "GET", f"/policy/{tenant}/deserializeJobs/scheduleItems/list", admin_token))
    assert [job["locator"] for job in every["items"]] == [first, second]
    both = ok(
        call(
            api,
            "GET",
            f"/policy/{tenant}/deserializeJobs/scheduleItems/list?state=completed&state=initialized&count=1",
            admin_token,
        )
    )
    assert ([job["locator"] for job in both["items"]], both["listCompleted"]) == ([first], False)
    completed = ok(
        call(api, "GET", f"/policy/{tenant}/deserializeJobs/scheduleItems/list?state=completed", admin_token)
    )
    assert [job["jobState"] for job in completed["items"]] == ["completed"]
