"""Billing over time on test-clock tenants (Kill Bill style: every invoice, amount and state at each step).

The tenants have the billing test configuration (tests/api/billing/support.py: plans Monthly, Quarterly
with weights [3, 2] and FullPay, each generating 10 or 30 days ahead, due at the installment's start);
the policy runs a year from 2026-02-01 (midnight in New York): premium 100.00 a month (1,200.00), tax 25.00.
The tenant's clock starts at the real time of the tests, 2026-01-15T09:30Z; advancing it runs every
invoice generation at its own time, through the due pager.
"""

from __future__ import annotations

from decimal import Decimal

from tests.api.billing.support import (
    amounts,
    billed_policy,
    billing,
    billing_tenant,
    invoices_of_account,
    posted_payment,
)
from tests.api.transactions.support import (
    issued_change,
    issued_transaction,
    modify,
    params,
    policy_path,
    segment_of_policy,
    vehicle_of,
)
from tests.jobs.support import DUE_DAYS
from tests.support.api import call, ok
from tests.support.clock import advance


def test_a_monthly_plan_invoices_each_month_ten_days_ahead_for_a_year(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token, test_clock=True)
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    assert invoices_of_account(api, admin_token, tenant, account) == []

    advance(api, admin_token, tenant, jobs, "2026-03-20T00:00:00Z")
    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert [i["dueTime"] for i in invoices] == DUE_DAYS[:2]
    assert [i["generatedTime"] for i in invoices] == ["2026-01-22T05:00:00.000Z", "2026-02-19T05:00:00.000Z"]
    assert [i["invoiceNumber"] for i in invoices] == ["INV-000001", "INV-000002"]

    advance(api, admin_token, tenant, jobs, "2027-03-01T00:00:00Z")
    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert [i["dueTime"] for i in invoices] == DUE_DAYS
    assert [i["invoiceState"] for i in invoices] == ["open"] * 12
    assert sum(amounts(invoices)) == Decimal("1225.00")
    assert [i["invoiceNumber"] for i in invoices] == [f"INV-{n:06d}" for n in range(1, 13)]
    runs = ok(call(api, "GET", billing(tenant, f"/jobs/invoices/accounts/{account}/list?count=100"), admin_token))[
        "items"
    ]
    assert len(runs) == 12  # one generation a month, none twice


def test_a_quarterly_plan_with_weights_bills_the_first_quarters_more(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token, "Quarterly", test_clock=True)
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2027-03-01T00:00:00Z")
    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert [i["dueTime"] for i in invoices] == DUE_DAYS[0::3]
    # weights 3, 2, 1, 1 times each quarter's three months: 3/7, 2/7, 1/7 and 1/7 of 1,225.00 (of the
    # premium 514.29, 342.86, 171.43 and the remainder 171.42; of the tax 10.71, 7.14, 3.57 and 3.58), though
    # the first quarter has 89 days and the next two 92
    assert amounts(invoices) == [Decimal("525.00"), Decimal("350.00"), Decimal("175.00"), Decimal("175.00")]


def test_a_mid_term_increase_raises_the_coming_invoices_and_a_decrease_lowers_them(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token, test_clock=True)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-07-25T00:00:00Z")  # February to August invoiced
    before = amounts(invoices_of_account(api, admin_token, tenant, account))
    assert len(before) == 7

    vehicle = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
    issued_change(
        api, admin_token, tenant, policy["locator"], "2026-09-01T04:00:00.000Z", modify(vehicle, value="25000")
    )
    jobs.drain()
    advance(api, admin_token, tenant, jobs, "2027-03-01T00:00:00Z")

    invoices = invoices_of_account(api, admin_token, tenant, account)
    assert [i["dueTime"] for i in invoices] == DUE_DAYS
    totals = amounts(invoices)
    assert totals[:7] == before == [Decimal("102.08")] * 7  # 100.00 and a twelfth of the tax, 2.08
    # September on: premium 150 a month instead of 100 (a band of 1.5), the new segment's tax of 25 a fifth a
    # month (5.00) and 5/12 of the old one's (10.42) reversed a fifth a month (2.08, the last 2.10)
    assert totals[7:] == [Decimal("155.00")] * 4 + [Decimal("155.02")]
    # seven months at 100, five at 150; the tax of 25 on the first segment with 5/12 of it (10.42) reversed,
    # and 25 on the new segment
    assert sum(totals) == Decimal("700.00") + Decimal("750.00") + Decimal("25.00") - Decimal("10.42") + Decimal("25.00")

    issued_change(
        api, admin_token, tenant, policy["locator"], "2026-11-01T04:00:00.000Z", modify(vehicle, value="12000")
    )
    jobs.drain()
    # November to January are invoiced already: their refunds are negative invoices (one per due time),
    # settled into credit at once: 3 x 50 of premium, and the second segment's tax (25, 3/5 reversed: 15)
    # against the third's (25)
    refunds = invoices_of_account(api, admin_token, tenant, account)[12:]
    assert [r["dueTime"] for r in refunds] == DUE_DAYS[9:]
    assert {r["invoiceState"] for r in refunds} == {"settled"} and sum(amounts(refunds)) == Decimal("-140.00")
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )
    assert balance["balance"] == Decimal("140.00")


def test_paying_each_invoice_and_a_cancellation_refund_into_credit(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token, test_clock=True)
    account, policy = billed_policy(api, admin_token, tenant, jobs)
    advance(api, admin_token, tenant, jobs, "2026-05-25T00:00:00Z")  # February to May invoiced
    for invoice in invoices_of_account(api, admin_token, tenant, account):
        posted_payment(
            api, admin_token, tenant, account, invoice["totalAmount"], invoice=invoice["locator"], payment_type="Card"
        )
    assert {i["invoiceState"] for i in invoices_of_account(api, admin_token, tenant, account)} == {"settled"}

    issued_transaction(api, admin_token, tenant, policy["locator"], "cancel", params(DUE_DAYS[4]))
    jobs.drain()
    advance(api, admin_token, tenant, jobs, "2027-03-01T00:00:00Z")

    invoices = invoices_of_account(api, admin_token, tenant, account, zero=True)
    # the cancellation's reversals fall on the frames from June on, netting them to zero: June's invoice,
    # generated before the cancellation, is refunded by a negative invoice; the later months are zero
    paid = sum(amounts([i for i in invoices if i["invoiceState"] == "settled" and i["totalAmount"] > 0]))
    assert sum(amounts(invoices)) == Decimal("400.00") + Decimal("25.00") - Decimal("16.67")
    balance = ok(
        call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), admin_token)
    )
    open_amount = sum(Decimal(str(i["totalRemainingAmount"])) for i in invoices)
    assert paid - balance["balance"] + open_amount == sum(amounts(invoices))  # the ledger balances


def test_a_policy_status_follows_its_clock_past_the_cancellation_and_the_term_end(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token, test_clock=True)
    _, policy = billed_policy(api, admin_token, tenant, jobs)
    _, other = billed_policy(api, admin_token, tenant, jobs)
    issued_transaction(api, admin_token, tenant, policy["locator"], "cancel", params(DUE_DAYS[6]))
    jobs.drain()

    def statuses(locator):
        return ok(call(api, "GET", policy_path(tenant, locator), admin_token))["statuses"]

    advance(api, admin_token, tenant, jobs, "2026-03-01T00:00:00Z")
    assert "cancelPending" in statuses(policy["locator"]) and "onRisk" in statuses(other["locator"])
    advance(api, admin_token, tenant, jobs, "2026-08-02T00:00:00Z")
    assert "cancelled" in statuses(policy["locator"])
    advance(api, admin_token, tenant, jobs, "2027-02-02T00:00:00Z")
    assert "expired" in statuses(other["locator"])
