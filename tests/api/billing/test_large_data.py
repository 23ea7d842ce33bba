"""No 500 from a large `data` (issue 26, point 11): a payment or disbursement whose `data` would make its stored
record larger than DynamoDB's 400 KB item limit answers 413 `record.too_large` naming the limit, and nothing is
stored; the table gateway estimates every item it writes (storage/table.py), so the same holds for any record.
A record that fits is taken, and its answer kept for an idempotent replay however long it is. The full-pay
policy of tests/api/billing/support.py: one invoice of 1,225.00; the clock at 2026-01-15T09:30Z."""

from __future__ import annotations

import pytest

from tests.api.billing.support import billed_policy, billing, billing_tenant
from tests.support.api import assert_error, call, json_of, ok

LIMIT = "one record holds at most 409,600 bytes (DynamoDB's 400 KB item limit)"
TEXT = {"note": "x" * 420_000}
SMALL_KEYS = {f"k{index:05d}": 1 for index in range(60_000)}


@pytest.fixture
def account(api, admin_token, jobs):
    tenant = billing_tenant(api, admin_token, "FullPay")
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    return tenant, account


def listed(api, token, tenant, account, kind):
    return ok(call(api, "GET", billing(tenant, f"/{kind}/list?accountLocator={account}"), token))["items"]


@pytest.mark.parametrize("data", [TEXT, SMALL_KEYS], ids=["420 KB of text", "60,000 small keys"])
def test_a_payment_or_disbursement_whose_data_outgrows_a_record_is_refused_naming_the_limit(
    api, admin_token, account, data
):
    tenant, locator = account
    payment = {"accountLocator": locator, "type": "Check", "amount": 10, "targets": [], "data": data}
    refused = assert_error(
        call(api, "POST", billing(tenant, "/payments"), admin_token, payment), 413, "record.too_large"
    )
    assert refused["message"].startswith("The payment would take ") and LIMIT in refused["message"]
    disbursement = {"accountLocator": locator, "type": "Refund", "amount": 10, "sources": [], "data": data}
    refused = assert_error(
        call(api, "POST", billing(tenant, "/disbursements"), admin_token, disbursement), 413, "record.too_large"
    )
    assert refused["message"].startswith("The disbursement would take ") and LIMIT in refused["message"]
    assert listed(api, admin_token, tenant, locator, "payments") == []
    assert listed(api, admin_token, tenant, locator, "disbursements") == []


def test_set_data_patches_that_would_outgrow_the_record_are_refused_and_leave_it_as_it_was(api, admin_token, account):
    tenant, locator = account
    payment = ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            admin_token,
            {"accountLocator": locator, "type": "Check", "amount": 10, "targets": [], "data": {}},
        )
    )
    path = billing(tenant, f"/payments/{payment['locator']}")
    for index in range(2):
        ok(call(api, "PATCH", path, admin_token, {"setData": {f"part{index}": "y" * 150_000}}))
    before = ok(call(api, "GET", path, admin_token))
    refused = assert_error(
        call(api, "PATCH", path, admin_token, {"setData": {"part2": "y" * 150_000}}), 413, "record.too_large"
    )
    assert LIMIT in refused["message"]
    assert ok(call(api, "GET", path, admin_token)) == before
    assert sorted(before["data"]) == ["part0", "part1"]
    # what stays within the limit is still taken
    assert sorted(ok(call(api, "PATCH", path, admin_token, {"setData": {"part2": "z"}}))["data"]) == [
        "part0",
        "part1",
        "part2",
    ]


def test_a_payment_as_large_as_a_record_holds_is_taken_and_replayed_whole(api, admin_token, account):
    """40,000 small keys fit one item (DynamoDB counts 9 bytes a key) but answer 440 KB of JSON: the idempotent
    replay still gets the whole first answer."""
    tenant, locator = account
    data = {f"k{index:05d}": 1 for index in range(40_000)}
    body = {"accountLocator": locator, "type": "Check", "amount": 10, "targets": [], "data": data}
    key = {"X-Idempotency-Key": "large-1"}
    first = call(api, "POST", billing(tenant, "/payments"), admin_token, body, headers=key)
    created = ok(first)
    assert created["data"] == data and len(first.body) > 409_600
    again = call(api, "POST", billing(tenant, "/payments"), admin_token, body, headers=key)
    assert (again.status_code, json_of(again)) == (200, created)
    assert [p["locator"] for p in listed(api, admin_token, tenant, locator, "payments")] == [created["locator"]]
