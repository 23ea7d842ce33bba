"""The due pager (runtime/due.py), with handlers of its own: entries run in time order, each at its own due
time, also when a handler moves or puts entries; an effect and its entry's settlement commit together, so
a run that lost a race changes nothing; a handler that refuses is tried again, then dropped."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from chalicelib.core import codes
from chalicelib.runtime import due, wiring
from chalicelib.runtime.due import DueWork, due_handler
from chalicelib.storage import due_index, keys, table
from tests.builders import system_ctx

T0 = datetime(2028, 5, 1, 4, tzinfo=timezone.utc)
ECHO, CHAIN, PUT, REFUSE, WRITE, CLASH = (
    "test.echo",
    "test.chain",
    "test.put",
    "test.refuse",
    "test.write",
    "test.clash",
)
ran: list[tuple[str, str, datetime]] = []


@due_handler(ECHO)  # type: ignore[arg-type]
def echo(ctx, work: DueWork) -> dict[str, Any]:
    ran.append((ctx.tenant, work.entry.ref, ctx.now))
    return {"echoed": 1, "refs": [work.entry.ref]}


@due_handler(CHAIN)  # type: ignore[arg-type]
def chain(ctx, work: DueWork) -> None:
    """Runs `times` times, a day apart (moved on each time)."""
    ran.append((ctx.tenant, work.entry.ref, ctx.now))
    left = int(work.entry.payload["times"]) - 1
    if left:
        work.reschedule(ctx.now + timedelta(days=1), {"times": left})


@due_handler(PUT)  # type: ignore[arg-type]
def put(ctx, work: DueWork) -> None:
    """Makes an echo due an hour later (as an issue puts a billing entry)."""
    ran.append((ctx.tenant, work.entry.ref, ctx.now))
    due.schedule(work.uow, ECHO, f"{work.entry.ref}-child", ctx.now + timedelta(hours=1))  # type: ignore[arg-type]


@due_handler(REFUSE)  # type: ignore[arg-type]
def refuse(ctx, work: DueWork) -> None:
    ran.append((ctx.tenant, work.entry.ref, ctx.now))
    raise codes.TRANSACTION_POLICY_NOT_CANCELLED("not today")


@due_handler(WRITE)  # type: ignore[arg-type]
def write(ctx, work: DueWork) -> None:
    """An effect in the entry's own unit of work: a counter item bumped."""
    ran.append((ctx.tenant, work.entry.ref, ctx.now))
    work.uow.add(
        table.update(
            keys.Key(f"{keys.tenant_scope(ctx.tenant)}TEST#effects"), {"last": work.entry.ref}, must_exist=False
        )
    )


@due_handler(CLASH)  # type: ignore[arg-type]
def clash(ctx, work: DueWork) -> None:
    """Creates a record that is already there, every time (a conflict nobody else will resolve)."""
    ran.append((ctx.tenant, work.entry.ref, ctx.now))
    work.uow.add(table.put_new({**keys.Key(f"{keys.tenant_scope(ctx.tenant)}TEST#clash").as_dict(), "by": "run"}))


@pytest.fixture(autouse=True)
def fresh():
    ran.clear()


def make_due(tenant, kind, ref, at, payload=None):
    ctx = system_ctx().for_tenant(tenant)
    uow = wiring.unit_of_work(ctx)
    due.schedule(uow, kind, ref, at, payload)
    uow.commit()


def run(tenant, until, **options):
    return due.run_step(system_ctx().for_tenant(tenant), until, **options)


def test_entries_run_in_time_order_each_at_its_due_time_up_to_and_including_the_moment(tenant):
    make_due(tenant, ECHO, "late", T0 + timedelta(days=2))
    make_due(tenant, ECHO, "b", T0)
    make_due(tenant, ECHO, "a", T0)
    make_due(tenant, ECHO, "next", T0 + timedelta(hours=3))
    make_due(tenant, ECHO, "beyond", T0 + timedelta(days=2, milliseconds=1))

    step = run(tenant, T0 + timedelta(days=2))

    assert [(ref, at) for _, ref, at in ran] == [
        ("a", T0),
        ("b", T0),
        ("next", T0 + timedelta(hours=3)),
        ("late", T0 + timedelta(days=2)),
    ]
    assert (step.result["entries"], step.result["echoed"], step.result["refs"]) == (4, 4, ["a", "b", "next", "late"])
    assert (step.more, step.last_run_at) == (False, T0 + timedelta(days=2))
    assert [e.ref for e in due_index.page(tenant, T0 + timedelta(days=30)).entries] == ["beyond"]
    assert run(tenant, T0 + timedelta(days=2)).result == {"entries": 0, "alreadyDone": 0, "failed": []}


def test_an_entry_moved_or_put_by_a_handler_runs_in_its_place_in_time(tenant):
    make_due(tenant, CHAIN, "chain", T0, {"times": 3})
    make_due(tenant, PUT, "parent", T0 + timedelta(hours=12))
    make_due(tenant, ECHO, "between", T0 + timedelta(hours=13, minutes=30))

    run(tenant, T0 + timedelta(days=5))

    assert [(ref, at - T0) for _, ref, at in ran] == [
        ("chain", timedelta(0)),
        ("parent", timedelta(hours=12)),
        ("parent-child", timedelta(hours=13)),
        ("between", timedelta(hours=13, minutes=30)),
        ("chain", timedelta(days=1)),
        ("chain", timedelta(days=2)),
    ]
    assert due_index.page(tenant, T0 + timedelta(days=30)).entries == []


def test_a_step_stops_at_its_limit_and_says_more_may_be_due(tenant):
    for n in range(3):
        make_due(tenant, ECHO, f"e{n}", T0 + timedelta(minutes=n))

    first = run(tenant, T0 + timedelta(days=1), limit=2)
    second = run(tenant, T0 + timedelta(days=1), limit=2)

    assert (first.more, first.result["entries"], second.more, second.result["entries"]) == (True, 2, False, 1)
    assert [ref for _, ref, _ in ran] == ["e0", "e1", "e2"]


def test_an_entry_due_before_the_floor_runs_at_the_floor(tenant):
    make_due(tenant, ECHO, "early", T0 - timedelta(days=3))
    make_due(tenant, ECHO, "later", T0 + timedelta(days=1))

    run(tenant, T0 + timedelta(days=1), floor=T0)

    assert [(ref, at) for _, ref, at in ran] == [("early", T0), ("later", T0 + timedelta(days=1))]


def test_a_run_that_lost_the_race_for_an_entry_leaves_its_effect_undone(tenant):
    """Two runs read the entry: the first settles it with its effect; the second's effect and settlement
    fail together (`alreadyDone`)."""
    make_due(tenant, WRITE, "once", T0)
    [seen] = due_index.page(tenant, T0).entries
    run(tenant, T0)
    counter = keys.Key(f"{keys.tenant_scope(tenant)}TEST#effects")
    effect = table.gateway().get(keys.tenant_scope(tenant), counter)
    make_due(tenant, WRITE, "once", T0 + timedelta(days=1))  # and the domain made it due again since

    outcome = due._Outcome()
    due._run_entry(system_ctx().for_tenant(tenant), seen, due.Batch([seen]), outcome)  # the stale run

    assert (outcome.result()["entries"], outcome.result()["alreadyDone"]) == (1, 1)
    assert table.gateway().get(keys.tenant_scope(tenant), counter) == effect
    assert due_index.get(tenant, WRITE, "once").due_at == T0 + timedelta(days=1)


def test_a_handler_that_refuses_is_reported_tried_again_a_day_later_and_dropped_after_its_last_attempt(tenant):
    make_due(tenant, REFUSE, "no", T0)

    step = run(tenant, T0 + timedelta(days=10))

    assert [at - T0 for _, _, at in ran] == [timedelta(0), timedelta(days=1), timedelta(days=2)]
    assert [(f["ref"], f["code"], f["dueAt"]) for f in step.result["failed"]] == [
        ("no", "transaction.policy_not_cancelled", "2028-05-01T04:00:00.000Z"),
        ("no", "transaction.policy_not_cancelled", "2028-05-02T04:00:00.000Z"),
        ("no", "transaction.policy_not_cancelled", "2028-05-03T04:00:00.000Z"),
    ]
    assert due_index.get(tenant, REFUSE, "no") is None


def test_an_entry_of_a_kind_nobody_handles_is_reported(tenant):
    make_due(tenant, "test.nobody", "x", T0)

    step = run(tenant, T0, limit=1)

    assert [f["code"] for f in step.result["failed"]] == ["due.unknown_kind"]
    assert due_index.get(tenant, "test.nobody", "x").due_at == T0 + due.RETRY_AFTER


def test_an_entry_whose_handler_keeps_meeting_a_conflict_waits_a_day_each_time_and_is_dropped(tenant):
    """A conflict that did not move the entry is its own: read from the start, the entry would run again at
    once, in this step and every next one, for ever."""
    ctx = system_ctx().for_tenant(tenant)
    uow = wiring.unit_of_work(ctx)
    uow.add(table.put_new({**keys.Key(f"{keys.tenant_scope(tenant)}TEST#clash").as_dict(), "by": "earlier"}))
    uow.commit()
    make_due(tenant, CLASH, "stuck", T0)

    step = run(tenant, T0 + timedelta(days=10))

    assert [at - T0 for _, _, at in ran] == [timedelta(0), timedelta(days=1), timedelta(days=2)]
    assert (step.result["entries"], step.result["alreadyDone"], step.more) == (3, 3, False)
    assert due_index.get(tenant, CLASH, "stuck") is None
