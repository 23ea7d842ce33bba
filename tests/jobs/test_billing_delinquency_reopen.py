"""Reversals re-open delinquency on test-clock tenants (the configuration of test_billing_delinquency.py:
February's invoice of 102.08 due 2026-02-01T05:00Z, 10 days of grace, a reminder 3 days before its end):
a reversed payment, write-off or credit distribution that re-opens an invoice past its due time puts its
settled delinquency back in grace (grace end and reminder at their times) when that grace end lies ahead,
else opens a new delinquency in grace from the reversal; a delinquency hold's release brings back the
events it cancelled."""

from __future__ import annotations

from decimal import Decimal

from tests.api.billing.delinquency_support import (
    FEB_DUE,
    delinquencies_of_account,
    delinquency_tenant,
    event_jobs,
    events_of,
    events_of_type,
    hold,
    pay,
    statuses,
)
from tests.api.billing.support import amounts, billed_policy, billing, invoices_of_account
from tests.support.api import call, event_types, ok
from tests.support.clock import advance


def lapse_of(api, token, tenant, delinquency):
    """The issued lapse transaction of a delinquency's (only) policy."""
    [lapse] = [r["transactionLocator"] for r in delinquency["references"] if r["referenceType"] == "policy"]
    return ok(call(api, "GET", f"/policy/{tenant}/transactions/{lapse}", token))


def test_a_payment_reversed_during_the_grace_re_opens_the_delinquency_and_the_policy_lapses_at_its_grace_end(
    api, admin_token, jobs
):
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-02-05T00:00:00Z")
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    posted = ok(pay(api, admin_token, tenant, account, invoice, Decimal("102.08")))
    [settled] = delinquencies_of_account(api, admin_token, tenant, account)
    assert settled["delinquencyState"] == "settled"
    assert statuses(api, admin_token, tenant, policy) == ["onRisk"]

    advance(api, admin_token, tenant, jobs, "2026-02-06T00:00:00Z")
    reversed_payment = call(api, "PATCH", billing(tenant, f"/payments/{posted['locator']}/reverse"), admin_token)
    assert ok(reversed_payment)["paymentState"] == "reversed"
    assert sorted(event_types(api, admin_token, tenant, reversed_payment)) == [
        "billing.delinquency.delinquencyevent.activate",
        "billing.delinquency.update",
        "billing.invoice.unsettle",
        "billing.payment.reverse",
        "policy.status.update",
    ]
    [reopened] = delinquencies_of_account(api, admin_token, tenant, account)
    assert (reopened["locator"], reopened["delinquencyState"], reopened["graceStartedAt"], reopened["graceEndAt"]) == (
        settled["locator"],
        "inGrace",
        FEB_DUE,
        "2026-02-11T05:00:00.000Z",
    )
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]
    [reminder] = events_of(api, admin_token, tenant, reopened["locator"])
    assert (reminder["delinquencyEventState"], reminder["triggerTime"]) == ("active", "2026-02-08T05:00:00.000Z")
    assert [(j["jobStatus"], j["cancelled"]) for j in event_jobs(api, admin_token, tenant, reopened["locator"])] == [
        ("queued", False)
    ]

    advance(api, admin_token, tenant, jobs, "2026-02-11T04:59:00Z")
    [reminder] = events_of(api, admin_token, tenant, reopened["locator"])
    assert (reminder["delinquencyEventState"], reminder["triggeredAt"]) == ("triggered", "2026-02-08T05:00:00.000Z")
    assert delinquencies_of_account(api, admin_token, tenant, account)[0]["delinquencyState"] == "inGrace"

    advance(api, admin_token, tenant, jobs, "2026-02-11T05:00:00Z")
    [lapsed] = delinquencies_of_account(api, admin_token, tenant, account)
    assert (lapsed["delinquencyState"], lapsed["lapseTransactionEffectiveDate"]) == ("lapseTransactionCreated", FEB_DUE)
    lapse = lapse_of(api, admin_token, tenant, lapsed)
    assert (lapse["transactionCategory"], lapse["transactionState"]) == ("cancellation", "issued")
    assert statuses(api, admin_token, tenant, policy) == ["cancelled"]
    assert len(events_of_type(api, admin_token, tenant, "billing.delinquency.lapse")) == 1


def test_a_payment_made_before_the_due_time_and_reversed_after_it_opens_a_grace_from_the_reversal(
    api, admin_token, jobs
):
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-01-25T00:00:00Z")
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    posted = ok(pay(api, admin_token, tenant, account, invoice, Decimal("102.08")))
    advance(api, admin_token, tenant, jobs, "2026-02-03T12:00:00Z")
    assert delinquencies_of_account(api, admin_token, tenant, account) == []

    ok(call(api, "PATCH", billing(tenant, f"/payments/{posted['locator']}/reverse"), admin_token))
    [opened] = delinquencies_of_account(api, admin_token, tenant, account)
    assert (opened["delinquencyState"], opened["graceStartedAt"], opened["graceEndAt"]) == (
        "inGrace",
        "2026-02-03T12:00:00.000Z",
        "2026-02-13T12:00:00.000Z",
    )
    assert [r["referenceLocator"] for r in opened["references"] if r["referenceType"] == "invoice"] == [
        invoice["locator"]
    ]
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]
    [reminder] = events_of(api, admin_token, tenant, opened["locator"])
    assert reminder["triggerTime"] == "2026-02-10T12:00:00.000Z"

    advance(api, admin_token, tenant, jobs, "2026-02-13T11:59:00Z")
    assert delinquencies_of_account(api, admin_token, tenant, account)[0]["delinquencyState"] == "inGrace"
    advance(api, admin_token, tenant, jobs, "2026-02-13T12:00:00Z")
    [lapsed] = delinquencies_of_account(api, admin_token, tenant, account)
    assert lapsed["delinquencyState"] == "lapseTransactionCreated"
    assert lapse_of(api, admin_token, tenant, lapsed)["effectiveTime"] == "2026-02-03T12:00:00.000Z"
    assert statuses(api, admin_token, tenant, policy) == ["cancelled"]


def test_a_write_off_reversed_after_the_grace_end_opens_a_new_grace_and_a_lapsed_one_opens_nothing(
    api, admin_token, jobs
):
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-02-05T00:00:00Z")
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    written_off = ok(
        call(
            api,
            "POST",
            billing(tenant, "/writeOffs"),
            admin_token,
            {
                "accountLocator": account,
                "targets": [{"containerLocator": invoice["locator"], "containerType": "invoice"}],
            },
        )
    )
    [settled] = delinquencies_of_account(api, admin_token, tenant, account)
    assert settled["delinquencyState"] == "settled"

    advance(api, admin_token, tenant, jobs, "2026-02-12T00:00:00Z")  # past the settled one's grace end
    partly = call(
        api,
        "PATCH",
        billing(tenant, f"/writeOffs/{written_off['locator']}/reverse"),
        admin_token,
        {"amount": Decimal("10.00")},
    )
    assert ok(partly)["writeOffState"] == "distributed"
    assert {"billing.delinquency.create", "billing.delinquency.delinquencyevent.create", "policy.status.update"} <= set(
        event_types(api, admin_token, tenant, partly)
    )
    first, second = delinquencies_of_account(api, admin_token, tenant, account)
    assert (first["locator"], first["delinquencyState"]) == (settled["locator"], "settled")
    assert (second["delinquencyState"], second["graceStartedAt"], second["graceEndAt"]) == (
        "inGrace",
        "2026-02-12T00:00:00.000Z",
        "2026-02-22T00:00:00.000Z",
    )
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]

    advance(api, admin_token, tenant, jobs, "2026-02-22T00:00:00Z")
    assert [d["delinquencyState"] for d in delinquencies_of_account(api, admin_token, tenant, account)] == [
        "settled",
        "lapseTransactionCreated",
    ]
    assert statuses(api, admin_token, tenant, policy) == ["cancelled"]
    ok(call(api, "PATCH", billing(tenant, f"/writeOffs/{written_off['locator']}/reverse"), admin_token))
    assert len(delinquencies_of_account(api, admin_token, tenant, account)) == 2


def test_releasing_a_delinquency_hold_brings_back_the_events_it_cancelled_at_their_times(api, admin_token, jobs):
    tenant = delinquency_tenant(api, admin_token)
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-02-02T00:00:00Z")
    [opened] = delinquencies_of_account(api, admin_token, tenant, account)
    held = hold(api, admin_token, tenant, account, "delinquency")
    assert events_of(api, admin_token, tenant, opened["locator"])[0]["delinquencyEventState"] == "cancelled"

    advance(api, admin_token, tenant, jobs, "2026-02-05T00:00:00Z")
    released = call(api, "PATCH", billing(tenant, f"/holds/{held['locator']}/release"), admin_token)
    assert sorted(event_types(api, admin_token, tenant, released)) == [
        "billing.delinquency.delinquencyevent.activate",
        "billing.hold.release",
    ]
    [reminder] = events_of(api, admin_token, tenant, opened["locator"])
    assert (reminder["delinquencyEventState"], reminder["triggerTime"]) == ("active", "2026-02-08T05:00:00.000Z")
    assert [
        (j["jobStatus"], j["cancelled"], j.get("cancellationType"))
        for j in event_jobs(api, admin_token, tenant, opened["locator"])
    ] == [("queued", False, None)]

    advance(api, admin_token, tenant, jobs, "2026-02-09T00:00:00Z")
    [reminder] = events_of(api, admin_token, tenant, opened["locator"])
    assert (reminder["delinquencyEventState"], reminder["triggeredAt"]) == ("triggered", "2026-02-08T05:00:00.000Z")
    assert delinquencies_of_account(api, admin_token, tenant, account)[0]["delinquencyState"] == "inGrace"


def test_a_payment_of_two_invoices_reversed_after_their_due_times_opens_one_grace_of_both(api, admin_token, jobs):
    """At `delinquencyLevel: policy` both re-opened invoices join one delinquency (the policy written once)."""
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    early = {
        "ignoreHolds": False,
        "installmentLocators": [],
        "accountLocator": account,
        "invoiceThroughTime": "2026-03-01T06:00:00Z",
    }
    ok(call(api, "POST", billing(tenant, "/invoices/earlyInvoicing"), admin_token, early))  # February's and March's
    jobs.drain()
    february, march = invoices_of_account(api, admin_token, tenant, account)
    payment = ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            admin_token,
            {
                "accountLocator": account,
                "type": "Card",
                "amount": sum(amounts([february, march])),
                "data": {},
                "targets": [],
            },
        )
    )
    ok(call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/post"), admin_token))
    assert [i["invoiceState"] for i in invoices_of_account(api, admin_token, tenant, account)] == ["settled"] * 2
    advance(api, admin_token, tenant, jobs, "2026-03-03T00:00:00Z")
    assert delinquencies_of_account(api, admin_token, tenant, account) == []  # paid before their due times

    reversed_payment = call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/reverse"), admin_token)
    assert ok(reversed_payment)["paymentState"] == "reversed"
    [opened] = delinquencies_of_account(api, admin_token, tenant, account)
    assert (opened["delinquencyState"], opened["graceStartedAt"], opened["graceEndAt"]) == (
        "inGrace",
        "2026-03-03T00:00:00.000Z",
        "2026-03-12T23:00:00.000Z",
    )  # 10 local days, over the DST change
    assert sorted(r["referenceLocator"] for r in opened["references"] if r["referenceType"] == "invoice") == sorted(
        [february["locator"], march["locator"]]
    )
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]
    assert event_types(api, admin_token, tenant, reversed_payment).count("policy.status.update") == 1


def test_a_credit_distribution_reversed_during_the_grace_re_opens_the_delinquency(api, admin_token, jobs):
    """A prepayment goes into credit; the credit distributed settles February's delinquency, its reversal
    re-opens it, and the policy lapses at the grace end."""
    tenant = delinquency_tenant(api, admin_token)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    prepaid = ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            admin_token,
            {"accountLocator": account, "type": "Card", "amount": Decimal("102.08"), "data": {}, "targets": []},
        )
    )
    ok(call(api, "PATCH", billing(tenant, f"/payments/{prepaid['locator']}/post"), admin_token))  # all into credit
    advance(api, admin_token, tenant, jobs, "2026-02-05T00:00:00Z")
    [opened] = delinquencies_of_account(api, admin_token, tenant, account)
    distribution = ok(
        call(
            api,
            "POST",
            billing(tenant, "/creditDistributions"),
            admin_token,
            {"accountLocator": account, "amount": Decimal("102.08"), "sources": [], "targets": []},
        )
    )
    path = billing(tenant, f"/creditDistributions/{distribution['locator']}")
    ok(call(api, "PATCH", f"{path}/execute", admin_token))
    assert delinquencies_of_account(api, admin_token, tenant, account)[0]["delinquencyState"] == "settled"

    reversed_distribution = call(api, "PATCH", f"{path}/reverse", admin_token, {"reversalType": "test"})
    assert ok(reversed_distribution)["creditDistributionState"] == "reversed"
    assert {"billing.delinquency.update", "billing.invoice.unsettle", "policy.status.update"} <= set(
        event_types(api, admin_token, tenant, reversed_distribution)
    )
    [reopened] = delinquencies_of_account(api, admin_token, tenant, account)
    assert (reopened["locator"], reopened["delinquencyState"]) == (opened["locator"], "inGrace")
    assert statuses(api, admin_token, tenant, policy) == ["onRisk", "delinquent"]
    advance(api, admin_token, tenant, jobs, "2026-02-12T00:00:00Z")
    assert (
        delinquencies_of_account(api, admin_token, tenant, account)[0]["delinquencyState"] == "lapseTransactionCreated"
    )
