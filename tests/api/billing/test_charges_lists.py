"""Charges lists (issue 26, point 3; the OpenAPI definition's fetchChargesByAccount, fetchChargesByPolicy and
fetchChargesByTransaction): the charges billing billed, paged, in the platform's ChargeResponse shape, so a
finance user reconciles them against the installments. The policy of tests/api/billing/support.py (premium
1,200.00 and tax 25.00 for a year from 2026-02-01, monthly installments); a change effective 2026-08-01 raises
the vehicle's value to 25,000: premium 900.00 and tax 25.00 for the rest of the term, and reversals of the
replaced coverage's -600.00 and -12.50. The clock at 2026-01-15T09:30Z."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.billing.support import billed_policy, billing, billing_tenant
from tests.api.quotes.support import new_account
from tests.api.transactions.support import (
    create,
    issued_change,
    issued_policy,
    modify,
    params,
    segment_of_policy,
    step,
    transaction_path,
    vehicle_of,
)
from tests.support.api import assert_error, call, ok


@pytest.fixture
def book(api, admin_token, jobs):
    """An account with two policies, the first changed; another account with a policy of its own."""
    tenant, token = billing_tenant(api, admin_token), admin_token
    account, first = billed_policy(api, token, tenant, jobs)
    vehicle = vehicle_of(segment_of_policy(api, token, tenant, first))["staticLocator"]
    change = issued_change(
        api, token, tenant, first["locator"], "2026-08-01T04:00:00.000Z", modify(vehicle, value="25000")
    )
    second = issued_policy(api, token, tenant, account)
    other_account, other = billed_policy(api, token, tenant, jobs)
    jobs.drain()
    return {
        "tenant": tenant,
        "account": account,
        "first": first,
        "change": change["locator"],
        "second": second,
        "otherAccount": other_account,
        "other": other,
    }


def charges(api, token, tenant, owner, query=""):
    return ok(call(api, "GET", billing(tenant, f"/{owner}/charges/list{query}"), token))


def summary(items):
    return [
        (c["transactionLocator"], c["chargeType"], c["amount"], c.get("reversalOfLocator") is not None) for c in items
    ]


def test_a_transactions_charges_are_its_priced_charges_in_the_platforms_shape(api, admin_token, book):
    tenant, token, policy = book["tenant"], admin_token, book["first"]
    issuance = policy["issuedTransactionLocator"]
    page = charges(api, token, tenant, f"transactions/{issuance}")
    assert page["listCompleted"] is True
    priced = ok(call(api, "GET", transaction_path(tenant, issuance, "/price"), token))["charges"]
    assert [c["locator"] for c in page["items"]] == [c["locator"] for c in priced]
    by_type = {c["chargeType"]: c for c in page["items"]}
    assert set(by_type) == {"premium", "tax"}
    for given in priced:
        listed = next(c for c in page["items"] if c["locator"] == given["locator"])
        assert listed == {
            "locator": given["locator"],
            "accountLocator": book["account"],
            "currency": "USD",
            "amount": given["amount"],
            "chargeCategory": given["chargeCategory"],
            "chargeInvoicing": "scheduled",
            "chargeType": given["chargeType"],
            "policyLocator": policy["locator"],
            "transactionLocator": issuance,
            "elementLocator": given["elementLocator"],
            "elementStaticLocator": given["elementStaticLocator"],
            **({"tag": given["tag"]} if given.get("tag") else {}),
        }
    assert (by_type["premium"]["amount"], by_type["tax"]["amount"]) == (Decimal("1200.00"), Decimal("25.00"))

    change = charges(api, token, tenant, f"transactions/{book['change']}")["items"]
    assert sorted((c["chargeType"], c["amount"], c.get("reversalOfLocator")) for c in change) == sorted(
        [
            ("premium", Decimal("900.00"), None),
            ("tax", Decimal("25.00"), None),
            ("premium", Decimal("-600.00"), by_type["premium"]["locator"]),
            ("tax", Decimal("-12.50"), by_type["tax"]["locator"]),
        ]
    )
    assert {c["transactionLocator"] for c in change} == {book["change"]}


def test_a_policys_charges_are_those_of_its_issued_transactions_and_add_up_to_its_installments(api, admin_token, book):
    tenant, token, policy = book["tenant"], admin_token, book["first"]
    issuance, change = policy["issuedTransactionLocator"], book["change"]
    page = charges(api, token, tenant, f"policies/{policy['locator']}")
    assert page["listCompleted"] is True
    assert [entry[0] for entry in summary(page["items"])] == [issuance] * 2 + [change] * 4
    assert sum(c["amount"] for c in page["items"]) == Decimal("1225.00") + Decimal("312.50")
    installments = ok(
        call(api, "GET", billing(tenant, f"/installments/policies/{policy['locator']}/list?count=100"), token)
    )["items"]
    installed: dict[str, Decimal] = {}
    for installment in installments:
        for item in installment["installmentItems"]:
            installed[item["chargeLocator"]] = installed.get(item["chargeLocator"], Decimal(0)) + item["amount"]
    assert installed == {c["locator"]: c["amount"] for c in page["items"]}

    first_two = charges(api, token, tenant, f"policies/{policy['locator']}", "?count=2")
    assert (first_two["items"], first_two["listCompleted"]) == (page["items"][:2], False)
    rest = charges(api, token, tenant, f"policies/{policy['locator']}", "?offset=2&count=4")
    assert (rest["items"], rest["listCompleted"]) == (page["items"][2:], True)


def test_an_accounts_charges_are_those_of_its_policies_oldest_first_and_paged(api, admin_token, book):
    tenant, token = book["tenant"], admin_token
    first = charges(api, token, tenant, f"policies/{book['first']['locator']}")["items"]
    second = charges(api, token, tenant, f"policies/{book['second']['locator']}")["items"]
    assert summary(second) == [
        (book["second"]["issuedTransactionLocator"], "premium", Decimal("1200.00"), False),
        (book["second"]["issuedTransactionLocator"], "tax", Decimal("25.00"), False),
    ]
    whole = charges(api, token, tenant, f"accounts/{book['account']}", "?count=100")
    assert (whole["items"], whole["listCompleted"]) == (first + second, True)
    assert {c["accountLocator"] for c in whole["items"]} == {book["account"]}
    pages = [
        charges(api, token, tenant, f"accounts/{book['account']}", f"?offset={offset}&count=3") for offset in (0, 3, 6)
    ]
    assert [p["items"] for p in pages] == [(first + second)[0:3], (first + second)[3:6], (first + second)[6:8]]
    assert [p["listCompleted"] for p in pages] == [False, False, True]
    assert summary(charges(api, token, tenant, f"accounts/{book['otherAccount']}")["items"]) == [
        (book["other"]["issuedTransactionLocator"], "premium", Decimal("1200.00"), False),
        (book["other"]["issuedTransactionLocator"], "tax", Decimal("25.00"), False),
    ]


def test_unknown_and_foreign_owners_answer_404_and_an_account_without_policies_none(api, admin_token, book):
    tenant, token = book["tenant"], admin_token
    elsewhere = billing_tenant(api, token)
    for owner, code in (
        (f"accounts/{book['account']}", "account.not_found"),
        (f"policies/{book['first']['locator']}", "policy.not_found"),
        (f"transactions/{book['change']}", "transaction.not_found"),
    ):
        assert_error(call(api, "GET", billing(elsewhere, f"/{owner}/charges/list"), token), 404, code)
    assert_error(
        call(api, "GET", billing(tenant, "/policies/01JUNKNOWNPOLICY0000000000/charges/list"), token),
        404,
        "policy.not_found",
    )
    assert_error(
        call(api, "GET", billing(tenant, f"/accounts/{book['account']}/charges/list?count=0"), token),
        400,
        "request.invalid",
    )
    empty = new_account(api, token, tenant)
    assert charges(api, token, tenant, f"accounts/{empty}") == {"listCompleted": True, "items": []}


def test_an_aggregate_lists_the_charges_of_what_it_bundles_and_the_policy_each_charge_billed_once(
    api, admin_token, jobs, book
):
    """A change effective 2026-03-16 (value 60,000), issued after the one of August, is issued in an aggregate:
    the August change reversed, the new change, the August change reapplied (tests/api/transactions/
    test_out_of_sequence.py has their amounts)."""
    tenant, token, policy = book["tenant"], admin_token, book["first"]
    vehicle = vehicle_of(segment_of_policy(api, token, tenant, policy))["staticLocator"]
    earlier = ok(
        create(
            api,
            token,
            tenant,
            policy["locator"],
            "change",
            [params("2026-03-16T04:00:00.000Z"), modify(vehicle, value="60000")],
        )
    )
    aggregate = ok(step(api, token, tenant, earlier["locator"], "issue"))["aggregateTransactionLocator"]
    jobs.drain()
    parts = [
        p["locator"] for p in ok(call(api, "GET", transaction_path(tenant, aggregate), token))["aggregatedTransactions"]
    ]
    assert parts[1] == earlier["locator"]

    assert charges(api, token, tenant, f"transactions/{aggregate}")["items"] == []  # an aggregate prices nothing
    bundled = charges(api, token, tenant, f"transactions/{aggregate}", "?includeAll=true&count=100")["items"]
    assert [c["transactionLocator"] for c in bundled] == [parts[0]] * 4 + [parts[1]] * 4 + [parts[2]] * 4
    assert {c["bundleTransactionLocator"] for c in bundled} == {aggregate}
    own = charges(api, token, tenant, f"transactions/{earlier['locator']}")["items"]
    assert own == bundled[4:8]
    assert sorted((c["chargeType"], c["amount"]) for c in own) == [
        ("premium", Decimal("-1051.61")),
        ("premium", Decimal("2103.23")),
        ("tax", Decimal("-21.91")),
        ("tax", Decimal("25.00")),
    ]

    listed = charges(api, token, tenant, f"policies/{policy['locator']}", "?count=100")["items"]
    issuance = policy["issuedTransactionLocator"]
    assert [c["transactionLocator"] for c in listed] == [issuance] * 2 + [book["change"]] * 4 + [
        c["transactionLocator"] for c in bundled
    ]
    totals: dict[str, Decimal] = {}
    for charge in listed:
        totals[charge["chargeType"]] = totals.get(charge["chargeType"], Decimal(0)) + charge["amount"]
    assert totals == {"premium": Decimal("1951.62"), "tax": Decimal("38.83")}
    installments = ok(
        call(api, "GET", billing(tenant, f"/installments/policies/{policy['locator']}/list?count=100"), token)
    )["items"]
    installed = sum(item["amount"] for i in installments for item in i["installmentItems"])
    assert installed == sum(totals.values())
