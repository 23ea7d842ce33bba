"""Payments, their reversals and write-offs over more invoices than one TransactWriteItems holds (issue 26
point 7): three monthly policies billed on their own, invoiced early through the term, are 36 open invoices
of 3,675.00 in all; a posting of them all writes four records an invoice, so it is staged
(billing/staging.py): every read shows all of it once its final write commits, and none of it before.
The clock at 2026-01-15T09:30Z."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest

from chalicelib.billing import repository, staging
from tests.api.billing.support import billed_policy, billing, billing_tenant, invoices_of_account
from tests.api.transactions.support import issued_policy
from tests.support.api import assert_error, call, event_types, ok

TOTAL = Decimal("3675.00")


@pytest.fixture
def monthly(api, admin_token):
    return billing_tenant(api, admin_token, "Monthly")


def many_invoices(api, token, tenant, jobs):
    """An account with 36 open invoices (three policies billed on their own, invoiced through the term)."""
    account, _ = billed_policy(api, token, tenant, jobs, billingLevel="policy")
    for _ in range(2):
        issued_policy(api, token, tenant, account, billingLevel="policy")
    jobs.drain()
    ok(
        call(
            api,
            "POST",
            billing(tenant, "/invoices/earlyInvoicing"),
            token,
            {
                "ignoreHolds": False,
                "installmentLocators": [],
                "accountLocator": account,
                "invoiceThroughTime": "2027-03-01T00:00:00Z",
            },
        )
    )
    jobs.drain()
    invoices = invoices_of_account(api, token, tenant, account)
    assert len(invoices) == 36 and sum(Decimal(str(i["totalRemainingAmount"])) for i in invoices) == TOTAL
    return account, [i["locator"] for i in invoices]


def states(api, token, tenant, account):
    return Counter(
        (i["invoiceState"], i["totalRemainingAmount"] == 0) for i in invoices_of_account(api, token, tenant, account)
    )


def balance(api, token, tenant, account):
    return ok(call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), token))[
        "balance"
    ]


def new_payment(api, token, tenant, account, amount):
    return ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            token,
            {
                "accountLocator": account,
                "type": "Check",
                "amount": Decimal(amount),
                "data": {},
                "targets": [{"containerType": "account", "containerLocator": account}],
            },
        )
    )["locator"]


def test_a_payment_of_36_invoices_settles_them_all_and_its_reversal_opens_them_all(api, admin_token, jobs, monthly):
    tenant, token = monthly, admin_token
    account, invoices = many_invoices(api, token, tenant, jobs)
    payment = new_payment(api, token, tenant, account, TOTAL + 10)

    posted = call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), token)

    assert (ok(posted)["paymentState"], ok(posted)["remainingAmount"]) == ("posted", Decimal("10.00"))
    assert states(api, token, tenant, account) == {("settled", True): 36}
    assert balance(api, token, tenant, account) == Decimal("10.00")
    assert Counter(event_types(api, token, tenant, posted)) == {"billing.invoice.settle": 36, "billing.payment.post": 1}
    paid = ok(call(api, "GET", billing(tenant, f"/payments/{payment}/invoices/list?count=100"), token))["items"]
    assert sorted(i["locator"] for i in paid) == sorted(invoices)
    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{invoices[-1]}/credits/list"), token))["items"]
    assert [(c["creditType"], c["locator"], c["creditState"]) for c in credits] == [("payment", payment, "posted")]

    reversed_ = call(api, "PATCH", billing(tenant, f"/payments/{payment}/reverse"), token)

    assert ok(reversed_)["paymentState"] == "reversed"
    assert states(api, token, tenant, account) == {("open", False): 36}
    assert (
        sum(Decimal(str(i["totalRemainingAmount"])) for i in invoices_of_account(api, token, tenant, account)) == TOTAL
    )
    assert balance(api, token, tenant, account) == 0
    assert Counter(event_types(api, token, tenant, reversed_)) == {
        "billing.invoice.unsettle": 36,
        "billing.payment.reverse": 1,
    }
    assert ok(call(api, "GET", billing(tenant, f"/invoices/{invoices[0]}/credits/list"), token))["items"] == []


def test_a_write_off_of_36_invoices_settles_them_all_and_its_reversal_opens_them_all(api, admin_token, jobs, monthly):
    tenant, token = monthly, admin_token
    account, invoices = many_invoices(api, token, tenant, jobs)

    created = call(
        api,
        "POST",
        billing(tenant, "/writeOffs"),
        token,
        {"accountLocator": account, "targets": [{"containerType": "account", "containerLocator": account}]},
    )

    written = ok(created)
    assert (written["writeOffState"], written["amount"]) == ("distributed", TOTAL)
    assert states(api, token, tenant, account) == {("settled", True): 36}
    assert Counter(event_types(api, token, tenant, created)) == {
        "billing.writeoff.create": 1,
        "billing.writeoff.distribute": 1,
        "billing.invoice.settle": 36,
    }
    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{invoices[7]}/credits/list"), token))["items"]
    assert [(c["creditType"], c["locator"]) for c in credits] == [("writeOff", written["locator"])]

    ok(call(api, "PATCH", billing(tenant, f"/writeOffs/{written['locator']}/reverse"), token))
    assert states(api, token, tenant, account) == {("open", False): 36}


def test_a_posting_that_fails_before_its_final_write_shows_nothing_and_a_retry_posts(
    api, admin_token, jobs, monthly, monkeypatch
):
    tenant, token = monthly, admin_token
    account, invoices = many_invoices(api, token, tenant, jobs)
    payment = new_payment(api, token, tenant, account, TOTAL)
    staged: list[int] = []
    write_staged = repository.write_staged

    def then_another_write(tenant_, groups):
        write_staged(tenant_, groups)
        staged.append(len(groups))
        if len(staged) == 1:  # another billing write of the account before the posting's final write
            new_payment(api, token, tenant, account, 1)

    monkeypatch.setattr(repository, "write_staged", then_another_write)
    failed = call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), token)

    assert_error(failed, 409, "conflict.concurrent_modification")
    assert staged == [36]
    assert states(api, token, tenant, account) == {("open", False): 36}
    assert ok(call(api, "GET", billing(tenant, f"/invoices/{invoices[3]}"), token))["invoiceState"] == "open"
    assert ok(call(api, "GET", billing(tenant, f"/invoices/{invoices[3]}/credits/list"), token))["items"] == []
    assert ok(call(api, "GET", billing(tenant, f"/payments/{payment}"), token))["paymentState"] == "draft"
    assert event_types(api, token, tenant, failed) == []
    assert balance(api, token, tenant, account) == 0

    retried = ok(call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), token))

    assert retried["paymentState"] == "posted" and staged == [36, 36]
    assert states(api, token, tenant, account) == {("settled", True): 36}
    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{invoices[3]}/credits/list"), token))["items"]
    total = ok(call(api, "GET", billing(tenant, f"/invoices/{invoices[3]}"), token))["totalAmount"]
    assert [(c["locator"], c["amount"]) for c in credits] == [(payment, total)]


def test_a_committed_posting_not_rolled_forward_yet_shows_whole(api, admin_token, jobs, monthly, monkeypatch):
    """The process dies after the posting's final write, before it rolls the invoices forward: every read
    shows the posting whole; a reversal that fails before its final write leaves it so, and the next
    write of those invoices (the reversal again) builds on it."""
    tenant, token = monthly, admin_token
    account, invoices = many_invoices(api, token, tenant, jobs)
    payment = new_payment(api, token, tenant, account, TOTAL)
    monkeypatch.setattr(staging, "_roll_forward", lambda ctx, changes: None)

    posted = ok(call(api, "PATCH", billing(tenant, f"/payments/{payment}/post"), token))

    assert posted["paymentState"] == "posted"
    assert states(api, token, tenant, account) == {("settled", True): 36}
    found = ok(call(api, "GET", billing(tenant, f"/invoices/{invoices[5]}"), token))
    assert (found["invoiceState"], found["totalRemainingAmount"]) == ("settled", 0)
    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{invoices[5]}/credits/list"), token))["items"]
    assert [c["locator"] for c in credits] == [payment]
    another = new_payment(api, token, tenant, account, 5)
    assert ok(call(api, "PATCH", billing(tenant, f"/payments/{another}/post"), token))["remainingAmount"] == Decimal(
        "5.00"
    )  # no open invoice left to pay

    write_staged = repository.write_staged

    def then_another_write(tenant_, groups):
        write_staged(tenant_, groups)
        new_payment(api, token, tenant, account, 1)

    monkeypatch.setattr(repository, "write_staged", then_another_write)
    failed = call(api, "PATCH", billing(tenant, f"/payments/{payment}/reverse"), token)
    assert_error(failed, 409, "conflict.concurrent_modification")
    assert states(api, token, tenant, account) == {("settled", True): 36}  # the posting's, still
    credits = ok(call(api, "GET", billing(tenant, f"/invoices/{invoices[5]}/credits/list"), token))["items"]
    assert [(c["locator"], c["creditState"]) for c in credits] == [(payment, "posted")]

    monkeypatch.undo()
    ok(call(api, "PATCH", billing(tenant, f"/payments/{payment}/reverse"), token))

    assert states(api, token, tenant, account) == {("open", False): 36}
    assert balance(api, token, tenant, account) == Decimal("5.00")
    assert ok(call(api, "GET", billing(tenant, f"/invoices/{invoices[5]}/credits/list"), token))["items"] == []
