"""The tables.bootstrap job is safe to run again: a rerun, a second job beside the first, and a step
killed half-way through a table all end with every table loaded once and no failure recorded; a step
the reaper gives up on fails its tables and those after it in the bootstrap status."""

from __future__ import annotations

import functools
from decimal import Decimal
from pathlib import PurePosixPath

import pytest

from chalicelib.core import codes
from chalicelib.runtime import wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import JobMessage, JobStatus, dispatch, enqueue, get_job
from chalicelib.settings import settings
from chalicelib.tables import repository, service
from tests.api.configuration.support import create_tenant, ok
from tests.api.tables.support import MGT_TABLES, bootstrap, bootstrap_results, headers, record, statuses, value_of
from tests.builders import system_ctx
from tests.support.jobs import lose_every_message_until_given_up
from tests.unit.configuration.zips import FIXTURES, directory_files, zip_files

CSVS = sorted({path.stem for path in sorted(MGT_TABLES.glob("*.csv"))[::3]} | {"Territory", "DiscountFactorsTenure"})
ROWS_KEPT = 150
"""The retries are about the job, not the data (test_bootstrap.py loads every table and row of the real
package): here mgt-commercial keeps the files of every third of its 71 tables and of the two read below (a
resource instance without a file is not bootstrapped), each cut to its first rows (the ones read among them)."""
STEP_BYTES = 5_000
"""Small steps, so the cut tables take several."""


class WorkerKilled(BaseException):
    """Stands in for the function timeout: nothing in dispatch can catch it."""


@pytest.fixture
def small_steps(monkeypatch):
    monkeypatch.setattr(service, "BOOTSTRAP_STEP_BYTES", STEP_BYTES)


def events(api, token, tenant, event_type):
    found, paging = [], None
    while True:
        query = f"pagingToken={paging}" if paging else f"type={event_type}&pageSize=100"
        page = ok(api.http.get(f"/event/{tenant}/events/list?{query}", headers=headers(token)))
        found += page["events"]
        paging = page.get("pagingToken")
        if not page["events"] or not paging:
            return found


def assert_every_table_loaded_once(api, token, tenant):
    assert statuses(api, token, tenant) == {name: ("table", "created", None) for name in CSVS}
    created = [e["data"]["name"] for e in events(api, token, tenant, "resource.table.create")]
    assert sorted(created) == CSVS
    assert events(api, token, tenant, service.BOOTSTRAP_FAILED_EVENT) == []
    territory = record(api, token, tenant, "table", "Territory", key=["16055"], date="2021-06-01T00:00:00Z")
    assert value_of(territory)["city"] == "Sarver"
    discount = record(api, token, tenant, "table", "DiscountFactorsTenure", key=["1"])
    assert discount.status_code == 200, discount.json_body


@functools.cache
def mgt_commercial_cut_short() -> bytes:
    files = directory_files(FIXTURES / "mgt-commercial")
    tables = MGT_TABLES.relative_to(FIXTURES / "mgt-commercial").as_posix()
    for name, content in list(files.items()):
        if name.startswith(tables) and name.endswith(".csv"):  # none has a quoted line break
            if PurePosixPath(name).stem in CSVS:
                files[name] = b"".join(content.splitlines(keepends=True)[: 1 + ROWS_KEPT])
            else:
                del files[name]
    return zip_files(files)


def new_tenant(api, token, jobs) -> tuple[str, JobMessage]:
    tenant = ok(create_tenant(api, token, mgt_commercial_cut_short()))["locator"]
    (message,) = [m for m in jobs.sent if m.tenant == tenant]
    return tenant, message


def enqueue_bootstrap(tenant: str) -> str:
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    locator = enqueue(uow, JobType.TABLES_BOOTSTRAP)
    uow.commit()
    return locator


def test_the_bootstrap_loads_in_steps_that_each_enqueue_the_next(api, admin_token, jobs, small_steps):
    tenant, _ = new_tenant(api, admin_token, jobs)

    jobs.drain()

    steps = [m for m in jobs.sent if m.tenant == tenant]
    assert len(steps) >= 5, len(steps)
    assert [m.payload.get("cursor", 0) for m in steps] == sorted(m.payload.get("cursor", 0) for m in steps)
    assert bootstrap_results(tenant, jobs) == {"created": len(CSVS), "failed": 0, "skipped": 0}
    assert get_job(tenant, steps[-1].job_locator)["result"]["remaining"] == 0
    assert_every_table_loaded_once(api, admin_token, tenant)


def test_running_the_job_again_after_it_finished_loads_nothing_twice(api, admin_token, jobs, small_steps):
    tenant, first = new_tenant(api, admin_token, jobs)
    jobs.drain()
    first_steps = len(jobs.sent)

    enqueue_bootstrap(tenant)
    jobs.drain()

    (rerun,) = [m.job_locator for m in jobs.sent[first_steps:]]  # its next step was enqueued (and ran) before
    result = get_job(tenant, rerun)["result"]
    assert (result["created"], result["failed"]) == (0, 0)
    assert result["skipped"] == get_job(tenant, first.job_locator)["result"]["created"] > 0
    assert_every_table_loaded_once(api, admin_token, tenant)


def test_two_bootstrap_jobs_side_by_side_load_every_table_once_and_share_their_next_steps(
    api, admin_token, jobs, small_steps
):
    tenant, _ = new_tenant(api, admin_token, jobs)
    enqueue_bootstrap(tenant)  # e.g. the reaper re-queued the first while it still ran

    jobs.drain()

    firsts = [m for m in jobs.sent if m.tenant == tenant and not m.payload.get("cursor")]
    continuations = [m.payload["cursor"] for m in jobs.sent if m.tenant == tenant and m.payload.get("cursor")]
    assert len(firsts) == 2
    assert len(continuations) == len(set(continuations))  # each later step enqueued once
    assert bootstrap_results(tenant, jobs)["created"] == len(CSVS)
    assert_every_table_loaded_once(api, admin_token, tenant)


def test_a_step_the_reaper_gives_up_on_fails_its_tables_and_the_later_ones_and_the_loaded_stay_created(
    api, admin_token, jobs, clock, small_steps
):
    tenant, first = new_tenant(api, admin_token, jobs)
    jobs.messages.clear()
    assert dispatch(first) == JobStatus.FINISHED  # it enqueues the second step, whose messages all get lost
    loaded = int(get_job(tenant, first.job_locator)["result"]["created"])
    lose_every_message_until_given_up(tenant, jobs, clock)

    listed = statuses(api, admin_token, tenant)
    gave_up = ("table", "failed", "job.lease_expired: gave up after the last attempt")
    names = in_record_order(api, admin_token, tenant)
    assert 0 < loaded < len(names)
    assert [listed[name] for name in names] == [("table", "created", None)] * loaded + [gave_up] * (len(names) - loaded)


def test_a_step_killed_half_way_through_a_table_is_taken_over_and_finishes_it(
    api, admin_token, jobs, clock, small_steps, monkeypatch
):
    tenant, message = new_tenant(api, admin_token, jobs)
    add_version = repository.add_version
    committed = []

    def killed_before_the_fourth_commit(uow, tenant_, instance, selection):
        if len(committed) == 3:
            raise WorkerKilled()  # its rows are written, its final transaction never runs
        committed.append(instance.name)
        add_version(uow, tenant_, instance, selection)

    monkeypatch.setattr(repository, "add_version", killed_before_the_fourth_commit)
    with pytest.raises(WorkerKilled):
        jobs.drain()
    monkeypatch.setattr(repository, "add_version", add_version)
    assert get_job(tenant, message.job_locator)["status"] == JobStatus.RUNNING.value
    half_loaded = in_record_order(api, admin_token, tenant)[3]
    assert statuses(api, admin_token, tenant)[half_loaded] == ("table", "queued", None)

    assert dispatch(message) is None  # redelivered while the lease still runs: the worker may be alive
    clock.advance(seconds=settings().job_lease_seconds + 1)
    jobs.send(message.model_dump_json())  # SQS delivers it again once its visibility timeout ends
    jobs.drain()

    job = get_job(tenant, message.job_locator)
    assert (job["status"], job["attempts"]) == ("finished", 2)
    assert job["result"]["skipped"] == 3
    assert bootstrap_results(tenant, jobs) == {"created": len(CSVS) - 3, "failed": 0, "skipped": 3}
    assert_every_table_loaded_once(api, admin_token, tenant)


def in_record_order(api, token, tenant) -> list[str]:
    return [s["name"] for s in bootstrap(api, token, tenant)]


def test_a_failure_is_recorded_once_and_never_over_a_loaded_table(api, admin_token, jobs):
    tenant, _ = new_tenant(api, admin_token, jobs)
    jobs.drain()
    ctx = system_ctx().for_tenant(tenant)
    name = CSVS[0]
    before = statuses(api, admin_token, tenant)[name]

    assert (
        service._record_bootstrap_failure(
            ctx, name, service.TableKind.LOOKUP, codes.TABLE_ALREADY_EXISTS["table"]("table x already exists")
        )
        is False
    )

    assert statuses(api, admin_token, tenant)[name] == before == ("table", "created", None)
    assert events(api, admin_token, tenant, service.BOOTSTRAP_FAILED_EVENT) == []
    assert value_of(record(api, admin_token, tenant, "table", "Territory", key=["16055"], date="2021-06-01T00:00:00Z"))[
        "territory"
    ] == Decimal("513")
