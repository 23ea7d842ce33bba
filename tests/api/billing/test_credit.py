"""Drawing on the credit balance through the API: credit distributions apply it to invoices,
disbursements pay it out; only executing moves money, never more than the balance holds, and a
reversal puts back exactly what moved. Full-pay policies of tests/api/billing/support.py (one invoice of
1,225.00 each); the clock at 2026-01-15T09:30Z."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.billing.support import (
    billed_policy,
    billing,
    billing_tenant,
    executed_distribution,
    invoices_of_account,
    posted_payment,
)
from tests.api.transactions.support import issued_policy
from tests.support.api import assert_error, call, event_types, ok


@pytest.fixture
def full_pay(api, admin_token):
    return billing_tenant(api, admin_token, "FullPay")


def in_credit(api, token, tenant, jobs):
    """An account with two invoices of 1,225.00: the first paid with 1,300.00 (75.00 into credit), the
    second open."""
    account, _ = billed_policy(api, token, tenant, jobs)
    issued_policy(api, token, tenant, account)
    jobs.drain()
    first, second = invoices_of_account(api, token, tenant, account)
    posted_payment(api, token, tenant, account, 1300, invoice=first["locator"])
    assert balance(api, token, tenant, account) == Decimal("75.00")
    return account, second["locator"]


def balance(api, token, tenant, account):
    return ok(call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), token))[
        "balance"
    ]


def remaining(api, token, tenant, invoice):
    found = ok(call(api, "GET", billing(tenant, f"/invoices/{invoice}"), token))
    return found["invoiceState"], found["totalRemainingAmount"]


def test_a_credit_distribution_applies_the_balance_to_invoices_and_its_reversal_gives_it_back(
    api, admin_token, jobs, full_pay
):
    tenant, token = full_pay, admin_token
    account, second = in_credit(api, token, tenant, jobs)
    path = billing(tenant, "/creditDistributions")

    created = call(
        api,
        "POST",
        path,
        token,
        {
            "accountLocator": account,
            "amount": 50,
            "sources": [],
            "targets": [{"containerType": "invoice", "containerLocator": second}],
        },
    )
    draft = ok(created)
    assert (draft["creditDistributionState"], draft["amount"], draft["currency"]) == ("draft", Decimal("50.00"), "USD")
    assert [(s["containerType"], s["containerLocator"]) for s in draft["sources"]] == [("account", account)]
    assert event_types(api, token, tenant, created) == ["billing.creditdistribution.create"]
    assert balance(api, token, tenant, account) == Decimal("75.00")  # a draft moves nothing
    assert (
        ok(call(api, "PATCH", f"{path}/{draft['locator']}/validate", token))["creditDistributionState"] == "validated"
    )

    executed = call(api, "PATCH", f"{path}/{draft['locator']}/execute", token)
    assert (ok(executed)["creditDistributionState"], ok(executed)["appliedAmount"]) == ("executed", Decimal("50.00"))
    assert ok(executed)["executedAt"] == "2026-01-15T09:30:00.000Z"
    assert event_types(api, token, tenant, executed) == ["billing.creditdistribution.distribute"]
    assert remaining(api, token, tenant, second) == ("open", Decimal("1175.00"))
    assert balance(api, token, tenant, account) == Decimal("25.00")
    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{second}/credits/list"), token))["items"]
    assert [(c["creditType"], c["locator"], c["amount"]) for c in credits] == [
        ("creditDistribution", draft["locator"], Decimal("50.00"))
    ]

    too_much = ok(
        call(api, "POST", path, token, {"accountLocator": account, "amount": Decimal("25.01"), "targets": []})
    )
    assert_error(call(api, "PATCH", f"{path}/{too_much['locator']}/execute", token), 409, "credit.insufficient_balance")
    assert remaining(api, token, tenant, second) == ("open", Decimal("1175.00"))
    assert balance(api, token, tenant, account) == Decimal("25.00")
    assert ok(call(api, "GET", f"{path}/{too_much['locator']}", token))["creditDistributionState"] == "draft"
    assert (
        ok(call(api, "PATCH", f"{path}/{too_much['locator']}/discard", token))["creditDistributionState"] == "discarded"
    )
    assert_error(
        call(api, "PATCH", f"{path}/{too_much['locator']}/execute", token), 409, "creditDistribution.invalid_state"
    )

    reversed_ = call(api, "PATCH", f"{path}/{draft['locator']}/reverse", token, {"reversalType": "mistake"})
    assert (ok(reversed_)["creditDistributionState"], ok(reversed_)["reversalReason"]) == ("reversed", "mistake")
    assert event_types(api, token, tenant, reversed_) == ["billing.creditdistribution.reverse"]
    assert remaining(api, token, tenant, second) == ("open", Decimal("1225.00"))
    assert balance(api, token, tenant, account) == Decimal("75.00")
    assert_error(
        call(api, "PATCH", f"{path}/{draft['locator']}/reverse", token), 409, "creditDistribution.invalid_state"
    )

    whole = ok(call(api, "POST", path, token, {"accountLocator": account, "amount": 75, "targets": []}))
    settled = ok(call(api, "PATCH", f"{path}/{whole['locator']}/execute", token))
    assert settled["appliedAmount"] == Decimal("75.00") and balance(api, token, tenant, account) == 0
    listed = ok(call(api, "GET", f"{path}/list?accountLocator={account}", token))["items"]
    assert [(d["locator"], d["creditDistributionState"]) for d in listed] == [
        (draft["locator"], "reversed"),
        (too_much["locator"], "discarded"),
        (whole["locator"], "executed"),
    ]


def test_a_credit_distribution_refuses_foreign_sources_and_targets(api, admin_token, jobs, full_pay):
    tenant, token = full_pay, admin_token
    account, second = in_credit(api, token, tenant, jobs)
    other, _ = billed_policy(api, token, tenant, jobs)
    [foreign] = invoices_of_account(api, token, tenant, other)
    path = billing(tenant, "/creditDistributions")
    body = {"accountLocator": account, "amount": 10, "targets": []}
    assert_error(
        call(api, "POST", path, token, {**body, "sources": [{"containerType": "account", "containerLocator": other}]}),
        400,
        "credit.invalid_source",
    )
    assert_error(
        call(
            api,
            "POST",
            path,
            token,
            {**body, "targets": [{"containerType": "invoice", "containerLocator": foreign["locator"]}]},
        ),
        400,
        "credit.invalid_target",
    )
    assert_error(call(api, "POST", path, token, {**body, "amount": Decimal("0.001")}), 400, "credit.invalid_amount")
    assert_error(call(api, "POST", path, token, {"amount": 10, "targets": []}), 400, "credit.account_required")
    assert ok(call(api, "GET", f"{path}/list?accountLocator={account}", token))["items"] == []
    elsewhere = billing_tenant(api, token, "FullPay")
    made = ok(call(api, "POST", path, token, body))
    assert_error(
        call(api, "PATCH", billing(elsewhere, f"/creditDistributions/{made['locator']}/execute"), token),
        404,
        "creditDistribution.not_found",
    )
    assert balance(api, token, tenant, account) == Decimal("75.00")
    assert remaining(api, token, tenant, second) == ("open", Decimal("1225.00"))


def test_a_disbursement_pays_out_credit_only_once_approved_and_never_more_than_the_balance(
    api, admin_token, jobs, full_pay
):
    tenant, token = full_pay, admin_token
    account, _ = in_credit(api, token, tenant, jobs)
    path = billing(tenant, "/disbursements")
    body = {
        "accountLocator": account,
        "type": "refund",
        "amount": 60,
        "data": {},
        "sources": [],
        "useDefaultFinancialInstrument": False,
        "transactionMethod": "ach",
    }

    created = call(api, "POST", path, token, body)
    refund = ok(created)
    assert (refund["disbursementState"], refund["type"], refund["amount"]) == ("draft", "Refund", Decimal("60.00"))
    assert event_types(api, token, tenant, created) == ["billing.disbursement.create"]
    assert_error(call(api, "PATCH", f"{path}/{refund['locator']}/execute", token), 409, "disbursement.invalid_state")
    for step, state in (("validate", "validated"), ("approve", "approved")):
        assert ok(call(api, "PATCH", f"{path}/{refund['locator']}/{step}", token))["disbursementState"] == state
    assert balance(api, token, tenant, account) == Decimal("75.00")
    executed = call(api, "PATCH", f"{path}/{refund['locator']}/execute", token)
    assert ok(executed)["disbursementState"] == "executed"
    assert event_types(api, token, tenant, executed) == ["billing.disbursement.execute"]
    assert balance(api, token, tenant, account) == Decimal("15.00")

    big = ok(call(api, "POST", path, token, {**body, "amount": Decimal("15.01")}))
    refused = assert_error(
        call(api, "PATCH", f"{path}/{big['locator']}/validate", token), 409, "credit.insufficient_balance"
    )
    assert refused["message"] == (
        f"The disbursement of 15.01 USD exceeds the credit balance of account {account}: 15.00 USD available"
    )
    assert ok(call(api, "GET", f"{path}/{big['locator']}", token))["disbursementState"] == "draft"
    small = ok(call(api, "POST", path, token, {**body, "amount": Decimal("10.00")}))
    ok(call(api, "PATCH", f"{path}/{small['locator']}/validate", token))
    rival = ok(call(api, "POST", path, token, {**body, "amount": Decimal("6.00")}))
    for step in ("validate", "approve", "execute"):
        ok(call(api, "PATCH", f"{path}/{rival['locator']}/{step}", token))
    assert balance(api, token, tenant, account) == Decimal("9.00")
    refused = call(api, "PATCH", f"{path}/{small['locator']}/approve", token)
    assert assert_error(refused, 409, "credit.insufficient_balance")["message"] == (
        f"The disbursement of 10.00 USD exceeds the credit balance of account {account}: 9.00 USD available"
    )
    assert event_types(api, token, tenant, refused) == []
    assert ok(call(api, "GET", f"{path}/{small['locator']}", token))["disbursementState"] == "validated"
    ok(call(api, "PATCH", f"{path}/{rival['locator']}/reverse", token))
    ok(call(api, "PATCH", f"{path}/{small['locator']}/approve", token))
    assert ok(call(api, "PATCH", f"{path}/{small['locator']}/reject", token))["disbursementState"] == "rejected"
    assert balance(api, token, tenant, account) == Decimal("15.00")
    ok(call(api, "PATCH", f"{path}/{big['locator']}/discard", token))
    assert_error(call(api, "PATCH", f"{path}/{big['locator']}/reject", token), 409, "disbursement.invalid_state")

    reversed_ = call(api, "PATCH", f"{path}/{refund['locator']}/reverse", token)
    assert ok(reversed_)["disbursementState"] == "reversed"
    assert event_types(api, token, tenant, reversed_) == ["billing.disbursement.reverse"]
    assert balance(api, token, tenant, account) == Decimal("75.00")
    assert_error(call(api, "PATCH", f"{path}/{refund['locator']}/reverse", token), 409, "disbursement.invalid_state")

    spare = ok(call(api, "POST", path, token, body))
    assert ok(call(api, "PATCH", f"{path}/{spare['locator']}/discard", token))["disbursementState"] == "discarded"
    assert_error(call(api, "POST", path, token, {**body, "type": "Barter"}), 400, "disbursement.unknown_type")
    assert_error(call(api, "POST", path, token, {**body, "amount": -1}), 400, "credit.invalid_amount")
    listed = ok(call(api, "GET", f"{path}/list?accountLocator={account}", token))["items"]
    assert [(d["locator"], d["disbursementState"]) for d in listed] == [
        (refund["locator"], "reversed"),
        (big["locator"], "discarded"),
        (small["locator"], "rejected"),
        (rival["locator"], "reversed"),
        (spare["locator"], "discarded"),
    ]
    ledger = ok(call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), token))[
        "lineItems"
    ]
    assert [(line["accountingType"], line["amount"]) for line in ledger] == [
        ("credit", Decimal("75.00")),
        ("debit", Decimal("60.00")),
        ("debit", Decimal("6.00")),
        ("credit", Decimal("6.00")),
        ("credit", Decimal("60.00")),
    ]


def test_an_invoices_credits_list_its_payments_credit_distributions_and_write_offs(api, admin_token, jobs, full_pay):
    tenant, token = full_pay, admin_token
    account, second = in_credit(api, token, tenant, jobs)
    payment = posted_payment(api, token, tenant, account, Decimal("1149.12"), invoice=second)
    distribution = executed_distribution(api, token, tenant, account, 75, invoice=second)
    assert remaining(api, token, tenant, second) == ("open", Decimal("0.88"))
    written = ok(call(api, "PATCH", billing(tenant, f"/invoices/{second}/writeOff"), token))
    assert remaining(api, token, tenant, second) == ("settled", 0)

    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{second}/credits/list"), token))
    assert [(c["creditType"], c["locator"], c["creditState"], c["amount"]) for c in credits["items"]] == [
        ("payment", payment["locator"], "posted", Decimal("1149.12")),
        ("creditDistribution", distribution["locator"], "posted", Decimal("75.00")),
        ("writeOff", written["locator"], "distributed", Decimal("0.88")),
    ]
    assert credits["listCompleted"] is True
    assert {(c["accountLocator"], c["currency"], c["createdAt"]) for c in credits["items"]} == {
        (account, "USD", "2026-01-15T09:30:00.000Z")
    }

    ok(
        call(
            api,
            "PATCH",
            billing(tenant, f"/writeOffs/{written['locator']}/reverse"),
            token,
            {"amount": Decimal("0.50")},
        )
    )
    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{second}/credits/list"), token))["items"]
    assert (credits[-1]["creditType"], credits[-1]["creditState"], credits[-1]["amount"]) == (
        "writeOff",
        "distributed",
        Decimal("0.38"),
    )
    ok(call(api, "PATCH", billing(tenant, f"/writeOffs/{written['locator']}/reverse"), token))
    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{second}/credits/list"), token))["items"]
    assert [c["creditType"] for c in credits] == ["payment", "creditDistribution"]
    every = ok(call(api, "GET", billing(tenant, f"/invoices/{second}/credits/list?includeReversed=true"), token))[
        "items"
    ]
    assert [(c["creditType"], c["creditState"], c["amount"], c["reversedAt"]) for c in every[2:]] == [
        ("writeOff", "reversed", Decimal("0.88"), "2026-01-15T09:30:00.000Z")
    ]
    paged = ok(
        call(api, "GET", billing(tenant, f"/invoices/{second}/credits/list?includeReversed=true&offset=2"), token)
    )
    assert [c["locator"] for c in paged["items"]] == [written["locator"]] and paged["listCompleted"] is True


def overpaid(api, token, tenant, jobs, amount):
    """An account with two open invoices of 1,225.00; the first paid with `amount` (the rest into credit):
    (account, first, second, payment)."""
    account, _ = billed_policy(api, token, tenant, jobs)
    issued_policy(api, token, tenant, account)
    jobs.drain()
    first, second = (i["locator"] for i in invoices_of_account(api, token, tenant, account))
    payment = posted_payment(api, token, tenant, account, amount, invoice=first)
    return account, first, second, payment["locator"]


def test_reversing_a_payment_whose_credit_was_distributed_reverses_the_distribution(api, admin_token, jobs, full_pay):
    tenant, token = full_pay, admin_token
    account, first, second, payment = overpaid(api, token, tenant, jobs, Decimal("1325.00"))
    path = billing(tenant, "/creditDistributions")
    distribution = executed_distribution(api, token, tenant, account, 100, invoice=second)
    assert remaining(api, token, tenant, second) == ("open", Decimal("1125.00"))
    assert balance(api, token, tenant, account) == 0

    reversed_ = call(api, "PATCH", billing(tenant, f"/payments/{payment}/reverse"), token, {"reversalType": "bounced"})
    assert ok(reversed_)["paymentState"] == "reversed"
    assert event_types(api, token, tenant, reversed_) == [
        "billing.creditdistribution.reverse",
        "billing.invoice.unsettle",
        "billing.payment.reverse",
    ]
    assert remaining(api, token, tenant, first) == ("open", Decimal("1225.00"))
    assert remaining(api, token, tenant, second) == ("open", Decimal("1225.00"))
    assert balance(api, token, tenant, account) == 0
    found = ok(call(api, "GET", f"{path}/{distribution['locator']}", token))
    assert (found["creditDistributionState"], found["reversalReason"]) == ("reversed", f"payment {payment} reversed")
    assert ok(call(api, "GET", billing(tenant, f"/invoices/{second}/credits/list"), token))["items"] == []
    ledger = ok(call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), token))[
        "lineItems"
    ]
    assert [(line["accountingType"], line["amount"]) for line in ledger] == [
        ("credit", Decimal("100.00")),
        ("debit", Decimal("100.00")),
        ("credit", Decimal("100.00")),
        ("debit", Decimal("100.00")),
    ]
    assert [i["locator"] for i in invoices_of_account(api, token, tenant, account)] == [first, second]


def test_reversing_a_payment_whose_credit_was_disbursed_invoices_what_the_account_owes(
    api, admin_token, jobs, full_pay
):
    """Credit 100.00: 30.00 distributed, 50.00 disbursed, 20.00 left. The reversal takes back the
    distribution (50.00 in credit then) and the 50.00 paid out is owed: invoiced at once."""
    tenant, token = full_pay, admin_token
    account, first, second, payment = overpaid(api, token, tenant, jobs, Decimal("1325.00"))
    executed_distribution(api, token, tenant, account, 30, invoice=second)
    refund = ok(
        call(
            api,
            "POST",
            billing(tenant, "/disbursements"),
            token,
            {"accountLocator": account, "type": "Refund", "amount": 50, "data": {}, "sources": []},
        )
    )
    for step in ("validate", "approve", "execute"):
        ok(call(api, "PATCH", billing(tenant, f"/disbursements/{refund['locator']}/{step}"), token))
    assert balance(api, token, tenant, account) == Decimal("20.00")

    reversed_ = call(api, "PATCH", billing(tenant, f"/payments/{payment}/reverse"), token)
    assert event_types(api, token, tenant, reversed_) == [
        "billing.creditdistribution.reverse",
        "billing.invoice.generate",
        "billing.invoice.unsettle",
        "billing.payment.reverse",
    ]
    assert balance(api, token, tenant, account) == 0
    assert remaining(api, token, tenant, second) == ("open", Decimal("1225.00"))
    listed = invoices_of_account(api, token, tenant, account)
    assert [i["locator"] for i in listed[:2]] == [first, second]
    [owed] = listed[2:]
    assert (owed["invoiceState"], owed["totalAmount"], owed["totalRemainingAmount"]) == (
        "open",
        Decimal("50.00"),
        Decimal("50.00"),
    )
    assert owed["dueTime"] == owed["generatedTime"] == "2026-01-15T09:30:00.000Z"
    [item] = ok(call(api, "GET", billing(tenant, f"/invoices/{owed['locator']}"), token))["invoiceItems"]
    assert (item["chargeType"], item["amount"]) == ("owed", Decimal("50.00"))
    assert (
        ok(call(api, "GET", billing(tenant, f"/disbursements/{refund['locator']}"), token))["disbursementState"]
        == "executed"
    )
    ledger = ok(call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), token))[
        "lineItems"
    ]
    assert [(line["accountingType"], line["amount"]) for line in ledger][-2:] == [
        ("credit", Decimal("30.00")),
        ("debit", Decimal("50.00")),
    ]

    payment = posted_payment(api, token, tenant, account, 50, invoice=owed["locator"])
    assert remaining(api, token, tenant, owed["locator"]) == ("settled", 0)
    assert balance(api, token, tenant, account) == 0
