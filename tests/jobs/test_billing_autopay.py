"""Autopay by time travel on a test-clock tenant: the billing test configuration (tests/api/billing/
support.py) with the Monthly plan setting `autopayLeadDays: 2`; the policy runs a year from 2026-02-01
(midnight in New York), premium 100.00 a month and a tax of 25.00, invoices generated 10 days ahead and
due at the installment's start, autopaid two days before."""

from __future__ import annotations

from decimal import Decimal

from tests.api.billing.support import billed_policy, billing, billing_model, invoices_of_account, posted_payment
from tests.jobs.support import DUE_DAYS
from tests.support.api import call, event_types, ok
from tests.support.clock import advance
from tests.support.configs import quotes_tenant


def autopay_tenant(api, token, payments=None):
    model = billing_model()
    model["installmentPlans"]["Monthly"]["autopayLeadDays"] = 2
    if payments is not None:
        model["payments"] = payments
    return quotes_tenant(api, token, model, test_clock=True)


def payments_of(api, token, tenant, account):
    return ok(call(api, "GET", billing(tenant, f"/payments/list?accountLocator={account}&count=100"), token))["items"]


def test_each_invoice_is_paid_at_its_autopay_time_unless_suppressed(api, admin_token, jobs):
    tenant = autopay_tenant(api, admin_token)
    account, _ = billed_policy(api, admin_token, tenant, jobs)

    advance(api, admin_token, tenant, jobs, "2026-01-29T00:00:00Z")  # February's invoice, generated 2026-01-22
    [february] = invoices_of_account(api, admin_token, tenant, account)
    assert february["autopayTime"] == "2026-01-30T05:00:00.000Z" and february["invoiceState"] == "open"
    assert payments_of(api, admin_token, tenant, account) == []

    response = advance(api, admin_token, tenant, jobs, "2026-02-20T00:00:00Z")  # past its autopay time
    february, march = invoices_of_account(api, admin_token, tenant, account)
    assert (february["invoiceState"], february["totalRemainingAmount"]) == ("settled", 0)
    assert february["settledTime"] == "2026-01-30T05:00:00.000Z"
    assert (march["invoiceState"], march["dueTime"]) == ("open", DUE_DAYS[1])  # autopaid 2026-02-27
    [payment] = payments_of(api, admin_token, tenant, account)
    assert (payment["paymentState"], payment["type"], payment["transactionMethod"]) == ("posted", "Card", "standard")
    assert payment["amount"] == february["totalAmount"]
    assert payment["targets"] == [{"containerLocator": february["locator"], "containerType": "invoice"}]
    assert payment["postedAt"] == "2026-01-30T05:00:00.000Z"
    assert event_types(api, admin_token, tenant, response).count("billing.invoice.autopay") == 1
    assert [t for t in event_types(api, admin_token, tenant, response) if t.startswith("billing.payment")] == [
        "billing.payment.create",
        "billing.payment.validate",
        "billing.payment.post",
    ]
    lifecycle = ok(call(api, "GET", billing(tenant, f"/jobs/invoicesLifecycle/{march['locator']}"), admin_token))
    assert lifecycle["contextData"]["triggers"] == [
        {"triggerTime": "2026-02-27T05:00:00.000Z", "triggerType": "autopay"},
        {"triggerTime": DUE_DAYS[1], "triggerType": "due"},
    ]

    ok(
        call(
            api,
            "PATCH",
            billing(tenant, f"/invoices/{march['locator']}"),
            admin_token,
            {"autopayTime": march["autopayTime"], "suppressAutopay": True},
        )
    )
    advance(api, admin_token, tenant, jobs, "2026-03-31T00:00:00Z")  # March's autopay time and April's pass
    february, march, april = invoices_of_account(api, admin_token, tenant, account)
    assert (march["invoiceState"], march["totalRemainingAmount"]) == ("open", march["totalAmount"])
    assert (april["invoiceState"], april["settledTime"]) == ("settled", "2026-03-30T04:00:00.000Z")
    paid = payments_of(api, admin_token, tenant, account)
    assert [p["targets"][0]["containerLocator"] for p in paid] == [february["locator"], april["locator"]]


def test_autopay_pays_what_is_left_and_leaves_a_settled_invoice_alone(api, admin_token, jobs):
    tenant = autopay_tenant(api, admin_token)
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-01-29T00:00:00Z")
    [february] = invoices_of_account(api, admin_token, tenant, account)
    posted_payment(
        api, admin_token, tenant, account, Decimal("40.00"), invoice=february["locator"], payment_type="Card"
    )

    advance(api, admin_token, tenant, jobs, "2026-02-21T00:00:00Z")
    february, march = invoices_of_account(api, admin_token, tenant, account)
    assert february["invoiceState"] == "settled"
    [autopaid] = [p for p in payments_of(api, admin_token, tenant, account) if p.get("transactionMethod") == "standard"]
    assert autopaid["amount"] == february["totalAmount"] - Decimal("40.00")
    # March is paid by hand before its autopay time: autopay finds nothing owed
    posted_payment(
        api, admin_token, tenant, account, march["totalAmount"], invoice=march["locator"], payment_type="Card"
    )
    advance(api, admin_token, tenant, jobs, "2026-03-01T00:00:00Z")
    assert len(payments_of(api, admin_token, tenant, account)) == 3
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )
    assert balance["balance"] == 0


def test_without_a_payment_type_autopay_fails_and_records_it(api, admin_token, jobs):
    tenant = autopay_tenant(api, admin_token, payments={})
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    response = advance(api, admin_token, tenant, jobs, "2026-02-01T00:00:00Z")
    [february] = invoices_of_account(api, admin_token, tenant, account)
    assert february["invoiceState"] == "open"
    assert "billing.invoice.autopayfailed" in event_types(api, admin_token, tenant, response)
    assert payments_of(api, admin_token, tenant, account) == []
