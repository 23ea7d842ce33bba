"""Lists the platform lets a client page tenant-wide (issue 26, point 6): `GET /billing/{t}/payments/list` and
`/credits/list` without `accountLocator` page the tenant's payments and credits (posted payments, reversed ones
too), oldest first, with one Query of an index (never a Scan). Full-pay policies of
tests/api/billing/support.py: one invoice of 1,225.00 each; the clock at 2026-01-15T09:30Z."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.billing.support import billed_policy, billing, billing_tenant
from tests.support.api import assert_error, call, ok


@pytest.fixture
def full_pay(api, admin_token):
    return billing_tenant(api, admin_token, "FullPay")


def pay(api, token, tenant, account, amount, *moves):
    payment = ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            token,
            {"accountLocator": account, "type": "Check", "amount": amount, "targets": []},
        )
    )
    for move in moves:
        ok(call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/{move}"), token))
    return payment["locator"]


def listed(api, token, tenant, kind, query=""):
    return ok(call(api, "GET", billing(tenant, f"/{kind}/list{query}"), token))


def test_the_payments_and_credits_of_every_account_of_the_tenant_are_paged_oldest_first(
    api, admin_token, jobs, full_pay, ddb_calls
):
    tenant, token = full_pay, admin_token
    first_account, _ = billed_policy(api, token, tenant, jobs)
    second_account, _ = billed_policy(api, token, tenant, jobs)
    posted = pay(api, token, tenant, first_account, 100, "post")
    draft = pay(api, token, tenant, second_account, 200)
    reversed_one = pay(api, token, tenant, second_account, 300, "post", "reverse")
    discarded = pay(api, token, tenant, first_account, 400, "discard")
    late = pay(api, token, tenant, first_account, 500, "post")

    ddb_calls.clear()
    page = listed(api, token, tenant, "payments")
    assert "Scan" not in ddb_calls and ddb_calls.count("Query") == 1 and ddb_calls[-1] == "Query"
    assert page["listCompleted"] is True
    assert [(p["locator"], p["accountLocator"], p["paymentState"], p["amount"]) for p in page["items"]] == [
        (posted, first_account, "posted", 100),
        (draft, second_account, "draft", 200),
        (reversed_one, second_account, "reversed", 300),
        (discarded, first_account, "discarded", 400),
        (late, first_account, "posted", 500),
    ]
    assert page["items"][0] == ok(call(api, "GET", billing(tenant, f"/payments/{posted}"), token))

    first_two = listed(api, token, tenant, "payments", "?count=2")
    assert ([p["locator"] for p in first_two["items"]], first_two["listCompleted"]) == ([posted, draft], False)
    last_two = listed(api, token, tenant, "payments", "?offset=3&count=2")
    assert ([p["locator"] for p in last_two["items"]], last_two["listCompleted"]) == ([discarded, late], True)
    assert listed(api, token, tenant, "payments", "?offset=5") == {"listCompleted": True, "items": []}

    ddb_calls.clear()
    credits = listed(api, token, tenant, "credits")
    assert "Scan" not in ddb_calls and ddb_calls.count("Query") == 1 and ddb_calls[-2:] == ["Query", "BatchGetItem"]
    assert credits["listCompleted"] is True
    assert [
        (c["locator"], c["accountLocator"], c["creditType"], c["creditState"], c["amount"]) for c in credits["items"]
    ] == [
        (posted, first_account, "payment", "posted", 100),
        (reversed_one, second_account, "payment", "reversed", 300),
        (late, first_account, "payment", "posted", 500),
    ]
    assert credits["items"][1]["reversedAt"] == "2026-01-15T09:30:00.000Z"
    middle = listed(api, token, tenant, "credits", "?offset=1&count=1")
    assert ([c["locator"] for c in middle["items"]], middle["listCompleted"]) == ([reversed_one], False)

    # an account still narrows either list to its own
    assert [
        p["locator"] for p in listed(api, token, tenant, "payments", f"?accountLocator={second_account}")["items"]
    ] == [draft, reversed_one]
    assert [
        c["locator"] for c in listed(api, token, tenant, "credits", f"?accountLocator={first_account}")["items"]
    ] == [posted, late]


def test_another_tenant_lists_none_of_them_and_an_unknown_account_is_404(api, admin_token, jobs, full_pay):
    tenant, token = full_pay, admin_token
    account, _ = billed_policy(api, token, tenant, jobs)
    pay(api, token, tenant, account, Decimal("12.50"), "post")
    elsewhere = billing_tenant(api, token, "FullPay")
    for kind in ("payments", "credits"):
        assert listed(api, token, elsewhere, kind) == {"listCompleted": True, "items": []}
        assert_error(
            call(api, "GET", billing(elsewhere, f"/{kind}/list?accountLocator={account}"), token),
            404,
            "account.not_found",
        )
        assert len(listed(api, token, tenant, kind)["items"]) == 1
        assert_error(call(api, "GET", billing(tenant, f"/{kind}/list?count=101"), token), 400, "request.invalid")
