"""Write-offs through the API (spec part 3 "Write-offs"): targets settled in order, for their amount or
all that remains; reversal, whole or partial (our extension), re-opens exactly what was settled, the
last settled first. Full-pay policies of tests/api/billing/support.py: one invoice of 1,225.00 each
(premium 1,200.00, tax 25.00), due 2026-02-01; the clock at 2026-01-15T09:30Z."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.billing.support import billed_policy, billing, billing_tenant, invoices_of_account, posted_payment
from tests.api.transactions.support import issued_policy
from tests.support.api import assert_error, call, event_types, ok

NOW = "2026-01-15T09:30:00.000Z"


@pytest.fixture
def full_pay(api, admin_token):
    return billing_tenant(api, admin_token, "FullPay")


def two_invoices(api, token, tenant, jobs):
    """An account with two policies, each on its own open invoice of 1,225.00 (the older first)."""
    account, _ = billed_policy(api, token, tenant, jobs)
    issued_policy(api, token, tenant, account)
    jobs.drain()
    first, second = invoices_of_account(api, token, tenant, account)
    return account, first["locator"], second["locator"]


def invoice(api, token, tenant, locator):
    return ok(call(api, "GET", billing(tenant, f"/invoices/{locator}"), token))


def remaining(api, token, tenant, *locators):
    found = [invoice(api, token, tenant, locator) for locator in locators]
    return [(i["invoiceState"], i["totalRemainingAmount"]) for i in found]


def credit_balance(api, token, tenant, account):
    return ok(call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), token))[
        "balance"
    ]


def test_a_write_off_settles_its_targets_in_order_and_reversals_reopen_exactly_that(api, admin_token, jobs, full_pay):
    tenant, token = full_pay, admin_token
    account, first, second = two_invoices(api, token, tenant, jobs)
    tax = next(i["locator"] for i in invoice(api, token, tenant, first)["invoiceItems"] if i["chargeType"] == "tax")

    created = call(
        api,
        "POST",
        billing(tenant, "/writeOffs"),
        token,
        {
            "accountLocator": account,
            "targets": [
                {"containerType": "invoiceItem", "containerLocator": tax},
                {"containerType": "invoice", "containerLocator": first, "amount": Decimal("100.00")},
            ],
        },
    )
    small = ok(created)
    assert (small["writeOffState"], small["amount"], small["creditType"], small["currency"]) == (
        "distributed",
        Decimal("125.00"),
        "writeOff",
        "USD",
    )
    assert [(t["containerType"], t["amount"]) for t in small["targets"]] == [
        ("invoiceItem", Decimal("25.00")),
        ("invoice", Decimal("100.00")),
    ]
    assert small["createdAt"] == NOW and small["reversedAmount"] == 0
    assert event_types(api, token, tenant, created) == ["billing.writeoff.create", "billing.writeoff.distribute"]
    items = {i["chargeType"]: i["remainingAmount"] for i in invoice(api, token, tenant, first)["invoiceItems"]}
    assert items == {"premium": Decimal("1100.00"), "tax": Decimal("0.00")}

    created = call(
        api,
        "POST",
        billing(tenant, "/writeOffs"),
        token,
        {
            "accountLocator": account,
            "targets": [{"containerType": "account", "containerLocator": account, "amount": 1500}],
        },
    )
    large = ok(created)
    assert large["amount"] == Decimal("1500.00")
    assert event_types(api, token, tenant, created) == [
        "billing.writeoff.create",
        "billing.writeoff.distribute",
        "billing.invoice.settle",
    ]
    assert remaining(api, token, tenant, first, second) == [("settled", 0), ("open", Decimal("825.00"))]

    partly = call(
        api,
        "PATCH",
        billing(tenant, f"/writeOffs/{large['locator']}/reverse"),
        token,
        {"amount": Decimal("500.00"), "reversalReason": "customer paid part"},
    )
    assert (ok(partly)["writeOffState"], ok(partly)["reversedAmount"]) == ("distributed", Decimal("500.00"))
    assert ok(partly)["reversalReason"] == "customer paid part" and ok(partly)["reversedAt"] == NOW
    assert event_types(api, token, tenant, partly) == ["billing.invoice.unsettle", "billing.writeoff.reverse"]
    # the second invoice (settled last) gets its 400.00 back first, then the first invoice 100.00 of its 1,100.00
    assert remaining(api, token, tenant, first, second) == [("open", Decimal("100.00")), ("open", Decimal("1225.00"))]
    assert invoice(api, token, tenant, first)["unsettledTime"] == NOW

    whole = ok(call(api, "PATCH", billing(tenant, f"/writeOffs/{large['locator']}/reverse"), token))
    assert (whole["writeOffState"], whole["reversedAmount"]) == ("reversed", Decimal("1500.00"))
    assert remaining(api, token, tenant, first, second) == [("open", Decimal("1100.00")), ("open", Decimal("1225.00"))]
    assert_error(
        call(api, "PATCH", billing(tenant, f"/writeOffs/{large['locator']}/reverse"), token),
        409,
        "writeOff.invalid_state",
    )
    assert remaining(api, token, tenant, first, second) == [("open", Decimal("1100.00")), ("open", Decimal("1225.00"))]

    listed = ok(call(api, "GET", billing(tenant, f"/writeOffs/list?accountLocator={account}"), token))
    assert [(w["locator"], w["writeOffState"]) for w in listed["items"]] == [
        (small["locator"], "distributed"),
        (large["locator"], "reversed"),
    ]
    assert listed["listCompleted"] is True
    assert ok(call(api, "GET", billing(tenant, f"/writeOffs/{small['locator']}"), token)) == small
    assert [w["locator"] for w in ok(call(api, "GET", billing(tenant, "/writeOffs/list"), token))["items"]] == [
        small["locator"],
        large["locator"],
    ]
    assert credit_balance(api, token, tenant, account) == 0  # written off, never credited


def test_an_invoice_write_off_takes_all_that_remains_once(api, admin_token, jobs, full_pay):
    tenant, token = full_pay, admin_token
    account, _ = billed_policy(api, token, tenant, jobs)
    [open_invoice] = invoices_of_account(api, token, tenant, account)
    posted_payment(api, token, tenant, account, 225, targets=[])

    written = call(api, "PATCH", billing(tenant, f"/invoices/{open_invoice['locator']}/writeOff"), token)
    assert (ok(written)["amount"], ok(written)["writeOffState"]) == (Decimal("1000.00"), "distributed")
    assert [(t["containerType"], t["containerLocator"], t["amount"]) for t in ok(written)["targets"]] == [
        ("invoice", open_invoice["locator"], Decimal("1000.00"))
    ]
    assert event_types(api, token, tenant, written) == [
        "billing.writeoff.create",
        "billing.writeoff.distribute",
        "billing.invoice.settle",
    ]
    assert remaining(api, token, tenant, open_invoice["locator"]) == [("settled", 0)]
    assert_error(
        call(api, "PATCH", billing(tenant, f"/invoices/{open_invoice['locator']}/writeOff"), token),
        409,
        "invoice.settled",
    )

    ok(call(api, "PATCH", billing(tenant, f"/writeOffs/{ok(written)['locator']}/reverse"), token))
    assert remaining(api, token, tenant, open_invoice["locator"]) == [("open", Decimal("1000.00"))]


def test_bad_write_offs_and_reversals_are_refused_and_move_nothing(api, admin_token, jobs, full_pay):
    tenant, token = full_pay, admin_token
    account, first, second = two_invoices(api, token, tenant, jobs)
    other_account, _ = billed_policy(api, token, tenant, jobs)
    [foreign] = invoices_of_account(api, token, tenant, other_account)

    def refused(targets, status, code, who=account):
        assert_error(
            call(api, "POST", billing(tenant, "/writeOffs"), token, {"accountLocator": who, "targets": targets}),
            status,
            code,
        )

    invoice_target = {"containerType": "invoice", "containerLocator": first}
    refused([{**invoice_target, "amount": Decimal("1225.01")}], 400, "writeOff.exceeds_remaining")
    refused([invoice_target, {**invoice_target, "amount": 1}], 400, "writeOff.exceeds_remaining")  # none left
    refused(
        [{"containerType": "account", "containerLocator": account, "amount": Decimal("2450.01")}],
        400,
        "writeOff.exceeds_remaining",
    )
    refused([{**invoice_target, "amount": Decimal("12.345")}], 400, "writeOff.invalid_target")
    refused([{**invoice_target, "amount": 0}], 400, "writeOff.invalid_target")
    refused([{"containerType": "invoice", "containerLocator": foreign["locator"]}], 400, "writeOff.invalid_target")
    refused([{"containerType": "account", "containerLocator": other_account}], 400, "writeOff.invalid_target")
    refused([{"containerType": "subpayment", "containerLocator": first}], 400, "writeOff.invalid_target")
    refused([], 400, "request.invalid")
    refused([invoice_target], 404, "account.not_found", who="01JUNKNOWNACCOUNT0000000000")
    assert remaining(api, token, tenant, first, second, foreign["locator"]) == [("open", Decimal("1225.00"))] * 3
    assert ok(call(api, "GET", billing(tenant, f"/writeOffs/list?accountLocator={account}"), token))["items"] == []

    written = ok(
        call(
            api,
            "POST",
            billing(tenant, "/writeOffs"),
            token,
            {"accountLocator": account, "targets": [{**invoice_target, "amount": 300}]},
        )
    )
    for amount in (Decimal("300.01"), 0, -1, Decimal("0.001")):
        assert_error(
            call(api, "PATCH", billing(tenant, f"/writeOffs/{written['locator']}/reverse"), token, {"amount": amount}),
            400,
            "writeOff.invalid_reversal",
        )
    assert remaining(api, token, tenant, first) == [("open", Decimal("925.00"))]
    assert ok(call(api, "GET", billing(tenant, f"/writeOffs/{written['locator']}"), token))["reversedAmount"] == 0

    elsewhere = billing_tenant(api, token, "FullPay")  # another tenant sees none of it
    assert_error(
        call(api, "GET", billing(elsewhere, f"/writeOffs/{written['locator']}"), token), 404, "writeOff.not_found"
    )
    assert_error(
        call(api, "PATCH", billing(elsewhere, f"/writeOffs/{written['locator']}/reverse"), token),
        404,
        "writeOff.not_found",
    )
    assert ok(call(api, "GET", billing(elsewhere, "/writeOffs/list"), token))["items"] == []
    assert_error(
        call(api, "GET", billing(tenant, "/writeOffs/list?accountLocator=01JUNKNOWNACCOUNT0000000000"), token),
        404,
        "account.not_found",
    )
