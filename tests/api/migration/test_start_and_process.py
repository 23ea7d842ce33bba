"""A migration of new accounts through the API: started (S3 + one job per account), processed, its counts,
per-account states, id mappings, and the migrated records read through the policy API as ordinary ones."""

from __future__ import annotations

from decimal import Decimal

from tests.api.migration.support import (
    account_of,
    account_request,
    control,
    events_of_type,
    fetch,
    migrations,
    start,
)
from tests.support.api import assert_error, call, event_types, ok


def test_accounts_with_policy_history_are_migrated_and_read_as_ordinary_records(api, admin_token, tenant, jobs):
    body = [account_request("SRC-A1"), account_request("SRC-A2", firstName="Grace")]
    started = start(api, admin_token, tenant, body)
    migration = ok(started)
    assert migration["migrationState"] == "submitted"
    assert (migration["totalAccounts"], migration["processedAccounts"]) == (2, 0)
    assert event_types(api, admin_token, tenant, started) == ["migration.start"]

    jobs.drain(job_types=frozenset({"migration.run"}))
    listed = fetch(api, admin_token, tenant, migration["locator"], "/accounts/list")
    assert [item["accountMigrationState"] for item in listed["items"]] == ["pending", "pending"]
    assert listed["listCompleted"] is True
    assert fetch(api, admin_token, tenant, migration["locator"])["migrationState"] == "processing"

    jobs.drain()
    done = fetch(api, admin_token, tenant, migration["locator"])
    assert done["migrationState"] == "finished"
    assert (done["processedAccounts"], done["completedAccounts"], done["failedAccounts"], done["errorAccounts"]) == (
        2,
        2,
        0,
        0,
    )
    states = fetch(api, admin_token, tenant, migration["locator"], "/accounts/list")["items"]
    assert [(s["accountMigrationState"], s["processedItems"], s["totalItems"], s["errorItems"]) for s in states] == [
        ("completed", 2, 2, 0)
    ] * 2
    assert events_of_type(api, admin_token, tenant, "migration.finish") == [{"migrationLocator": migration["locator"]}]

    mapped = account_of(api, admin_token, tenant, migration["locator"], "SRC-A2")
    assert mapped["migrationLocator"] == migration["locator"]
    assert (
        fetch(api, admin_token, tenant, migration["locator"], f"/accounts/{mapped['accountLocator']}/mappings")
        == mapped
    )
    ((policy_locator, policy_mapping),) = mapped["policies"].items()
    assert policy_mapping["originalId"] == "SRC-A2-p1"
    assert sorted(policy_mapping["childrenMappings"]["elements"].values()) == sorted(
        ["SRC-A2-p1-root", "SRC-A2-p1-v1", "SRC-A2-p1-v1-col", "SRC-A2-p1-v2", "SRC-A2-p1-v2-col"]
    )
    state = fetch(api, admin_token, tenant, migration["locator"], f"/accounts/{mapped['accountLocator']}")
    assert state["accountMigrationState"] == "completed" and state["accountLocator"] == mapped["accountLocator"]

    account = ok(call(api, "GET", f"/policy/{tenant}/accounts/{mapped['accountLocator']}", admin_token))
    assert account["data"]["firstName"] == "Grace" and account["accountState"] == "validated"
    assert account["createdAt"].startswith("2025-05-19T12:00:00")
    policy = ok(call(api, "GET", f"/policy/{tenant}/policies/{policy_locator}", admin_token))
    assert policy["accountLocator"] == mapped["accountLocator"] and policy["productName"] == "PersonalAuto"
    assert policy["policyNumber"].startswith("PA-")
    issued = ok(call(api, "GET", f"/policy/{tenant}/policies/{policy_locator}/issuedTransactions/list", admin_token))
    assert [t["transactionCategory"] for t in issued["items"]] == ["issuance", "change"]
    change = ok(call(api, "GET", f"/policy/{tenant}/transactions/{issued['items'][1]['locator']}/price", admin_token))
    issuance = ok(call(api, "GET", f"/policy/{tenant}/transactions/{issued['items'][0]['locator']}/price", admin_token))
    (first_premium,) = issuance["charges"]
    premiums = sorted((Decimal(str(c["amount"])), c.get("reversalOfLocator")) for c in change["charges"])
    # the change's segment runs 2025-12-01 to 2026-06-01: 6 months at 12.00 and at 6.00; as a change issued here
    # it gives back the 6 months of the issuance's segment it replaces (144.00 for the year, 72.00 kept)
    assert premiums == [
        (Decimal("-72.00"), first_premium["locator"]),
        (Decimal("36.00"), None),
        (Decimal("72.00"), None),
    ]
    billed = ok(call(api, "GET", f"/billing/{tenant}/policies/{policy_locator}/charges/list?count=100", admin_token))
    assert sum(Decimal(str(c["amount"])) for c in billed["items"]) == Decimal("180.00")  # 6 x 12 + 6 x 18
    accounts_listed = ok(call(api, "GET", f"/policy/{tenant}/accounts/list", admin_token))["items"]
    assert len(accounts_listed) == 2  # nothing written twice


def test_the_same_idempotency_key_answers_the_same_migration_and_another_body_is_a_409(api, admin_token, tenant, jobs):
    body = [account_request("SRC-K1")]
    first = ok(start(api, admin_token, tenant, body, key="book-1"))
    again = ok(start(api, admin_token, tenant, body, key="book-1"))
    assert again["locator"] == first["locator"]
    assert_error(
        start(api, admin_token, tenant, [account_request("SRC-K2")], key="book-1"), 409, "idempotency.key_reused"
    )
    jobs.drain()
    assert fetch(api, admin_token, tenant, first["locator"])["processedAccounts"] == 1
    assert len(ok(call(api, "GET", f"/policy/{tenant}/accounts/list", admin_token))["items"]) == 1


def test_bad_requests_are_clear_4xx_and_start_nothing(api, admin_token, tenant, jobs):
    assert_error(call(api, "POST", migrations(tenant), admin_token, raw=b"[{"), 400, "request.malformed_json")
    assert_error(start(api, admin_token, tenant, []), 400, "request.invalid")
    assert_error(start(api, admin_token, tenant, [{**account_request("X"), "surprise": 1}]), 400, "request.invalid")
    assert_error(
        start(api, admin_token, tenant, [account_request("X"), account_request("X")]), 400, "migration.duplicate_id"
    )
    assert_error(
        call(api, "GET", migrations(tenant, "/01J00000000000000000000000"), admin_token), 404, "migration.not_found"
    )
    assert_error(control(api, admin_token, tenant, "01J00000000000000000000000", "pause"), 404, "migration.not_found")
    assert jobs.drain() == 0
