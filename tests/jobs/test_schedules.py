"""The scheduled functions (chalicelib/workers/schedules.py): one job per tenant once a period, the first
page of tenants enqueued by the function itself, each further page by a fan-out job that first enqueues
the one for the page after it."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest

from chalicelib.identity import service as identity
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import get_job
from chalicelib.workers import job_handlers, schedules
from tests.builders import new_tenant, system_ctx
from tests.support.schedules import fan_out, invoke_schedule

DAY = datetime(2031, 3, 4, 6, tzinfo=timezone.utc)
"""A day no other test runs a schedule on: each tenant's job of the day is enqueued once."""


def sent(jobs, job_type):
    return [message for message in jobs.sent if message.job_type == job_type]


def pages_of(count: int) -> int:
    """A page size that makes three or four pages of `count` tenants, the last one short."""
    size = max(1, -(-count // 3))
    while count % size == 0:
        size += 1
    return size


def ordinary(tenants):
    """The tenants without a test clock: the schedules' (test-clock tenants are advanced by hand)."""
    with_test_clock = {t.locator for t in identity.tenants_after(None, 100_000)[0] if t.testClock}
    return [t for t in tenants if t not in with_test_clock]


@pytest.mark.before_the_session_grows  # its schedule fans out over every tenant of the process
def test_the_schedule_enqueues_a_job_for_every_tenant_a_page_at_a_time(api, tenant, jobs, clock, monkeypatch):
    new_tenant(test_clock=True)  # passed over
    while len(identity.list_tenant_locators()) < 7:  # run alone, the session has too few tenants for pages
        new_tenant()
    tenants = identity.list_tenant_locators()
    size = pages_of(len(tenants))
    monkeypatch.setattr(schedules, "TENANTS_PER_STEP", size)
    clock.set(DAY)

    invoke_schedule(api, "run_due_work")

    assert [m.tenant for m in sent(jobs, JobType.DUE_RUN)] == ordinary(tenants[:size])
    [first] = sent(jobs, JobType.SCHEDULE_FAN_OUT)
    assert (first.tenant, first.payload["after"]) == (tenants[size - 1], tenants[size - 1])

    clock.set(DAY + timedelta(minutes=10))  # the fan-out jobs ran later: the jobs still work as of 6:00
    ran = fan_out(jobs)

    starts = range(size, len(tenants), size)
    assert ran == len(starts)
    runs = sent(jobs, JobType.DUE_RUN)
    assert sorted(m.tenant for m in runs) == sorted(ordinary(tenants))
    assert {m.payload["asOf"] for m in runs} == {"2031-03-04T06:00:00.000Z"}
    fan_outs = sent(jobs, JobType.SCHEDULE_FAN_OUT)
    assert [m.tenant for m in fan_outs] == [tenants[start - 1] for start in starts]
    assert [get_job(m.tenant, m.job_locator)["result"] for m in fan_outs] == [
        {"enqueued": len(ordinary(tenants[start : start + size]))} for start in starts
    ]
    assert {m.correlation_id for m in jobs.sent} == {first.correlation_id}  # one run, traceable


@pytest.mark.before_the_session_grows  # its schedule fans out over every tenant of the process
def test_a_schedule_run_again_in_its_period_enqueues_nothing_more(api, jobs, clock, monkeypatch):
    """A retried invocation and a fan-out job run again (its message delivered twice) enqueue no second job
    for a tenant in the same quarter hour; the next quarter hour enqueues the next. Over five tenants of this
    test, two a page."""
    ours = sorted(new_tenant() for _ in range(5))
    monkeypatch.setattr(schedules, "TENANTS_PER_STEP", 2)
    everyone = {t.locator: t for t in identity.tenants_after(None, 100_000)[0]}
    monkeypatch.setattr(
        identity,
        "tenants_after",
        lambda after, limit: (
            [everyone[t] for t in ours if after is None or t > after][:limit],
            len([t for t in ours if after is None or t > after]) > limit,
        ),
    )
    moment = DAY + timedelta(days=10)

    def per_tenant():
        return Counter(m.tenant for m in sent(jobs, JobType.DUE_RUN))

    clock.set(moment)
    invoke_schedule(api, "run_due_work")
    assert fan_out(jobs) == 2
    assert per_tenant() == {tenant: 1 for tenant in ours}

    clock.set(moment + timedelta(minutes=14))  # the same quarter hour
    invoke_schedule(api, "run_due_work")
    assert fan_out(jobs) == 0
    for message in sent(jobs, JobType.SCHEDULE_FAN_OUT):
        assert job_handlers.fan_out_page(
            system_ctx().for_tenant(message.tenant), schedules.FanOut.model_validate(message.payload)
        ) == {"enqueued": 0}
    assert per_tenant() == {tenant: 1 for tenant in ours}
    assert len(sent(jobs, JobType.SCHEDULE_FAN_OUT)) == 2

    clock.set(moment + timedelta(minutes=15))
    invoke_schedule(api, "run_due_work")
    assert fan_out(jobs) == 2
    assert per_tenant() == {tenant: 2 for tenant in ours}
    assert {m.payload["asOf"] for m in sent(jobs, JobType.DUE_RUN)} == {
        "2031-03-14T06:00:00.000Z",
        "2031-03-14T06:15:00.000Z",
    }
