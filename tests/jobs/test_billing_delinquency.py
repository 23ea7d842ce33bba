"""Delinquency over time on test-clock tenants: an unpaid invoice opens a delinquency at its due time, the
policy is `delinquent` through the grace, its reminder event triggers, and at the grace end the policy
lapses (a cancellation effective at the grace start, issued, its refund billed into credit); a payment
during the grace settles it and nothing lapses; a delinquency hold pauses the lapse until released.

The tenants have the billing test configuration (tests/api/billing/support.py: premium 100.00 a month
from 2026-02-01, tax 25.00 with the first month; invoices generated 10 days ahead, due at the month's
start) and the delinquency plan Standard by default: 10 days of grace, a reminder 3 days before its end.
"""

from __future__ import annotations

from decimal import Decimal

from tests.api.billing.delinquency_support import (
    FEB_DUE,
    delinquencies_of_account,
    delinquency_tenant,
    event_jobs,
    events_of,
    events_of_type,
    pay,
    statuses,
)
from tests.api.billing.support import amounts, billed_policy, billing, invoices_of_account
from tests.api.transactions.support import (
    issued_change,
    modify,
    policy_path,
    segment_of_policy,
    vehicle_of,
)
from tests.support.api import assert_error, call, event_types, ok
from tests.support.clock import advance

FEB_20 = "2026-02-20T05:00:00.000Z"


def credit_balance(api, token, tenant, account):
    return ok(call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), token))[
        "balance"
    ]


def test_an_unpaid_invoice_opens_a_grace_then_the_policy_lapses_and_its_refund_goes_into_credit(api, admin_token, jobs):
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-02-01T04:59:00Z")
    assert delinquencies_of_account(api, admin_token, tenant, account) == []
    assert statuses(api, admin_token, tenant, policy) == ["pending"]

    advance(api, admin_token, tenant, jobs, "2026-02-02T00:00:00Z")
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    [opened] = delinquencies_of_account(api, admin_token, tenant, account)
    assert opened["delinquencyState"] == "inGrace"
    assert (opened["graceStartedAt"], opened["graceEndAt"]) == (FEB_DUE, "2026-02-11T05:00:00.000Z")
    assert opened["settings"] == {
        "lapseTransactionType": "cancellation",
        "gracePeriodDays": 10,
        "advanceLapseTo": "issued",
        "delinquencyLevel": "policy",
    }
    assert {(r["referenceType"], r["referenceLocator"]) for r in opened["references"]} == {
        ("policy", policy["locator"]),
        ("invoice", invoice["locator"]),
    }
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]
    assert ok(call(api, "GET", billing(tenant, f"/delinquencies/policies/{policy['locator']}/list"), admin_token))[
        "items"
    ] == [opened]
    created = ok(
        call(api, "GET", billing(tenant, f"/jobs/delinquencies/invoices/{invoice['locator']}/list"), admin_token)
    )["items"]
    assert [(j["jobStatus"], j["delinquencyLocators"], j["dueTime"]) for j in created] == [
        ("finished", [opened["locator"]], FEB_DUE)
    ]
    [reminder] = events_of(api, admin_token, tenant, opened["locator"])
    assert (reminder["name"], reminder["delinquencyEventState"], reminder["triggerTime"]) == (
        "Reminder",
        "active",
        "2026-02-08T05:00:00.000Z",
    )

    advance(api, admin_token, tenant, jobs, "2026-02-09T00:00:00Z")
    [reminder] = events_of(api, admin_token, tenant, opened["locator"])
    assert (reminder["delinquencyEventState"], reminder["triggeredAt"]) == ("triggered", "2026-02-08T05:00:00.000Z")
    assert [(j["jobStatus"], j["cancelled"]) for j in event_jobs(api, admin_token, tenant, opened["locator"])] == [
        ("finished", False)
    ]

    advance(api, admin_token, tenant, jobs, "2026-02-12T00:00:00Z")
    lapsed = ok(call(api, "GET", billing(tenant, f"/delinquencies/{opened['locator']}"), admin_token))
    assert lapsed["delinquencyState"] == "lapseTransactionCreated"
    assert lapsed["lapseTransactionEffectiveDate"] == FEB_DUE
    [lapse] = [r["transactionLocator"] for r in lapsed["references"] if r["referenceType"] == "policy"]
    transaction = ok(call(api, "GET", f"/policy/{tenant}/transactions/{lapse}", admin_token))
    assert (transaction["transactionCategory"], transaction["transactionState"], transaction["effectiveTime"]) == (
        "cancellation",
        "issued",
        FEB_DUE,
    )
    assert statuses(api, admin_token, tenant, policy) == ["cancelled"]
    [event] = events_of_type(api, admin_token, tenant, "billing.delinquency.lapse")
    assert event["data"] == {
        "delinquencyLocator": opened["locator"],
        "policyLocators": {"listCompleted": True, "items": [policy["locator"]]},
    }
    grace = ok(call(api, "GET", billing(tenant, f"/jobs/delinquencies/{opened['locator']}/list"), admin_token))
    assert [(j["jobStatus"], j["outcome"]) for j in grace["items"]] == [("finished", "lapsed")]
    # the whole term is refunded from its start: February's invoice stays open (102.08 unpaid: its month of
    # premium and tax), its refund is a negative invoice settled into credit, and the later months net to zero
    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert [(i["invoiceState"], Decimal(str(i["totalAmount"]))) for i in invoices] == [
        ("open", Decimal("102.08")),
        ("settled", Decimal("-102.08")),
    ]
    assert credit_balance(api, admin_token, tenant, account) == Decimal("102.08")

    advance(api, admin_token, tenant, jobs, "2026-04-01T00:00:00Z")  # reruns nothing
    assert sum(amounts(invoices_of_account(api, admin_token, tenant, account))) == Decimal("0.00")
    assert len(delinquencies_of_account(api, admin_token, tenant, account)) == 1
    assert credit_balance(api, admin_token, tenant, account) == Decimal("102.08")


def test_a_payment_during_the_grace_settles_the_delinquency_and_nothing_lapses(api, admin_token, jobs):
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-02-05T00:00:00Z")
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    [opened] = delinquencies_of_account(api, admin_token, tenant, account)
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]

    pay(api, admin_token, tenant, account, invoice, Decimal("90.00"))  # of 102.08: still in grace
    assert delinquencies_of_account(api, admin_token, tenant, account)[0]["delinquencyState"] == "inGrace"
    posted = pay(api, admin_token, tenant, account, invoice, Decimal("12.08"))
    assert sorted(event_types(api, admin_token, tenant, posted)) == [
        "billing.delinquency.delinquencyevent.cancel",
        "billing.delinquency.settle",
        "billing.invoice.settle",
        "billing.payment.post",
        "policy.status.update",
    ]
    [settled] = delinquencies_of_account(api, admin_token, tenant, account)
    assert settled["delinquencyState"] == "settled"
    assert statuses(api, admin_token, tenant, policy) == ["onRisk"]
    [reminder] = events_of(api, admin_token, tenant, opened["locator"])
    assert reminder["delinquencyEventState"] == "cancelled"
    assert [
        (j["cancelled"], j["cancellationType"]) for j in event_jobs(api, admin_token, tenant, opened["locator"])
    ] == [(True, "delinquencySettled")]

    advance(api, admin_token, tenant, jobs, "2026-02-28T00:00:00Z")
    assert delinquencies_of_account(api, admin_token, tenant, account) == [settled]
    assert statuses(api, admin_token, tenant, policy) == ["onRisk"]
    transactions = ok(
        call(api, "GET", policy_path(tenant, policy["locator"], "/issuedTransactions/list"), admin_token)
    )["items"]
    assert [t["transactionCategory"] for t in transactions] == ["issuance"]
    assert [
        e["data"]["delinquencyLocator"] for e in events_of_type(api, admin_token, tenant, "billing.delinquency.create")
    ] == [opened["locator"]]
    assert events_of_type(api, admin_token, tenant, "billing.delinquency.lapse") == []


def test_at_policy_level_a_later_unpaid_invoice_joins_the_grace_and_both_must_be_paid(api, admin_token, jobs):
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs, delinquencyPlanName="LongPolicy")
    advance(api, admin_token, tenant, jobs, "2026-03-02T00:00:00Z")
    february, march = invoices_of_account(api, admin_token, tenant, account)
    [opened] = delinquencies_of_account(api, admin_token, tenant, account)
    assert (opened["delinquencyState"], opened["graceEndAt"]) == ("inGrace", "2026-03-13T04:00:00.000Z")
    assert sorted(r["referenceLocator"] for r in opened["references"] if r["referenceType"] == "invoice") == sorted(
        [february["locator"], march["locator"]]
    )
    joined = ok(
        call(api, "GET", billing(tenant, f"/jobs/delinquencies/invoices/{march['locator']}/list"), admin_token)
    )["items"]
    assert [j["delinquencyLocators"] for j in joined] == [[opened["locator"]]]

    pay(api, admin_token, tenant, account, february, Decimal(str(february["totalAmount"])))
    assert delinquencies_of_account(api, admin_token, tenant, account)[0]["delinquencyState"] == "inGrace"
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]
    pay(api, admin_token, tenant, account, march, Decimal(str(march["totalAmount"])))
    assert delinquencies_of_account(api, admin_token, tenant, account)[0]["delinquencyState"] == "settled"
    assert statuses(api, admin_token, tenant, policy) == ["onRisk"]


def test_at_invoice_level_each_unpaid_invoice_has_its_own_delinquency_and_the_lapse_stops_where_the_plan_says(
    api, admin_token, jobs
):
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs, delinquencyPlanName="LongInvoice")
    advance(api, admin_token, tenant, jobs, "2026-03-02T00:00:00Z")
    february, march = invoices_of_account(api, admin_token, tenant, account)
    first, second = delinquencies_of_account(api, admin_token, tenant, account)
    assert [
        [r["referenceLocator"] for r in d["references"] if r["referenceType"] == "invoice"] for d in (first, second)
    ] == [[february["locator"]], [march["locator"]]]
    assert ok(call(api, "GET", billing(tenant, f"/delinquencies/invoices/{march['locator']}/list"), admin_token))[
        "items"
    ] == [second]

    pay(api, admin_token, tenant, account, february, Decimal(str(february["totalAmount"])))
    first, second = delinquencies_of_account(api, admin_token, tenant, account)
    assert (first["delinquencyState"], second["delinquencyState"]) == ("settled", "inGrace")
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]

    advance(api, admin_token, tenant, jobs, "2026-04-11T00:00:00Z")  # March's grace ends on April 10th
    second = ok(call(api, "GET", billing(tenant, f"/delinquencies/{second['locator']}"), admin_token))
    assert second["delinquencyState"] == "lapseTransactionCreated"
    [lapse] = [r["transactionLocator"] for r in second["references"] if r["referenceType"] == "policy"]
    transaction = ok(call(api, "GET", f"/policy/{tenant}/transactions/{lapse}", admin_token))
    assert (transaction["transactionState"], transaction["effectiveTime"]) == ("accepted", "2026-03-01T05:00:00.000Z")
    # accepted, not issued: still covered, and delinquent again by April's unpaid invoice, in a grace of its own
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]
    assert [d["delinquencyState"] for d in delinquencies_of_account(api, admin_token, tenant, account)] == [
        "settled",
        "lapseTransactionCreated",
        "inGrace",
    ]


def test_a_grace_end_moved_later_delays_the_lapse_and_a_cancelled_event_never_triggers(api, admin_token, jobs):
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-02-02T00:00:00Z")
    [opened] = delinquencies_of_account(api, admin_token, tenant, account)
    path = billing(tenant, f"/delinquencies/{opened['locator']}")
    assert_error(
        call(api, "PATCH", path, admin_token, {"graceEndAt": "2026-02-01T00:00:00Z"}), 400, "delinquency.invalid_time"
    )
    moved = call(api, "PATCH", path, admin_token, {"graceEndAt": "2026-02-15T05:00:00Z"})
    assert ok(moved)["graceEndAt"] == "2026-02-15T05:00:00.000Z"
    assert event_types(api, admin_token, tenant, moved) == ["billing.delinquency.update"]
    [reminder] = events_of(api, admin_token, tenant, opened["locator"])
    event_path = billing(tenant, f"/delinquencies/events/{reminder['locator']}")
    assert_error(
        call(api, "PATCH", event_path, admin_token, {"delinquencyEventState": "triggered"}),
        409,
        "delinquency.invalid_state",
    )
    cancelled = ok(call(api, "PATCH", event_path, admin_token, {"delinquencyEventState": "cancelled"}))
    assert cancelled["delinquencyEventState"] == "cancelled"
    assert ok(call(api, "GET", event_path, admin_token)) == cancelled

    advance(api, admin_token, tenant, jobs, "2026-02-12T00:00:00Z")  # past the grace end first planned
    assert delinquencies_of_account(api, admin_token, tenant, account)[0]["delinquencyState"] == "inGrace"
    assert [
        (j["cancelled"], j["cancellationType"]) for j in event_jobs(api, admin_token, tenant, opened["locator"])
    ] == [(True, "cancellationRequested")]
    advance(api, admin_token, tenant, jobs, "2026-02-16T00:00:00Z")
    assert (
        delinquencies_of_account(api, admin_token, tenant, account)[0]["delinquencyState"] == "lapseTransactionCreated"
    )
    assert events_of(api, admin_token, tenant, opened["locator"])[0]["delinquencyEventState"] == "cancelled"
    assert_error(
        call(api, "PATCH", path, admin_token, {"graceEndAt": "2026-03-15T05:00:00Z"}), 409, "delinquency.invalid_state"
    )
    assert statuses(api, admin_token, tenant, policy) == ["cancelled"]


def test_writing_off_the_unpaid_invoice_during_the_grace_settles_the_delinquency_and_nothing_lapses(
    api, admin_token, jobs
):
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-02-05T00:00:00Z")
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]

    written_off = call(
        api,
        "POST",
        billing(tenant, "/writeOffs"),
        admin_token,
        {"accountLocator": account, "targets": [{"containerLocator": invoice["locator"], "containerType": "invoice"}]},
    )
    assert written_off.status_code == 200, written_off.body
    assert {"billing.delinquency.settle", "billing.invoice.settle", "policy.status.update"} <= set(
        event_types(api, admin_token, tenant, written_off)
    )
    [settled] = delinquencies_of_account(api, admin_token, tenant, account)
    assert settled["delinquencyState"] == "settled"
    assert statuses(api, admin_token, tenant, policy) == ["onRisk"]

    advance(api, admin_token, tenant, jobs, "2026-02-28T00:00:00Z")
    transactions = ok(
        call(api, "GET", policy_path(tenant, policy["locator"], "/issuedTransactions/list"), admin_token)
    )["items"]
    assert [t["transactionCategory"] for t in transactions] == ["issuance"]
    assert events_of_type(api, admin_token, tenant, "billing.delinquency.lapse") == []


def test_a_change_that_applies_later_in_the_month_is_invoiced_at_its_own_times_and_never_overdue(
    api, admin_token, jobs
):
    """The repro of issue 26: February's invoice paid, the clock at Feb 5, a change effective Feb 20 raises the
    premium. Its first frame is Feb 20 to Mar 1, generated 10 days ahead of its start (Feb 10) and due at it:
    nothing is invoiced on Feb 5, nothing is overdue, the policy is not delinquent; unpaid, the grace opens on
    Feb 20, when the change applies."""
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-01-23T00:00:00Z")
    [february] = invoices_of_account(api, admin_token, tenant, account)
    pay(api, admin_token, tenant, account, february, february["totalAmount"])
    advance(api, admin_token, tenant, jobs, "2026-02-05T00:00:00Z")

    vehicle = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
    change = issued_change(
        api, admin_token, tenant, policy["locator"], "2026-02-20T05:00:00.000Z", modify(vehicle, value="25000")
    )
    jobs.drain()
    assert [i["locator"] for i in invoices_of_account(api, admin_token, tenant, account)] == [february["locator"]]
    first = next(
        i
        for i in ok(
            call(api, "GET", billing(tenant, f"/installments/policies/{policy['locator']}/list?count=100"), admin_token)
        )["items"]
        if i["transactionLocator"] == change["locator"] and i["installmentFrameIndex"] == 0
    )
    assert (first["installmentStartTime"], first["installmentEndTime"]) == (FEB_20, "2026-03-01T05:00:00.000Z")
    assert (first["generateTime"], first["dueTime"]) == ("2026-02-10T05:00:00.000Z", FEB_20)
    assert delinquencies_of_account(api, admin_token, tenant, account) == []
    assert statuses(api, admin_token, tenant, policy) == ["onRisk"]

    advance(api, admin_token, tenant, jobs, "2026-02-19T00:00:00Z")
    [_, changed] = invoices_of_account(api, admin_token, tenant, account)
    assert (changed["generatedTime"], changed["dueTime"]) == ("2026-02-10T05:00:00.000Z", FEB_20)
    # the change's charges, each spread over 9/28 of a month and eleven whole months (9/317 on the first
    # frame): the new premium, 150.00 a month (the band of 1.5) for Feb 20 to Feb 1 (11 + 12/31 months),
    # 1,708.06: 48.49; the old premium's 1,200.00 less its 19/28 of February, -1,132.14: -32.14; the new
    # segment's tax of 25.00: 0.71; the old tax less its 19/28 of a twelfth, -23.59: -0.67
    assert changed["totalAmount"] == Decimal("48.49") - Decimal("32.14") + Decimal("0.71") - Decimal("0.67")
    assert delinquencies_of_account(api, admin_token, tenant, account) == []
    assert statuses(api, admin_token, tenant, policy) == ["onRisk"]

    advance(api, admin_token, tenant, jobs, "2026-02-21T00:00:00Z")
    [opened] = delinquencies_of_account(api, admin_token, tenant, account)
    assert (opened["graceStartedAt"], opened["graceEndAt"]) == (FEB_20, "2026-03-02T05:00:00.000Z")
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]
