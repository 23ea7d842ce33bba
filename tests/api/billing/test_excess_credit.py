"""Excess credit and shortfall plans through the API (socotra-semantics.md §4.4): an overpayment's credit
above the plan's threshold is disbursed at once (the posting enqueues it; the disbursement goes up to
`advanceDisbursementTo`, netting those still pending), credit is applied to invoices as they are
generated (`autoApplyExcessToInvoicesEnabled`, time travel on a test clock), and a payment short of an
invoice by no more than the tolerance settles it with a shortfall write-off. The policies of
tests/api/billing/support.py (1,225.00 a year), the clock at 2026-01-15T09:30Z."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tests.api.billing.support import billed_policy, billing, billing_model, invoices_of_account, new_payment
from tests.api.transactions.support import issued_policy
from tests.support.api import call, event_types, ok
from tests.support.clock import advance
from tests.support.configs import quotes_tenant


def tenant_with(api, token, default_plan: str, *, test_clock: bool = False, **plan: Any) -> str:
    """A billing tenant whose default excess credit plan is `plan`, with a shortfall tolerance of 5.00 USD."""
    model = billing_model(default_plan)
    model["excessCreditPlans"] = {"Excess": plan}
    model["defaultExcessCreditPlan"] = "Excess"
    model["shortfallTolerancePlans"] = {"Small": {"currencyTolerances": {"USD": 5}}}
    model["defaultShortfallTolerancePlan"] = "Small"
    return quotes_tenant(api, token, model, test_clock=test_clock)


def pay(api, token, tenant, account, amount, invoice=None):
    targets = [{"containerType": "invoice", "containerLocator": invoice}] if invoice else []
    payment = ok(new_payment(api, token, tenant, account, "Check", amount, targets))
    return call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/post"), token)


def balance(api, token, tenant, account):
    return ok(call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), token))[
        "balance"
    ]


def disbursements(api, token, tenant, account):
    found = ok(call(api, "GET", billing(tenant, f"/disbursements/list?accountLocator={account}"), token))["items"]
    return [(d["type"], d["amount"], d["disbursementState"]) for d in found]


def test_an_overpayment_above_the_threshold_is_disbursed_and_executed(api, admin_token, jobs):
    tenant = tenant_with(
        api,
        admin_token,
        "FullPay",
        disburseExcess=True,
        disbursementType="Refund",
        disbursementThresholds={"USD": 10},
        advanceDisbursementTo="executed",
    )
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    [invoice] = invoices_of_account(api, admin_token, tenant, account)

    posted = pay(api, admin_token, tenant, account, 1300, invoice["locator"])
    assert ok(posted)["paymentState"] == "posted"
    assert balance(api, admin_token, tenant, account) == Decimal("75.00")  # until the posting's job runs
    jobs.drain()

    assert disbursements(api, admin_token, tenant, account) == [("Refund", Decimal("65.00"), "executed")]
    assert balance(api, admin_token, tenant, account) == Decimal("10.00")
    lines = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )["lineItems"]
    assert [(line["accountingType"], line["amount"]) for line in lines] == [
        ("credit", Decimal("75.00")),
        ("debit", Decimal("65.00")),
    ]

    pay(api, admin_token, tenant, account, Decimal("5.00"))  # credit 15.00: within the threshold
    jobs.drain()
    assert disbursements(api, admin_token, tenant, account) == [
        ("Refund", Decimal("65.00"), "executed"),
        ("Refund", Decimal("5.00"), "executed"),
    ]
    assert balance(api, admin_token, tenant, account) == Decimal("10.00")


def test_a_pending_automatic_disbursement_is_netted_before_another_is_made(api, admin_token, jobs):
    tenant = tenant_with(
        api,
        admin_token,
        "FullPay",
        disburseExcess=True,
        disbursementType="Refund",
        disbursementThresholds={"USD": 10},
        advanceDisbursementTo="approved",
    )
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    pay(api, admin_token, tenant, account, 1300, invoice["locator"])
    jobs.drain()
    assert disbursements(api, admin_token, tenant, account) == [("Refund", Decimal("65.00"), "approved")]
    assert balance(api, admin_token, tenant, account) == Decimal("75.00")  # approved: not paid out yet

    pay(api, admin_token, tenant, account, 20)
    jobs.drain()
    assert disbursements(api, admin_token, tenant, account) == [
        ("Refund", Decimal("65.00"), "approved"),
        ("Refund", Decimal("20.00"), "approved"),
    ]
    [first, _] = ok(call(api, "GET", billing(tenant, f"/disbursements/list?accountLocator={account}"), admin_token))[
        "items"
    ]
    ok(call(api, "PATCH", billing(tenant, f"/disbursements/{first['locator']}/execute"), admin_token))
    assert balance(api, admin_token, tenant, account) == Decimal("30.00")


def test_credit_is_applied_to_invoices_as_they_are_generated(api, admin_token, jobs):
    tenant = tenant_with(
        api, admin_token, "Monthly", test_clock=True, disburseExcess=False, autoApplyExcessToInvoicesEnabled=True
    )
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-01-23T00:00:00Z")
    [february] = invoices_of_account(api, admin_token, tenant, account)
    pay(api, admin_token, tenant, account, 250, february["locator"])
    jobs.drain()
    credit = Decimal(250) - february["totalAmount"]
    assert balance(api, admin_token, tenant, account) == credit  # a posting applies nothing more

    advance(api, admin_token, tenant, jobs, "2026-02-20T00:00:00Z")
    _, march = invoices_of_account(api, admin_token, tenant, account)
    assert (march["invoiceState"], march["totalRemainingAmount"]) == ("settled", 0)
    credit -= march["totalAmount"]
    assert balance(api, admin_token, tenant, account) == credit
    [distribution] = ok(
        call(api, "GET", billing(tenant, f"/creditDistributions/list?accountLocator={account}"), admin_token)
    )["items"]
    assert (distribution["creditDistributionState"], distribution["appliedAmount"]) == (
        "executed",
        march["totalAmount"],
    )
    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{march['locator']}/credits/list"), admin_token))["items"]
    assert [(c["creditType"], c["amount"]) for c in credits] == [("creditDistribution", march["totalAmount"])]

    advance(api, admin_token, tenant, jobs, "2026-04-25T00:00:00Z")  # April's, then May's invoice
    _, _, april, may = invoices_of_account(api, admin_token, tenant, account)
    assert april["totalAmount"] > credit > 0
    assert (april["invoiceState"], april["totalRemainingAmount"]) == ("open", april["totalAmount"] - credit)
    assert (may["invoiceState"], may["totalRemainingAmount"]) == ("open", may["totalAmount"])
    assert balance(api, admin_token, tenant, account) == 0
    assert disbursements(api, admin_token, tenant, account) == []


def test_a_shortfall_within_the_tolerance_is_written_off(api, admin_token, jobs):
    tenant = tenant_with(api, admin_token, "FullPay", disburseExcess=False)
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    issued_policy(api, admin_token, tenant, account)
    jobs.drain()
    first, second = invoices_of_account(api, admin_token, tenant, account)

    posted = pay(api, admin_token, tenant, account, Decimal("1221.00"), first["locator"])
    assert event_types(api, admin_token, tenant, posted) == [
        "billing.writeoff.create",
        "billing.writeoff.distribute",
        "billing.invoice.settle",
        "billing.payment.post",
    ]
    settled = ok(call(api, "GET", billing(tenant, f"/invoices/{first['locator']}"), admin_token))
    assert (settled["invoiceState"], settled["totalRemainingAmount"]) == ("settled", 0)
    [shortfall] = ok(call(api, "GET", billing(tenant, f"/writeOffs/list?accountLocator={account}"), admin_token))[
        "items"
    ]
    assert (shortfall["creditType"], shortfall["amount"], shortfall["writeOffState"]) == (
        "shortfallWriteOff",
        Decimal("4.00"),
        "distributed",
    )
    assert [(t["containerLocator"], t["amount"]) for t in shortfall["targets"]] == [(first["locator"], Decimal("4.00"))]
    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{first['locator']}/credits/list"), admin_token))["items"]
    assert [(c["creditType"], c["creditState"], c["amount"]) for c in credits] == [
        ("payment", "posted", Decimal("1221.00")),
        ("shortfallWriteOff", "distributed", Decimal("4.00")),
    ]

    pay(api, admin_token, tenant, account, Decimal("1219.00"), second["locator"])  # 6.00 short: more than the tolerance
    still = ok(call(api, "GET", billing(tenant, f"/invoices/{second['locator']}"), admin_token))
    assert (still["invoiceState"], still["totalRemainingAmount"]) == ("open", Decimal("6.00"))
    assert (
        len(ok(call(api, "GET", billing(tenant, f"/writeOffs/list?accountLocator={account}"), admin_token))["items"])
        == 1
    )
    assert balance(api, admin_token, tenant, account) == 0
