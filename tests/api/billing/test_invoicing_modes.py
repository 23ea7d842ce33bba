"""When charges are invoiced (`immediate`, `next`, `scheduled`), how an invoicing plan's
`installmentGrouping` groups installments into invoices, and `consolidateInvoicesOnCancellation`, through
the API. The policy of support.py: premium 100.00 a month (1,200.00) and a tax of 25.00 for a year from
2026-02-01 (midnight in New York); the clock at 2026-01-15T09:30Z; plans generate 10 (Monthly) or 30
(FullPay) days ahead, due at the installment's start."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tests.api.billing.support import amounts, billed_policy, billing, billing_model, invoices_of_account
from tests.api.transactions.support import (
    create,
    issued_transaction,
    modify,
    params,
    segment_of_policy,
    step,
    vehicle_of,
)
from tests.jobs.support import DUE_DAYS
from tests.support.api import call, ok
from tests.support.clock import advance
from tests.support.configs import quotes_tenant

NOW = "2026-01-15T09:30:00.000Z"


def tenant_with(api, token, *, plan="Monthly", tax_invoicing=None, invoicing_plan=None, test_clock=False):
    model = billing_model(plan)
    if tax_invoicing:
        model["charges"]["tax"]["invoicing"] = tax_invoicing
    if invoicing_plan:
        model["invoicingPlans"] = {
            "Plan": {
                "invoiceFeeHandling": "waive",
                "invoiceFeeAmounts": {},
                "consolidateInvoicesOnCancellation": "none",
                **invoicing_plan,
            }
        }
        model["defaultInvoicingPlan"] = "Plan"
    return quotes_tenant(api, token, model, test_clock=test_clock)


def installments(api, token, tenant, kind, locator) -> list[dict[str, Any]]:
    return ok(call(api, "GET", billing(tenant, f"/installments/{kind}/{locator}/list?count=100"), token))["items"]


def total(installment: dict[str, Any]) -> Decimal:
    return sum((Decimal(str(item["amount"])) for item in installment["installmentItems"]), Decimal(0))


def items_of(api, token, tenant, invoice) -> list[tuple[str, Decimal]]:
    found = ok(call(api, "GET", billing(tenant, f"/invoices/{invoice['locator']}"), token))["invoiceItems"]
    return sorted((item["chargeType"], item["amount"]) for item in found)


def test_an_immediate_charge_is_invoiced_at_issue_on_an_invoice_of_its_own(api, admin_token, jobs):
    tenant = tenant_with(api, admin_token, tax_invoicing="immediate")
    account, policy = billed_policy(api, admin_token, tenant, jobs)

    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    assert (invoice["generatedTime"], invoice["dueTime"], invoice["totalAmount"]) == (
        NOW,
        DUE_DAYS[0],
        Decimal("25.00"),
    )
    assert items_of(api, admin_token, tenant, invoice) == [("tax", Decimal("25.00"))]
    listed = installments(api, admin_token, tenant, "policies", policy["locator"])
    assert len(listed) == 13  # twelve monthly premiums, and the tax on its own
    assert sum(total(i) for i in listed if i.get("invoiceLocator") is None) == Decimal("1200.00")
    [taxed] = [i for i in listed if i.get("invoiceLocator") == invoice["locator"]]
    assert taxed["generateTime"] == NOW and taxed["installmentStartTime"] == DUE_DAYS[0]


def test_an_immediate_charge_due_with_others_still_gets_its_own_invoice(api, admin_token, jobs):
    tenant = tenant_with(api, admin_token, plan="FullPay", tax_invoicing="immediate")
    account, _ = billed_policy(api, admin_token, tenant, jobs)  # FullPay generates 30 days ahead: at issue

    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert [(i["dueTime"], i["totalAmount"]) for i in invoices] == [
        (DUE_DAYS[0], Decimal("1200.00")),
        (DUE_DAYS[0], Decimal("25.00")),
    ] or [(i["dueTime"], i["totalAmount"]) for i in invoices] == [
        (DUE_DAYS[0], Decimal("25.00")),
        (DUE_DAYS[0], Decimal("1200.00")),
    ]
    assert sorted(items_of(api, admin_token, tenant, i)[0][0] for i in invoices) == ["premium", "tax"]


def test_a_next_charge_of_a_change_rides_on_the_accounts_next_invoice(api, admin_token, jobs):
    tenant = tenant_with(api, admin_token, tax_invoicing="next", test_clock=True)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-03-10T00:00:00Z")  # February and March invoiced
    first, second = invoices_of_account(api, admin_token, tenant, account)
    assert items_of(api, admin_token, tenant, first)[-1] == ("tax", Decimal("25.00"))  # rode on February's
    assert [t for t, _ in items_of(api, admin_token, tenant, second)] == ["premium"]

    vehicle = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
    change = ok(
        create(
            api, admin_token, tenant, policy["locator"], "change", [params(DUE_DAYS[4]), modify(vehicle, value="25000")]
        )
    )
    ok(step(api, admin_token, tenant, change["locator"], "issue"))
    jobs.drain()
    changed = installments(api, admin_token, tenant, "transactions", change["locator"])
    [rider] = [i for i in changed if {item["chargeType"] for item in i["installmentItems"]} == {"tax"}]
    # the new segment's tax (25) and what the change takes back of the first one's (25 - 4/12 of it)
    assert total(rider) == Decimal("25.00") - Decimal("16.67")
    assert rider["installmentStartTime"] == DUE_DAYS[4] and rider["generateTime"] == "2026-05-22T04:00:00.000Z"

    advance(api, admin_token, tenant, jobs, "2026-03-23T00:00:00Z")  # April's invoice, generated 2026-03-22
    april = invoices_of_account(api, admin_token, tenant, account)[2]
    [april_premium] = [
        i
        for i in installments(api, admin_token, tenant, "policies", policy["locator"])
        if i.get("invoiceLocator") == april["locator"] and i["locator"] != rider["locator"]
    ]
    assert april["dueTime"] == DUE_DAYS[2]
    assert april["totalAmount"] == total(april_premium) + Decimal("8.33")
    fetched = ok(call(api, "GET", billing(tenant, f"/installments/{rider['locator']}"), admin_token))
    assert fetched["invoiceLocator"] == april["locator"] and fetched["dueTime"] == DUE_DAYS[2]

    advance(api, admin_token, tenant, jobs, "2026-06-15T00:00:00Z")
    june = invoices_of_account(api, admin_token, tenant, account)[4]
    assert june["dueTime"] == DUE_DAYS[4]
    assert {t for t, _ in items_of(api, admin_token, tenant, june)} == {"premium"}  # its tax went in April


@pytest.mark.parametrize(
    "grouping, due_times",
    [
        ({"matching": "generateTime", "window": "startAndEnd"}, DUE_DAYS[:3]),
        ({"matching": "startTime", "window": "startAndEnd"}, DUE_DAYS[:3]),
        ({"matching": "generateTime", "window": "start"}, DUE_DAYS[:1]),
        ({"matching": "all", "window": "startAndEnd"}, DUE_DAYS[:1]),
    ],
)
def test_installment_grouping_decides_how_many_invoices_one_run_makes(api, admin_token, jobs, grouping, due_times):
    tenant = tenant_with(api, admin_token, invoicing_plan={"installmentGrouping": grouping})
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    ok(
        call(
            api,
            "POST",
            billing(tenant, "/invoices/earlyInvoicing"),
            admin_token,
            {
                "ignoreHolds": False,
                "installmentLocators": [],
                "accountLocator": account,
                "invoiceThroughTime": "2026-04-02T00:00:00Z",
            },
        )
    )
    jobs.drain()

    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert [i["dueTime"] for i in invoices] == due_times
    first_three = installments(api, admin_token, tenant, "policies", policy["locator"])[:3]
    assert sum(amounts(invoices)) == sum(total(i) for i in first_three)
    assert {i.get("invoiceLocator") for i in first_three} == {i["locator"] for i in invoices}


@pytest.mark.parametrize(
    "window, due_times",
    [
        ("startAndEnd", ["2025-11-01T04:00:00.000Z", "2025-12-01T05:00:00.000Z", "2026-01-01T05:00:00.000Z"]),
        ("catchUp", ["2025-11-01T04:00:00.000Z"]),
    ],
)
def test_a_catch_up_window_puts_the_backdated_installments_on_one_invoice(api, admin_token, jobs, window, due_times):
    tenant = tenant_with(
        api, admin_token, invoicing_plan={"installmentGrouping": {"matching": "generateTime", "window": window}}
    )
    account, policy = billed_policy(api, admin_token, tenant, jobs, startTime="2025-11-01T04:00:00Z")

    invoices = invoices_of_account(api, admin_token, tenant, account)  # November to January, past due
    assert [i["dueTime"] for i in invoices] == due_times
    assert {i["generatedTime"] for i in invoices} == {NOW}
    past = installments(api, admin_token, tenant, "policies", policy["locator"])[:3]
    assert sum(amounts(invoices)) == sum(total(i) for i in past)


@pytest.mark.parametrize("mode, invoice_count", [("none", 12), ("future", 5), ("all", 4)])
def test_a_cancellation_consolidates_what_is_left_to_invoice_as_the_plan_says(
    api, admin_token, jobs, mode, invoice_count
):
    tenant = tenant_with(api, admin_token, test_clock=True, invoicing_plan={"consolidateInvoicesOnCancellation": mode})
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-03-25T00:00:00Z")  # February to April invoiced
    cancellation = issued_transaction(api, admin_token, tenant, policy["locator"], "cancel", params(DUE_DAYS[4]))
    uninvoiced = [
        i
        for i in installments(api, admin_token, tenant, "policies", policy["locator"])
        if i.get("invoiceLocator") is None
    ]
    jobs.drain()

    invoices = invoices_of_account(api, admin_token, tenant, account, zero=True)
    if mode == "none":
        assert len(invoices) == 3
    else:
        consolidated = invoices[3]
        chosen = [i for i in uninvoiced if mode == "all" or i["installmentEndTime"] > DUE_DAYS[4]]
        assert len(chosen) == (9 if mode == "all" else 8)  # May (with all) to January
        refunds = installments(api, admin_token, tenant, "transactions", cancellation["locator"])
        assert len(refunds) == 8
        assert consolidated["generatedTime"] == "2026-03-25T00:00:00.000Z"
        assert consolidated["dueTime"] == (DUE_DAYS[3] if mode == "all" else DUE_DAYS[4])
        assert consolidated["totalAmount"] == sum(total(i) for i in chosen + refunds)
        on_it = [
            i["locator"]
            for i in installments(api, admin_token, tenant, "policies", policy["locator"])
            if i.get("invoiceLocator") == consolidated["locator"]
        ]
        assert sorted(on_it) == sorted(i["locator"] for i in chosen + refunds)

    advance(api, admin_token, tenant, jobs, "2027-03-01T00:00:00Z")
    invoices = invoices_of_account(api, admin_token, tenant, account, zero=True)
    assert len(invoices) == invoice_count
    # four months of premium, the tax less what the cancellation takes back of it (8/12 of 25)
    assert sum(amounts(invoices)) == Decimal("400.00") + Decimal("25.00") - Decimal("16.67")
