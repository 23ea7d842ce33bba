"""Snapshots by date, and the lists of policies and snapshots (an account's, the tenant's)."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.api.policies.support import UNKNOWN, issue, new_account, policies
from tests.support.api import assert_error, call, ok

SNAPSHOT_FIELDS = {
    "locator",
    "accountLocator",
    "region",
    "productName",
    "currency",
    "timezone",
    "transaction",
    "static",
}
TRANSACTION_SNAPSHOT_FIELDS = {
    "locator",
    "effectiveTime",
    "issuedTime",
    "preferences",
    "segment",
    "transactionCategory",
    "transactionType",
}


def snapshot_path(tenant, issued, date, by_issued_time=None):
    query = f"?date={quote(date)}" + ("" if by_issued_time is None else f"&byIssuedTime={by_issued_time}")
    return policies(tenant, f"/{issued.policyLocator}/snapshot{query}")


def test_a_snapshot_inside_the_term_shows_the_issuance(api, admin_token, tenant, account, issued):
    snapshot = ok(call(api, "GET", snapshot_path(tenant, issued, "2026-06-01T00:00:00Z"), admin_token))
    segment = ok(call(api, "GET", f"/policy/{tenant}/transactions/segments/{issued.segmentLocator}", admin_token))

    assert SNAPSHOT_FIELDS <= set(snapshot)
    assert (snapshot["locator"], snapshot["accountLocator"], snapshot["region"]) == (issued.policyLocator, account, "")
    assert (snapshot["productName"], snapshot["currency"], snapshot["timezone"]) == (
        "PersonalAuto",
        "USD",
        "America/New_York",
    )
    assert (snapshot["static"], snapshot["delinquencyPlanName"]) == ({"agency": "Downtown"}, "Standard")
    transaction = snapshot["transaction"]
    assert TRANSACTION_SNAPSHOT_FIELDS <= set(transaction)
    assert (transaction["locator"], transaction["transactionCategory"], transaction["transactionType"]) == (
        issued.transactionLocator,
        "issuance",
        "issuance",
    )
    assert (transaction["effectiveTime"], transaction["issuedTime"]) == (
        "2026-02-01T05:00:00.000Z",
        "2026-01-15T09:30:00.000Z",
    )
    assert transaction["segment"] == segment


@pytest.mark.parametrize(
    "date, by_issued_time, found",
    [
        ("2026-02-01T05:00:00Z", None, True),  # the start
        ("2026-02-01T04:59:59Z", None, False),  # before it
        ("2027-02-01T04:59:59.999Z", "false", True),
        ("2027-02-01T05:00:00Z", None, False),  # the end is outside the term
        ("2026-02-01T00:00:00-05:00", None, True),  # offsets count
        ("2026-02-01T05:00:00", None, True),  # no offset: UTC
        ("2026-01-15T09:30:00Z", "true", True),  # issued then, though not yet in force
        ("2026-01-15T09:29:59Z", "true", False),  # before it was issued
        ("2030-01-01T00:00:00Z", "true", True),
    ],
)
def test_a_snapshot_needs_a_transaction_that_answers_for_the_date(
    api, admin_token, tenant, issued, date, by_issued_time, found
):
    response = call(api, "GET", snapshot_path(tenant, issued, date, by_issued_time), admin_token)
    if found:
        assert ok(response)["transaction"]["locator"] == issued.transactionLocator
    else:
        assert_error(response, 404, "snapshot.not_found")


@pytest.mark.parametrize("query", ["", "?date=yesterday", "?date=2026-06-01T00:00:00Z&byIssuedTime=perhaps"])
def test_a_snapshot_needs_a_date(api, admin_token, tenant, issued, query):
    response = call(api, "GET", policies(tenant, f"/{issued.policyLocator}/snapshot{query}"), admin_token)
    assert_error(response, 400, "request.invalid")


def test_the_snapshot_of_an_unknown_policy_is_a_404(api, admin_token, tenant):
    response = call(api, "GET", policies(tenant, f"/{UNKNOWN}/snapshot?date=2026-06-01T00:00:00Z"), admin_token)
    assert_error(response, 404, "policy.not_found")


# --- an account's policies ---------------------------------------------------------------------------


def account_path(tenant, account, suffix):
    return f"/policy/{tenant}/accounts/{account}{suffix}"


def test_an_accounts_policies_are_listed_oldest_first(api, admin_token, tenant, account):
    first, second, third = (issue(tenant, account) for _ in range(3))
    issue(tenant, new_account(api, admin_token, tenant))  # another account's
    path = account_path(tenant, account, "/policies/list")

    listed = ok(call(api, "GET", path, admin_token))
    assert listed["listCompleted"] is True
    assert [p["locator"] for p in listed["items"]] == [first.policyLocator, second.policyLocator, third.policyLocator]
    assert listed["items"][0] == {
        **ok(call(api, "GET", policies(tenant, f"/{first.policyLocator}"), admin_token)),
        "static": {},
    }
    assert all(p["statuses"] == ["pending"] for p in listed["items"])

    page = ok(call(api, "GET", path + "?offset=1&count=1&includeStaticData=true", admin_token))
    assert page["listCompleted"] is False
    assert [(p["locator"], p["static"]) for p in page["items"]] == [(second.policyLocator, {"agency": "Downtown"})]
    assert ok(call(api, "GET", path + "?offset=2&count=1", admin_token))["listCompleted"] is True


def test_an_accounts_policy_snapshots_are_the_latest_ones(api, admin_token, tenant, account):
    issued = [issue(tenant, account) for _ in range(2)]
    listed = ok(call(api, "GET", account_path(tenant, account, "/policies/snapshot/list"), admin_token))

    assert listed["listCompleted"] is True
    assert [s["locator"] for s in listed["items"]] == [i.policyLocator for i in issued]
    assert [s["transaction"]["segment"]["locator"] for s in listed["items"]] == [i.segmentLocator for i in issued]
    snapshot = ok(call(api, "GET", snapshot_path(tenant, issued[0], "2026-06-01T00:00:00Z"), admin_token))
    assert listed["items"][0] == snapshot


@pytest.mark.parametrize("suffix", ["/policies/list", "/policies/snapshot/list"])
def test_an_account_without_policies_lists_none(api, admin_token, tenant, account, suffix):
    assert ok(call(api, "GET", account_path(tenant, account, suffix), admin_token)) == {
        "listCompleted": True,
        "items": [],
    }


@pytest.mark.parametrize("suffix", ["/policies/list", "/policies/snapshot/list"])
def test_the_lists_of_an_unknown_account_are_404s(api, admin_token, tenant, suffix):
    assert_error(call(api, "GET", account_path(tenant, UNKNOWN, suffix), admin_token), 404, "account.not_found")


@pytest.mark.parametrize("query", ["?count=101", "?count=0", "?offset=-1", "?count=many", "?includeStaticData=maybe"])
def test_the_lists_check_their_paging(api, admin_token, tenant, account, query):
    assert_error(
        call(api, "GET", account_path(tenant, account, "/policies/list" + query), admin_token), 400, "request.invalid"
    )


def test_snapshot_lists_read_in_a_fixed_number_of_calls(api, admin_token, tenant, account, ddb_calls):
    for _ in range(5):
        issue(tenant, account)
    ddb_calls.clear()
    listed = ok(call(api, "GET", account_path(tenant, account, "/policies/snapshot/list"), admin_token))
    assert len(listed["items"]) == 5
    # the account (404 check), its policies, then their transactions and segments in one batch
    assert [name for name in ddb_calls if name != "BatchGetItem"] == ["GetItem", "Query"]
    assert ddb_calls[-1] == "BatchGetItem"


# --- the tenant's policy snapshots (deprecated) ----------------------------------------------------


def test_the_tenants_policy_snapshots_cover_every_account(api, admin_token, tenant, account):
    other = new_account(api, admin_token, tenant)
    issued = [issue(tenant, account), issue(tenant, other), issue(tenant, account)]
    path = policies(tenant, "/snapshot/list")

    listed = ok(call(api, "GET", path, admin_token))
    assert listed["listCompleted"] is True
    assert [(s["locator"], s["accountLocator"]) for s in listed["items"]] == [
        (issued[0].policyLocator, account),
        (issued[1].policyLocator, other),
        (issued[2].policyLocator, account),
    ]
    page = ok(call(api, "GET", path + "?offset=2&count=1", admin_token))
    assert ([s["locator"] for s in page["items"]], page["listCompleted"]) == ([issued[2].policyLocator], True)
    assert_error(call(api, "GET", path + "?count=500", admin_token), 400, "request.invalid")
