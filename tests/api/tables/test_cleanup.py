"""The tables.cleanup job deletes the rows of superseded versions and of uploads that lost their final
transaction, never those of a version some lookup may still choose (current, scheduled, or in force
within the retention); it is safe to run again. A static name takes any number of versions."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from chalicelib.core.errors import ConcurrentModification
from chalicelib.runtime import wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import enqueue, get_job
from chalicelib.storage import keys, query, table
from chalicelib.tables import repository, service
from chalicelib.tables.models import TableKind, VersionEntry
from tests.api.configuration.support import ok
from tests.api.tables.support import RATES_V1, RATES_V2, create, record, replace, tables_model, tables_tenant, value_of
from tests.builders import system_ctx
from tests.support.schedules import fan_out, invoke_schedule

RATES_V3 = "state,age,factor,note\nCA,18,1.70,\nCA,30,0.90,\n"
SCHEDULED = "state,age,factor,note\nCA,18,1.60,\n"


def factor(api, token, tenant, **query):
    return value_of(record(api, token, tenant, "table", "Rates", key=["CA", "18"], **query))["factor"]


def versions_of(tenant: str) -> dict[str, int]:
    """version locator -> its row items, for every version the selection lists."""
    selection = repository.get_selection(tenant, TableKind.LOOKUP, "Rates")
    return {e.version: repository.rows_of_version(tenant, e.version, e.shards) for e in selection.entries}


def clean(tenant: str, jobs) -> dict:
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    locator = enqueue(uow, JobType.TABLES_CLEANUP)
    uow.commit()
    jobs.drain()
    job = get_job(tenant, locator)
    assert job is not None and job["status"] == "finished", job
    return job["result"]


def lost_upload(tenant: str, text: str) -> str:
    """A replace of Rates2026 that read the instance, then lost its final transaction to another upload."""
    ctx = system_ctx().for_tenant(tenant)
    stale = repository.get_instance(tenant, TableKind.LOOKUP, "Rates2026")
    service.replace_table(ctx, TableKind.LOOKUP, "Rates2026", _zip(RATES_V3))  # the winner
    with pytest.raises(ConcurrentModification):
        service._store(
            ctx, TableKind.LOOKUP, "Rates2026", "Rates", (), text.encode(), ctx.now, tables_model(), replacing=stale
        )
    (pending,) = query.all_items(
        table.gateway(), keys.tenant_scope(tenant), keys.tables_partition(tenant), sk_prefix="P#"
    )
    return pending["version"]


def _zip(text: str) -> bytes:
    from tests.api.tables.support import csv_zip

    return csv_zip(text)


@pytest.fixture
def rates(api, admin_token, clock, jobs):
    """Rates2026: v1 at the start, v2 ten days later, then (at the same moment) v3 that supersedes v2
    before it was ever in force; and a version scheduled for 2030."""
    tenant = tables_tenant(api, admin_token)
    ok(create(api, admin_token, tenant, "table", "Rates2026", "Rates", RATES_V1))
    clock.advance(days=10)
    ok(replace(api, admin_token, tenant, "table", "Rates2026", RATES_V2))
    ok(replace(api, admin_token, tenant, "table", "Rates2026", RATES_V3))
    ctx = system_ctx().for_tenant(tenant)
    instance = repository.get_instance(tenant, TableKind.LOOKUP, "Rates2026")
    service._store(
        ctx,
        TableKind.LOOKUP,
        "Rates2026",
        "Rates",
        (),
        SCHEDULED.encode(),
        ctx.now.replace(year=2030),
        tables_model(),
        replacing=instance,
    )
    return tenant


def test_superseded_and_lost_versions_lose_their_rows_and_current_and_scheduled_ones_keep_them(
    api, admin_token, clock, jobs, rates
):
    v1, v2, v3, scheduled = versions_of(rates)
    lost = lost_upload(rates, RATES_V2)
    winner = list(versions_of(rates))[-1]
    assert repository.rows_of_version(rates, lost, 1) == 2

    clean(rates, jobs)  # with the cleanups the replacements enqueued

    assert versions_of(rates) == {v1: 3, scheduled: 1, winner: 2}  # v2 and v3: superseded by the winner
    assert repository.rows_of_version(rates, v2, 1) == repository.rows_of_version(rates, lost, 1) == 2  # grace
    clock.advance(hours=1, seconds=1)  # GARBAGE_GRACE
    assert clean(rates, jobs) == {"retired": 0, "lostUploads": 1, "versionsDeleted": 3, "rowsDeleted": 2 + 2 + 2}

    assert versions_of(rates) == {v1: 3, scheduled: 1, winner: 2}
    assert repository.rows_of_version(rates, v2, 1) == repository.rows_of_version(rates, v3, 1) == 0
    assert repository.rows_of_version(rates, lost, 1) == 0
    assert factor(api, admin_token, rates) == Decimal("1.70")  # the winner, current
    assert factor(api, admin_token, rates, date="2026-01-16T00:00:00Z") == Decimal("1.80")  # v1, within retention
    assert factor(api, admin_token, rates, date="2030-06-01T00:00:00Z") == Decimal("1.60")  # scheduled
    assert clean(rates, jobs) == {"retired": 0, "lostUploads": 0, "versionsDeleted": 0, "rowsDeleted": 0}


def test_a_version_out_of_force_for_longer_than_the_retention_goes_but_current_and_scheduled_stay(
    api, admin_token, clock, jobs, rates
):
    v1, v2, v3, scheduled = versions_of(rates)
    clock.advance(days=service.VERSION_RETENTION.days + 1)

    clean(rates, jobs)
    clock.advance(hours=2)
    assert clean(rates, jobs)["versionsDeleted"] == 2

    assert versions_of(rates) == {v3: 2, scheduled: 1}
    assert repository.rows_of_version(rates, v1, 1) == repository.rows_of_version(rates, v2, 1) == 0
    ctx = system_ctx().for_tenant(rates)  # a year on, the admin's session has expired

    def looked_up(at=None):
        return service.lookup(ctx, "Rates", ["CA", "18"], at=at)["factor"]

    assert looked_up() == Decimal("1.70")
    assert looked_up(datetime(2026, 1, 16, tzinfo=timezone.utc)) == Decimal("1.70")  # rule 3: the earliest kept
    assert looked_up(datetime(2030, 6, 1, tzinfo=timezone.utc)) == Decimal("1.60")


def test_an_upload_still_writing_its_rows_is_left_alone(api, admin_token, clock, jobs, rates):
    lost = lost_upload(rates, RATES_V2)

    clock.advance(minutes=30)
    assert clean(rates, jobs)["lostUploads"] == 0
    assert repository.rows_of_version(rates, lost, 1) == 2


@pytest.mark.before_the_session_grows  # its schedule fans out over every tenant of the process
def test_the_daily_schedule_enqueues_one_cleanup_per_tenant(api, admin_token, clock, jobs, rates):
    lost_upload(rates, RATES_V2)
    clock.advance(hours=2)
    jobs.messages.clear()

    jobs.sent.clear()

    invoke_schedule(api, "clean_up_tables")
    fan_out(jobs)

    assert Counter(m.tenant for m in jobs.sent if m.job_type == JobType.TABLES_CLEANUP)[rates] == 1
    (mine,) = [m for m in jobs.sent if m.tenant == rates and m.job_type == JobType.TABLES_CLEANUP]
    jobs.messages = [mine.model_dump_json()]  # other tests' tenants keep their own jobs
    jobs.drain()
    # the lost upload's rows go at once (it began long ago); the retired versions' rows after the grace
    assert get_job(rates, mine.job_locator)["result"] == {
        "retired": 2,
        "lostUploads": 1,
        "versionsDeleted": 1,
        "rowsDeleted": 2,
    }


THROUGH_ADD_VERSION = range(repository.INLINE_ENTRIES - 5, repository.INLINE_ENTRIES + 6)
"""Versions the 520-version test adds through repository.add_version, one transaction each, so its records
cross from inline to spilled versions that way; the others are written in bulk, as add_version leaves them."""


def as_if_added_one_by_one(tenant: str, instance, selection, later: list[tuple[int, int, VersionEntry]]) -> None:
    """What repository.add_version leaves once it added the `later` versions (instance entry number, selection
    entry number, entry) one by one, `instance` and `selection` holding them: their entry items in one batch
    write, and both records as they are then (versions inline or spilled), without a transaction per version."""
    scope, gateway = keys.tenant_scope(tenant), table.gateway()
    gateway.batch_write(
        scope,
        [
            item
            for own, shared, entry in later
            for item in (
                {
                    **keys.table_instance_entry(tenant, TableKind.LOOKUP, instance.name, own).as_dict(),
                    **repository._entry_body(entry),
                },
                {
                    **keys.table_selection_entry(tenant, TableKind.LOOKUP, instance.staticName, shared).as_dict(),
                    **repository._entry_body(entry),
                },
            )
        ],
    )
    for key, stored in (
        (keys.table_instance(tenant, TableKind.LOOKUP, instance.name), instance.selection),
        (keys.table_selection(tenant, TableKind.LOOKUP, instance.staticName), selection),
    ):
        gateway.write(scope, table.update(key, {**repository._selection_body(stored), "version": stored.revision}))


def stored_spilled(tenant: str) -> tuple[bool, bool]:
    """Whether the stored instance and selection records of Rates2026 keep their versions apart."""
    scope, gateway = keys.tenant_scope(tenant), table.gateway()
    instance = gateway.get(scope, keys.table_instance(tenant, TableKind.LOOKUP, "Rates2026"))
    selection = gateway.get(scope, keys.table_selection(tenant, TableKind.LOOKUP, "Rates"))
    assert instance is not None and selection is not None
    return instance["spilled"], selection["spilled"]


def test_more_than_500_versions_of_one_static_name_keep_working(api, admin_token, clock, jobs):
    tenant = tables_tenant(api, admin_token)
    ok(create(api, admin_token, tenant, "table", "Rates2026", "Rates", RATES_V1))
    instance = repository.get_instance(tenant, TableKind.LOOKUP, "Rates2026")
    selection = repository.get_selection(tenant, TableKind.LOOKUP, "Rates")
    schema = next(iter(selection.schemas.values()))
    start = clock.now()
    later: list[tuple[int, int, VersionEntry]] = []
    spilled: list[tuple[bool, bool]] = []
    for number in range(1, 521):  # straight through the repository: the API would take minutes
        entry = instance.selection.entries[0].model_copy(
            update={
                "version": f"V{number:09d}",
                "effectiveFrom": start + timedelta(minutes=number),
                "createdAt": start + timedelta(minutes=number),
            }
        )
        if number % 100 == 0:
            rows = {"CA|18": {"factor": Decimal(number), "note": None}}
            repository.write_lookup_rows(tenant, entry.version, entry.shards, rows)
        if number in THROUGH_ADD_VERSION and later:
            as_if_added_one_by_one(tenant, instance, selection, later)
            later = []
        instance = instance.model_copy(update={"selection": instance.selection.with_entry(entry, schema)})
        selection = selection.with_entry(entry, schema)
        if number in THROUGH_ADD_VERSION:
            repository.mark_pending_upload(tenant, TableKind.LOOKUP, entry, clock.now())
            uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
            repository.add_version(uow, tenant, instance, selection)
            uow.commit()
            spilled.append(stored_spilled(tenant))
        else:
            later.append((instance.selection.revision + 1, selection.revision + 1, entry))
        instance = instance.model_copy(
            update={"selection": instance.selection.model_copy(update={"revision": instance.selection.revision + 1})}
        )
        selection = selection.model_copy(update={"revision": selection.revision + 1})
    as_if_added_one_by_one(tenant, instance, selection, later)
    assert spilled[0] == (False, False) and spilled[-1] == (True, True)  # add_version crossed over
    clock.advance(days=1)

    ok(replace(api, admin_token, tenant, "table", "Rates2026", RATES_V2))

    assert len(repository.get_selection(tenant, TableKind.LOOKUP, "Rates").entries) == 522
    assert factor(api, admin_token, tenant) == Decimal("1.75")
    assert factor(api, admin_token, tenant, date=(start + timedelta(minutes=300, seconds=30)).isoformat()) == 300
    assert factor(api, admin_token, tenant, date=(start + timedelta(minutes=500)).isoformat()) == 500
    assert (
        value_of(
            record(
                api,
                admin_token,
                tenant,
                "table",
                "Rates2026",
                key=["CA", "18"],
                byStaticName="false",
                date=(start + timedelta(minutes=200)).isoformat(),
            )
        )["factor"]
        == 200
    )
    assert factor(api, admin_token, tenant, date="2020-01-01T00:00:00Z") == Decimal("1.80")
