"""Time travel with test clocks (DECISIONS.md "Test clocks"): an advance runs the tenant's due work in time
order, each entry at its own due time, through the same pager as the quarter-hourly due run, a step of
entries a job; the real schedules pass test-clock tenants over.

The sandbox has the auto-renewal test configuration (test_auto_renewal.py: plan `Auto` creates a renewal
30 days before the term end, accepts it 20 days before and issues it 10 days before, at midnight in New
York); its policy runs a year from 2026-02-01T05:00Z.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from chalicelib.clock import service as clock_service
from chalicelib.core.clock import isoformat
from chalicelib.identity import service as identity
from chalicelib.runtime import due
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import JobMessage, dispatch, get_job
from tests.api.quotes.support import new_account
from tests.api.transactions.support import issued_policy, policy_path
from tests.builders import new_tenant, system_ctx
from tests.jobs.support import PLANS
from tests.support.api import call, ok
from tests.support.clock import request_advance
from tests.support.configs import quotes_model, quotes_tenant
from tests.support.schedules import fan_out, invoke_schedule

REAL_NOW = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)
TERM_START = "2026-02-01T05:00:00Z"


@pytest.fixture
def sandbox(api, admin_token) -> str:
    """A fresh tenant with a test clock and the auto-renewal plans."""
    model = quotes_model()
    model["autoRenewalPlans"] = PLANS
    model["transactionTypes"] = {"AnnualRenewal": {"category": "renewal"}, "LoyaltyRenewal": {"category": "renewal"}}
    return quotes_tenant(api, admin_token, model, test_clock=True)


@pytest.fixture
def policy(api, admin_token, sandbox) -> dict:
    return issued_policy(api, admin_token, sandbox, new_account(api, admin_token, sandbox), autoRenewalPlanName="Auto")


def invoiced(api, token, tenant, jobs):
    """Billing brought to rest before the advance a test measures: the issue's billing job runs (the account's
    invoice generation entry put at the term start, where the test configuration's full-pay frame is
    generated), and an advance to the term start generates the invoice, the entry's only run, and runs the
    invoice's due entry (unpaid, it would open a delinquency: this configuration has no delinquency plan) and
    the policy's status change (pending to onRisk)."""
    jobs.drain()
    ok(request_advance(api, token, tenant, TERM_START))
    jobs.drain()
    [step] = [m for m in jobs.sent if m.job_type == JobType.CLOCK_ADVANCE]
    result = get_job(tenant, step.job_locator)["result"]
    assert (
        result["entries"],
        result["invoicesGenerated"],
        result["statusUpdates"],
        result.get("created", 0),
        result["done"],
    ) == (3, 1, 1, 0, True)
    assert clock_of(api, token, tenant)["now"] == "2026-02-01T05:00:00.000Z"


def steps_of(jobs, first):
    """The steps of the advance whose first step's message is `first`."""
    return [
        m.payload.get("step", 0)
        for m in jobs.sent
        if m.job_type == JobType.CLOCK_ADVANCE and m.payload["advance"] == first.payload["advance"]
    ]


def clock_of(api, token, tenant):
    return ok(call(api, "GET", f"/clock/{tenant}", token))


def renewals_of(api, token, tenant, policy_locator):
    issued = ok(call(api, "GET", policy_path(tenant, policy_locator, "/issuedTransactions/list?count=100"), token))
    return [t for t in issued["items"] if t["transactionCategory"] == "renewal"]


def test_a_policy_advanced_three_years_renews_three_times_each_at_its_own_time(
    api, admin_token, sandbox, policy, jobs, clock
):
    ok(request_advance(api, admin_token, sandbox, "2029-03-01T00:00:00Z"))
    jobs.drain()

    assert clock_of(api, admin_token, sandbox) == {
        "tenantLocator": sandbox,
        "testClock": True,
        "now": "2029-03-01T00:00:00.000Z",
        "status": "ready",
    }
    terms = ok(call(api, "GET", policy_path(sandbox, policy["locator"], "/terms/list"), admin_token))["items"]
    assert [(t["number"], t["startTime"], t["endTime"]) for t in terms] == [
        (0, "2026-02-01T05:00:00.000Z", "2027-02-01T05:00:00.000Z"),
        (1, "2027-02-01T05:00:00.000Z", "2028-02-01T05:00:00.000Z"),
        (2, "2028-02-01T05:00:00.000Z", "2029-02-01T05:00:00.000Z"),
        (3, "2029-02-01T05:00:00.000Z", "2030-02-01T05:00:00.000Z"),
    ]
    renewals = renewals_of(api, admin_token, sandbox, policy["locator"])
    assert [(r["effectiveTime"], r["createdAt"], r["acceptedTime"], r["issuedTime"]) for r in renewals] == [
        (
            "2027-02-01T05:00:00.000Z",
            "2027-01-02T05:00:00.000Z",
            "2027-01-12T05:00:00.000Z",
            "2027-01-22T05:00:00.000Z",
        ),
        (
            "2028-02-01T05:00:00.000Z",
            "2028-01-02T05:00:00.000Z",
            "2028-01-12T05:00:00.000Z",
            "2028-01-22T05:00:00.000Z",
        ),
        (
            "2029-02-01T05:00:00.000Z",
            "2029-01-02T05:00:00.000Z",
            "2029-01-12T05:00:00.000Z",
            "2029-01-22T05:00:00.000Z",
        ),
    ]
    after = ok(call(api, "GET", policy_path(sandbox, policy["locator"]), admin_token))
    assert after["endTime"] == "2030-02-01T05:00:00.000Z"
    assert after["statuses"] == ["onRisk"]  # derived from the tenant's now
    entry = due.entry(system_ctx().for_tenant(sandbox), DueKind.POLICY_AUTO_RENEW, policy["locator"])
    assert entry.due_at == datetime(2030, 1, 2, 5, tzinfo=timezone.utc)  # beyond the target: not run
    assert clock.now() == REAL_NOW


def test_an_advance_shows_its_progress_step_by_step_and_a_late_step_message_does_nothing(
    api, admin_token, sandbox, policy, jobs, monkeypatch
):
    invoiced(api, admin_token, sandbox, jobs)
    monkeypatch.setattr(due, "STEP_ENTRIES", 1)
    ok(request_advance(api, admin_token, sandbox, "2027-03-01T00:00:00Z"))
    first = jobs.sent[-1]

    dispatch(JobMessage.model_validate_json(jobs.messages.pop(0)))  # one entry: the renewal created

    assert clock_of(api, admin_token, sandbox) == {
        "tenantLocator": sandbox,
        "testClock": True,
        "now": "2027-01-02T05:00:00.000Z",
        "status": "advancing",
        "advancingTo": "2027-03-01T00:00:00.000Z",
    }
    result = get_job(sandbox, first.job_locator)["result"]
    assert (result["entries"], result["created"], result["done"]) == (1, 1, False)
    jobs.drain()
    # create, accept, issue; then the invoice generation of the renewal's term at its start (2027-02-01), which
    # the billing job put, and that invoice's due time; then nothing more
    assert steps_of(jobs, first) == [0, 1, 2, 3, 4, 5]
    assert clock_of(api, admin_token, sandbox)["status"] == "ready"
    assert len(renewals_of(api, admin_token, sandbox, policy["locator"])) == 1

    late = clock_service.AdvanceStep.model_validate(first.payload)
    assert clock_service.advance_step(system_ctx().for_tenant(sandbox), late) == {"advance": late.advance, "over": True}


def test_requests_while_an_advance_runs_see_the_clocks_position(api, admin_token, sandbox, policy, jobs, monkeypatch):
    """The position moves with the advance's steps: requests made between them carry it."""
    invoiced(api, admin_token, sandbox, jobs)
    monkeypatch.setattr(due, "STEP_ENTRIES", 1)
    ok(request_advance(api, admin_token, sandbox, "2027-03-01T00:00:00Z"))
    dispatch(JobMessage.model_validate_json(jobs.messages.pop(0)))

    account = ok(
        call(
            api,
            "POST",
            f"/policy/{sandbox}/accounts",
            admin_token,
            {
                "type": "PersonAccount",
                "data": {
                    "firstName": "Ada",
                    "lastName": "Lovelace",
                    "email": "ada@example.com",
                    "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
                },
            },
        )
    )

    assert account["createdAt"] == "2027-01-02T05:00:00.000Z"


def test_jobs_of_a_test_clock_tenant_work_in_its_time_and_keep_their_leases_on_real_time(
    api, admin_token, sandbox, policy, jobs
):
    ok(request_advance(api, admin_token, sandbox, "2027-01-05T00:00:00Z"))
    jobs.drain()
    [step] = [m for m in jobs.sent if m.job_type == JobType.CLOCK_ADVANCE]

    job = get_job(sandbox, step.job_locator)
    assert (job["createdAt"], job["updatedAt"], job["finishedAt"]) == (isoformat(REAL_NOW),) * 3
    renewal = renewals_of(api, admin_token, sandbox, policy["locator"])
    assert renewal == []  # created, not issued yet
    result = job["result"]
    # the advance passed the term start: it generated the term's invoice (the account's invoice generation
    # entry, put by the billing job), ran its due time and the policy's start (pending to onRisk), then
    # created and priced the renewal
    assert (
        result["entries"],
        result["invoicesGenerated"],
        result["statusUpdates"],
        result["created"],
        result["priced"],
        result["done"],
    ) == (4, 1, 1, 1, 1, True)


@pytest.mark.before_the_session_grows  # its schedules fan out over every tenant of the process
def test_the_real_schedules_pass_test_clock_tenants_over_but_the_reaper_visits_them(api, sandbox, jobs, clock):
    ordinary = new_tenant()
    clock.set(datetime(2031, 7, 9, 12, tzinfo=timezone.utc))  # a quarter hour and a day no other test runs

    for name in ("run_due_work", "clean_up_tables", "reap_jobs"):
        invoke_schedule(api, name)
    fan_out(jobs)

    enqueued = {
        job_type: {m.tenant for m in jobs.sent if m.job_type == job_type}
        for job_type in (JobType.DUE_RUN, JobType.TABLES_CLEANUP, JobType.REAP_JOBS)
    }
    assert ordinary in enqueued[JobType.DUE_RUN] and sandbox not in enqueued[JobType.DUE_RUN]
    assert ordinary in enqueued[JobType.TABLES_CLEANUP] and sandbox not in enqueued[JobType.TABLES_CLEANUP]
    assert {ordinary, sandbox} <= enqueued[JobType.REAP_JOBS]
    assert [t.testClock for t in identity.tenants_after(None, 100_000)[0] if t.locator == sandbox] == [True]


def test_a_test_clock_tenants_due_work_waits_for_its_clock(api, admin_token, sandbox, policy, jobs, clock):
    """Real time passing the moments of its entries runs none of them: the schedules never enqueue a
    test-clock tenant's due run; its work waits for an advance of its clock."""
    clock.set(datetime(2027, 6, 1, tzinfo=timezone.utc))  # real time passes the renewal's moments
    invoke_schedule(api, "run_due_work")
    fan_out(jobs)
    jobs.messages = [m for m in jobs.messages if JobMessage.model_validate_json(m).tenant == sandbox]
    jobs.drain()
    clock.set(REAL_NOW)

    assert renewals_of(api, admin_token, sandbox, policy["locator"]) == []
    assert clock_service.read(sandbox).now == REAL_NOW
