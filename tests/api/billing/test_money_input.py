"""Money input is what it says (issue 26, point 10): an amount is a JSON number (DECISIONS.md "Identifiers, time,
money": a string such as "10" or "1e2" is the wrong type, a 400 with nothing stored), and a payment, credit
distribution or disbursement is in a currency its account is billed in (the tenant's default, USD here, or
that of one of its policies or quotes). Full-pay policies of tests/api/billing/support.py: one invoice of
1,225.00 each; the clock at 2026-01-15T09:30Z."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.billing.support import billed_policy, billing, billing_tenant, invoices_of_account
from tests.api.transactions.support import issued_policy
from tests.support.api import assert_error, call, ok

WRONG_TYPES = ["10", "1e2", "1E+2", True, None, [10], {"amount": 10}]


@pytest.fixture
def full_pay(api, admin_token):
    return billing_tenant(api, admin_token, "FullPay")


@pytest.fixture
def book(api, admin_token, jobs, full_pay):
    """An account with its open invoice of 1,225.00, a write-off of 1.00 on it, a payment of 150.00 posted to
    it for 50.00 (100.00 of credit left) and a draft payment of 10.00: the invoice has 1,174.00 left."""
    tenant, token = full_pay, admin_token
    account, _ = billed_policy(api, token, tenant, jobs)
    [invoice] = invoices_of_account(api, token, tenant, account)
    write_off = ok(
        call(
            api,
            "POST",
            billing(tenant, "/writeOffs"),
            token,
            {
                "accountLocator": account,
                "targets": [{"containerType": "invoice", "containerLocator": invoice["locator"], "amount": 1}],
            },
        )
    )
    paid = ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            token,
            {
                "accountLocator": account,
                "type": "Check",
                "amount": Decimal("150.00"),
                "targets": [{"containerType": "invoice", "containerLocator": invoice["locator"], "amount": 50}],
            },
        )
    )
    ok(call(api, "PATCH", billing(tenant, f"/payments/{paid['locator']}/post"), token))
    draft = ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            token,
            {"accountLocator": account, "type": "Check", "amount": 10, "targets": []},
        )
    )
    return {
        "tenant": tenant,
        "account": account,
        "invoice": invoice["locator"],
        "writeOff": write_off["locator"],
        "draft": draft["locator"],
    }


def stored(api, token, book):
    """What the requests below could have changed: the lists of payments, distributions, disbursements and
    write-offs, the draft payment, the write-off and the credit balance."""
    tenant, account = book["tenant"], book["account"]
    lists = [
        ok(call(api, "GET", billing(tenant, f"/{kind}/list?accountLocator={account}"), token))["items"]
        for kind in ("payments", "creditDistributions", "disbursements", "writeOffs")
    ]
    return [
        *lists,
        ok(call(api, "GET", billing(tenant, f"/payments/{book['draft']}"), token)),
        ok(call(api, "GET", billing(tenant, f"/writeOffs/{book['writeOff']}"), token)),
        ok(call(api, "GET", billing(tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"), token)),
    ]


def money_requests(book):
    """Each money field of the payment, distribution, disbursement and write-off requests: (method, path,
    body builder given the field's value, the field's path in the error)."""
    account, invoice = book["account"], book["invoice"]
    payment = {"accountLocator": account, "type": "Check", "amount": 10, "targets": []}
    distribution = {"accountLocator": account, "amount": 10, "sources": [], "targets": []}
    disbursement = {"accountLocator": account, "type": "Refund", "amount": 10, "sources": []}
    own = {"containerType": "account", "containerLocator": account}
    on_invoice = {"containerType": "invoice", "containerLocator": invoice}
    return [
        ("POST", "/payments", lambda v: {**payment, "amount": v}, "amount"),
        ("POST", "/payments", lambda v: {**payment, "targets": [{**on_invoice, "amount": v}]}, "targets.0.amount"),
        ("PATCH", f"/payments/{book['draft']}", lambda v: {"amount": v}, "amount"),
        (
            "PATCH",
            f"/payments/{book['draft']}",
            lambda v: {"addTargets": [{**on_invoice, "amount": v}]},
            "addTargets.0.amount",
        ),
        ("POST", "/creditDistributions", lambda v: {**distribution, "amount": v}, "amount"),
        (
            "POST",
            "/creditDistributions",
            lambda v: {**distribution, "sources": [{**own, "amount": v}]},
            "sources.0.amount",
        ),
        (
            "POST",
            "/creditDistributions",
            lambda v: {**distribution, "targets": [{**on_invoice, "amount": v}]},
            "targets.0.amount",
        ),
        ("POST", "/disbursements", lambda v: {**disbursement, "amount": v}, "amount"),
        ("POST", "/disbursements", lambda v: {**disbursement, "sources": [{**own, "amount": v}]}, "sources.0.amount"),
        (
            "POST",
            "/writeOffs",
            lambda v: {"accountLocator": account, "targets": [{**on_invoice, "amount": v}]},
            "targets.0.amount",
        ),
        ("PATCH", f"/writeOffs/{book['writeOff']}/reverse", lambda v: {"amount": v}, "amount"),
    ]


def test_money_sent_as_anything_but_a_json_number_is_refused_on_every_field_and_nothing_changes(api, admin_token, book):
    tenant, token = book["tenant"], admin_token
    before = stored(api, token, book)
    requests = money_requests(book)
    for method, path, body, field in requests:
        for value in WRONG_TYPES:
            if value is None and (method, field) != ("POST", "amount"):
                continue  # null is "not given" where an amount is optional (a target's: all that remains)
            refused = assert_error(call(api, method, billing(tenant, path), token, body(value)), 400, "request.invalid")
            assert field in [error["field"] for error in refused["fieldErrors"]], (path, field, value, refused)
    assert stored(api, token, book) == before


def test_money_sent_as_a_json_number_is_taken_on_every_field(api, admin_token, book):
    """The same fields with numbers: taken (integers and decimals alike), so the refusals above are the type's."""
    tenant, token = book["tenant"], admin_token
    draft = f"/payments/{book['draft']}"
    assert ok(call(api, "PATCH", billing(tenant, draft), token, {"amount": Decimal("12.50")}))["amount"] == Decimal(
        "12.50"
    )
    assert ok(call(api, "PATCH", billing(tenant, draft), token, {"amount": 12}))["amount"] == 12
    for method, path, body, _field in money_requests(book):
        if path == draft or "reverse" in path:
            continue
        assert call(api, method, billing(tenant, path), token, body(1)).status_code == 200, (path, _field)
    reversed_write_off = ok(
        call(
            api, "PATCH", billing(tenant, f"/writeOffs/{book['writeOff']}/reverse"), token, {"amount": Decimal("0.40")}
        )
    )
    assert (reversed_write_off["writeOffState"], reversed_write_off["reversedAmount"]) == (
        "distributed",
        Decimal("0.40"),
    )


def test_a_payment_in_a_currency_its_account_is_not_billed_in_is_refused(api, admin_token, book):
    tenant, token, account = book["tenant"], admin_token, book["account"]
    before = stored(api, token, book)
    body = {"accountLocator": account, "type": "Check", "amount": 10, "targets": []}
    for currency in ("XYZ", "EUR"):
        refused = assert_error(
            call(api, "POST", billing(tenant, "/payments"), token, {**body, "currency": currency}),
            400,
            "payment.invalid_currency",
        )
        assert refused["fieldErrors"] == [{"field": "currency", "message": "not a currency of the account"}]
        assert f"not in {currency}" in refused["message"]
    assert_error(
        call(api, "PATCH", billing(tenant, f"/payments/{book['draft']}"), token, {"currency": "EUR"}),
        400,
        "payment.invalid_currency",
    )
    assert stored(api, token, book) == before
    usd = ok(call(api, "POST", billing(tenant, "/payments"), token, {**body, "currency": "USD"}))
    assert (usd["currency"], usd["amount"]) == ("USD", 10)


def test_a_credit_distribution_or_disbursement_in_a_currency_its_account_is_not_billed_in_is_refused(
    api, admin_token, book
):
    tenant, token, account = book["tenant"], admin_token, book["account"]
    before = stored(api, token, book)
    for path, body in (
        ("/disbursements", {"accountLocator": account, "type": "Refund", "amount": 10, "sources": []}),
        ("/creditDistributions", {"accountLocator": account, "amount": 10, "targets": []}),
    ):
        for currency in ("XYZ", "EUR"):
            refused = assert_error(
                call(api, "POST", billing(tenant, path), token, {**body, "currency": currency}),
                400,
                "credit.invalid_currency",
            )
            assert refused["fieldErrors"] == [{"field": "currency", "message": "not a currency of the account"}]
    assert stored(api, token, book) == before


def test_an_account_with_a_policy_in_another_currency_takes_money_in_it(api, admin_token, jobs, book):
    """A EUR policy makes EUR one of the account's currencies (USD stays, the tenant's default); another
    account of the tenant still refuses EUR."""
    tenant, token, account = book["tenant"], admin_token, book["account"]
    other, _ = billed_policy(api, token, tenant, jobs)
    issued_policy(api, token, tenant, account, currency="EUR")
    jobs.drain()
    euro_invoice = next(i for i in invoices_of_account(api, token, tenant, account) if i["currency"] == "EUR")
    body = {
        "accountLocator": account,
        "type": "Check",
        "amount": euro_invoice["totalAmount"],
        "currency": "EUR",
        "targets": [{"containerType": "invoice", "containerLocator": euro_invoice["locator"]}],
    }
    paid = ok(call(api, "POST", billing(tenant, "/payments"), token, body))
    assert ok(call(api, "PATCH", billing(tenant, f"/payments/{paid['locator']}/post"), token))["currency"] == "EUR"
    assert (
        ok(call(api, "GET", billing(tenant, f"/invoices/{euro_invoice['locator']}"), token))["invoiceState"]
        == "settled"
    )
    assert_error(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            token,
            {"accountLocator": other, "type": "Check", "amount": 10, "currency": "EUR", "targets": []},
        ),
        400,
        "payment.invalid_currency",
    )
