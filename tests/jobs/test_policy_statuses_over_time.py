"""Statuses that change with time (DECISIONS.md): a policy's start, end and cancellation time each emit
`policy.status.update` at that moment of business time, once, through the policy's `policy.statusChange`
due entry, which every issue that moves those moments moves in its own write; delinquency and its
settlement and lapse emit theirs where they happen.

The tenants have the billing test configuration (tests/api/billing/support.py: a year from
2026-02-01T05:00Z, invoices monthly, due at each month's start; the delinquency plan Lenient, 30 days of
grace, only where a policy names it) and a test clock, which starts at the real time of the test's start,
2026-01-15T09:30Z. Real time then moves on to WALL, far from any business moment the test looks at, so a
wall-clock timestamp fails it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from chalicelib.runtime import due
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.storage import due_index
from tests.api.billing.delinquency_support import pay
from tests.api.billing.support import billed_policy, billing_tenant, invoices_of_account
from tests.api.transactions.support import create, issued_transaction, params, step
from tests.builders import system_ctx
from tests.support.api import call, event_types, ok
from tests.support.clock import advance

START, END = "2026-02-01T05:00:00.000Z", "2027-02-01T05:00:00.000Z"
CANCELLED_AT = "2026-06-01T04:00:00.000Z"
WALL = datetime(2026, 1, 15, 10, 7, 41, 123000, tzinfo=timezone.utc)
"""Real time once the policies are issued (their token lives an hour from 09:30)."""


def status_events(api, token, tenant):
    """Every `policy.status.update` of the tenant's stream: (policy, timestamp, added, removed)."""
    events = ok(call(api, "GET", f"/event/{tenant}/events/list?type=policy.status.update&pageSize=100", token))[
        "events"
    ]
    return [
        (
            e["data"]["policyLocator"],
            e["timestamp"],
            e["data"]["newStatuses"]["items"],
            e["data"]["removedStatuses"]["items"],
        )
        for e in events
    ]


def of_policy(events, policy):
    return [event[1:] for event in events if event[0] == policy["locator"]]


def cancel(api, token, tenant, policy, effective):
    """Issues a cancellation of the policy effective at `effective`: the response of its issue."""
    cancellation = ok(create(api, token, tenant, policy["locator"], "cancel", params(effective)))
    issued = step(api, token, tenant, cancellation["locator"], "issue")
    ok(issued)
    return issued


@pytest.fixture
def tenant(api, admin_token):
    return billing_tenant(api, admin_token, test_clock=True)


def test_start_delinquency_settlement_cancellation_lapse_and_end_each_emit_once_at_their_business_time(
    api, admin_token, tenant, jobs, clock
):
    _, plain = billed_policy(api, admin_token, tenant, jobs)
    _, cancelled = billed_policy(api, admin_token, tenant, jobs)
    account, late = billed_policy(api, admin_token, tenant, jobs, delinquencyPlanName="Lenient")
    issued = cancel(api, admin_token, tenant, cancelled, CANCELLED_AT)
    jobs.drain()
    assert "policy.status.update" in event_types(api, admin_token, tenant, issued)  # cancelPending, by the request
    clock.set(WALL)

    advance(api, admin_token, tenant, jobs, "2026-02-10T00:00:00Z")
    [february] = invoices_of_account(api, admin_token, tenant, account)
    pay(api, admin_token, tenant, account, february, Decimal(str(february["totalAmount"])))
    advance(api, admin_token, tenant, jobs, "2027-02-02T00:00:00Z")

    events = status_events(api, admin_token, tenant)
    assert of_policy(events, plain) == [(START, ["onRisk"], ["pending"]), (END, ["expired"], ["onRisk"])]
    assert of_policy(events, cancelled) == [
        ("2026-01-15T09:30:00.000Z", ["cancelPending"], []),
        (START, ["onRisk"], ["pending"]),
        (CANCELLED_AT, ["cancelled"], ["onRisk", "cancelPending"]),
    ]
    # February's invoice falls due unpaid (delinquent), is paid on the 10th (by the request, at the clock's
    # time); March's falls due unpaid too and its grace ends 30 days later: the delinquency ends, then its
    # lapse cancels the policy from the grace start
    assert of_policy(events, late) == [
        (START, ["delinquent"], []),
        (START, ["onRisk"], ["pending"]),
        ("2026-02-10T00:00:00.000Z", [], ["delinquent"]),
        ("2026-03-01T05:00:00.000Z", ["delinquent"], []),
        ("2026-03-31T04:00:00.000Z", [], ["delinquent"]),
        ("2026-03-31T04:00:00.000Z", ["cancelled"], ["onRisk"]),
    ]
    assert ok(call(api, "GET", f"/policy/{tenant}/policies/{plain['locator']}", admin_token))["statuses"] == ["expired"]
    ctx = system_ctx().for_tenant(tenant)
    assert [due.entry(ctx, DueKind.POLICY_STATUS_CHANGE, p["locator"]) for p in (plain, cancelled, late)] == [
        None
    ] * 3  # time changes their statuses no more

    advance(api, admin_token, tenant, jobs, "2027-06-01T00:00:00Z")
    assert status_events(api, admin_token, tenant) == events


def test_a_rerun_of_a_status_entry_already_run_emits_nothing(api, admin_token, tenant, jobs, clock):
    _, policy = billed_policy(api, admin_token, tenant, jobs)
    ctx = system_ctx().for_tenant(tenant)
    [seen] = [
        e
        for e in due_index.page(tenant, datetime(2026, 2, 2, tzinfo=timezone.utc)).entries
        if e.kind == DueKind.POLICY_STATUS_CHANGE
    ]
    clock.set(WALL)
    advance(api, admin_token, tenant, jobs, "2026-02-02T00:00:00Z")
    before = status_events(api, admin_token, tenant)

    outcome = due._Outcome()
    due._run_entry(replace(ctx, now=seen.due_at), seen, due.Batch([seen]), outcome)  # a rerun of it as read

    assert (outcome.result()["entries"], outcome.result()["alreadyDone"]) == (1, 1)
    assert status_events(api, admin_token, tenant) == before == [(policy["locator"], START, ["onRisk"], ["pending"])]
    assert due.entry(ctx, DueKind.POLICY_STATUS_CHANGE, policy["locator"]).due_at == datetime(
        2027, 2, 1, 5, tzinfo=timezone.utc
    )  # moved on to the end


def test_a_reinstatement_moves_the_entry_back_to_the_end_and_the_cancellation_time_passes_quietly(
    api, admin_token, tenant, jobs, clock
):
    _, policy = billed_policy(api, admin_token, tenant, jobs)
    cancel(api, admin_token, tenant, policy, CANCELLED_AT)
    ctx = system_ctx().for_tenant(tenant)
    assert due.entry(ctx, DueKind.POLICY_STATUS_CHANGE, policy["locator"]).due_at == datetime(
        2026, 2, 1, 5, tzinfo=timezone.utc
    )
    advance(api, admin_token, tenant, jobs, "2026-03-01T00:00:00Z")
    assert due.entry(ctx, DueKind.POLICY_STATUS_CHANGE, policy["locator"]).due_at == datetime(
        2026, 6, 1, 4, tzinfo=timezone.utc
    )

    issued_transaction(api, admin_token, tenant, policy["locator"], "reinstate", [])
    jobs.drain()
    clock.set(WALL)
    assert due.entry(ctx, DueKind.POLICY_STATUS_CHANGE, policy["locator"]).due_at == datetime(
        2027, 2, 1, 5, tzinfo=timezone.utc
    )
    advance(api, admin_token, tenant, jobs, "2027-02-02T00:00:00Z")

    assert of_policy(status_events(api, admin_token, tenant), policy) == [
        ("2026-01-15T09:30:00.000Z", ["cancelPending"], []),
        (START, ["onRisk"], ["pending"]),
        ("2026-03-01T00:00:00.000Z", [], ["cancelPending"]),  # the reinstatement, at the clock's time
        (END, ["expired"], ["onRisk"]),
    ]


def test_issuing_writes_the_status_entry_in_the_issues_own_write(api, admin_token, tenant, jobs, ddb_calls):
    """A cancellation that moves the entry (from the end to its own time) costs what a change that moves
    nothing does: one TransactWriteItems, no read of the entry."""
    _, moved = billed_policy(api, admin_token, tenant, jobs)
    _, kept = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-02-02T00:00:00Z")  # started: the next moment is the end
    calls = {}
    for policy, kind, body in ((moved, "cancel", params(CANCELLED_AT)), (kept, "change", [params(CANCELLED_AT)])):
        draft = ok(create(api, admin_token, tenant, policy["locator"], kind, body))
        ok(step(api, admin_token, tenant, draft["locator"], "accept"))
        ddb_calls.clear()
        ok(step(api, admin_token, tenant, draft["locator"], "issue"))
        calls[kind] = sorted(ddb_calls)

    assert calls["cancel"] == calls["change"] and calls["cancel"].count("TransactWriteItems") == 1
    ctx = system_ctx().for_tenant(tenant)
    assert [due.entry(ctx, DueKind.POLICY_STATUS_CHANGE, p["locator"]).due_at for p in (moved, kept)] == [
        datetime(2026, 6, 1, 4, tzinfo=timezone.utc),
        datetime(2027, 2, 1, 5, tzinfo=timezone.utc),
    ]
