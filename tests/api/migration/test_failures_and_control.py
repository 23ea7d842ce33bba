"""Per-entity failures, pause and resume, PATCH of failed entities, recover after a system error, a worker that
crashed between an account's pending records and its final write: through the API, nothing half-written."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.core import codes
from chalicelib.migration import service
from tests.api.migration.support import (
    CREATED_BY,
    account_of,
    account_request,
    auto_policy,
    control,
    events_of_type,
    fetch,
    migrations,
    start,
)
from tests.support.api import assert_error, call, ok


def _accounts(api, token, tenant):
    return ok(call(api, "GET", f"/policy/{tenant}/accounts/list?count=100", token))["items"]


def _policies_of(api, token, tenant, account):
    return ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}/policies/list", token))["items"]


def test_a_bad_policy_fails_its_account_only_naming_it_and_nothing_of_that_account_is_written(
    api, admin_token, tenant, jobs
):
    bad = auto_policy("SRC-B1-p2", productName="Motorbike")
    unreconciled = auto_policy("SRC-B1-p3")
    unreconciled["terms"][0]["transactions"][0]["segment"]["rootElement"]["elements"][0]["charges"][0][
        "installmentItems"
    ] = [
        {"amount": Decimal("100.00"), "id": "i1", "installmentNumber": 1},
        {"amount": Decimal("43.99"), "id": "i2", "installmentNumber": 2},
    ]
    body = [
        account_request("SRC-B1", policies=[auto_policy("SRC-B1-p1"), bad, unreconciled]),
        account_request("SRC-G1"),
    ]
    migration = ok(start(api, admin_token, tenant, body))["locator"]
    jobs.drain()

    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["completedAccounts"], done["failedAccounts"]) == ("failed", 1, 1)
    assert events_of_type(api, admin_token, tenant, "migration.fail") == [{"migrationLocator": migration}]
    (failure,) = fetch(api, admin_token, tenant, migration, "/failures/list")["items"]
    assert failure["accountOriginalId"] == "SRC-B1" and "accountError" not in failure
    assert set(failure["policies"]) == {"SRC-B1-p2", "SRC-B1-p3"}
    assert failure["policies"]["SRC-B1-p2"]["originalId"] == "SRC-B1-p2"
    messages = [m for item in failure["policies"]["SRC-B1-p2"]["errors"]["validationItems"] for m in item["errors"]]
    assert messages == ["productName: 'Motorbike' is not a configured product"]
    (reconcile,) = [m for item in failure["policies"]["SRC-B1-p3"]["errors"]["validationItems"] for m in item["errors"]]
    # 12.00 a month over the issuance's twelve months is 144.00; the items add up to 143.99
    assert "add up to 143.99" in reconcile and "to 144.00" in reconcile
    state = fetch(api, admin_token, tenant, migration, f"/accounts/{failure['accountLocator']}")
    assert (state["accountMigrationState"], state["errorItems"], state["totalItems"]) == ("failed", 2, 4)

    assert_error(
        call(api, "GET", f"/policy/{tenant}/accounts/{failure['accountLocator']}", admin_token),
        404,
        "account.not_found",
    )
    assert [a["data"]["firstName"] for a in _accounts(api, admin_token, tenant)] == ["Ada"]  # SRC-G1's alone
    assert_error(
        call(
            api, "GET", migrations(tenant, f"/{migration}/accounts/{failure['accountLocator']}/mappings"), admin_token
        ),
        404,
        "migrationAccount.not_found",
    )


def test_validation_of_the_account_and_of_element_data(api, admin_token, tenant, jobs):
    wrong_vin = auto_policy("SRC-V2-p1")
    wrong_vin["terms"][0]["transactions"][0]["segment"]["rootElement"]["elements"][0]["data"]["vin"] = "short"
    body = [
        account_request("SRC-V1", lastName="X"),
        {
            **account_request("SRC-V3"),
            "accountData": {**account_request("SRC-V3")["accountData"], "accountType": "AlienAccount"},
        },
        account_request("SRC-V2", policies=[wrong_vin]),
    ]
    migration = ok(start(api, admin_token, tenant, body))["locator"]
    jobs.drain()
    failed = {f["accountOriginalId"]: f for f in fetch(api, admin_token, tenant, migration, "/failures/list")["items"]}
    assert set(failed) == {"SRC-V1", "SRC-V2", "SRC-V3"}
    account_errors = [
        message for item in failed["SRC-V1"]["accountError"]["errors"]["validationItems"] for message in item["errors"]
    ]
    assert any("lastName" in message for message in account_errors)
    assert "AlienAccount" in str(failed["SRC-V3"]["accountError"])
    assert "vin" in str(failed["SRC-V2"]["policies"]["SRC-V2-p1"])
    assert _accounts(api, admin_token, tenant) == []


def test_pause_lets_nothing_new_start_resume_continues_and_wrong_states_are_409(api, admin_token, tenant, jobs):
    migration = ok(start(api, admin_token, tenant, [account_request("SRC-P1"), account_request("SRC-P2")]))["locator"]
    assert_error(control(api, admin_token, tenant, migration, "resume"), 409, "migration.invalid_state")
    paused = control(api, admin_token, tenant, migration, "pause")
    assert paused.status_code in (200, 204), paused.body
    assert_error(control(api, admin_token, tenant, migration, "pause"), 409, "migration.invalid_state")
    jobs.drain()
    assert fetch(api, admin_token, tenant, migration)["migrationState"] == "paused"
    states = fetch(api, admin_token, tenant, migration, "/accounts/list")["items"]
    assert [s["accountMigrationState"] for s in states] == ["pending", "pending"]
    assert _accounts(api, admin_token, tenant) == []

    resumed = control(api, admin_token, tenant, migration, "resume")
    assert resumed.status_code in (200, 204), resumed.body
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["processedAccounts"], done["completedAccounts"]) == ("finished", 2, 2)
    assert len(_accounts(api, admin_token, tenant)) == 2
    assert_error(control(api, admin_token, tenant, migration, "pause"), 409, "migration.invalid_state")
    assert [len(events_of_type(api, admin_token, tenant, f"migration.{kind}")) for kind in ("pause", "resume")] == [
        1,
        1,
    ]


def test_a_failed_policy_replaced_by_patch_is_processed_again(api, admin_token, tenant, jobs):
    body = [account_request("SRC-F1", policies=[auto_policy("SRC-F1-p1", productName="Motorbike")])]
    migration = ok(start(api, admin_token, tenant, body))["locator"]
    jobs.drain()
    (failure,) = fetch(api, admin_token, tenant, migration, "/failures/list")["items"]
    patch = {
        "accountLocator": failure["accountLocator"],
        "defaultCreatedBy": CREATED_BY,
        "policies": {"SRC-F1-p1": auto_policy("SRC-F1-p1")},
    }
    answered = ok(call(api, "PATCH", migrations(tenant, f"/{migration}"), admin_token, patch))
    assert answered["accountLocator"] == failure["accountLocator"] and answered["policies"] == {}
    assert events_of_type(api, admin_token, tenant, "migration.patch") == [{"migrationLocator": migration}]
    assert_error(
        call(api, "PATCH", migrations(tenant, f"/{migration}"), admin_token, patch), 409, "migrationAccount.not_failed"
    )
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["completedAccounts"], done["failedAccounts"]) == ("finished", 1, 0)
    assert fetch(api, admin_token, tenant, migration, "/failures/list")["items"] == []
    assert len(_policies_of(api, admin_token, tenant, failure["accountLocator"])) == 1


@pytest.mark.parametrize(
    "error",
    [RuntimeError("worker killed"), codes.CONCURRENT_MODIFICATION("changed meanwhile")],
    ids=["a system error", "what it changes changed meanwhile"],
)
def test_a_system_error_leaves_the_account_in_error_and_recover_completes_it_once(
    api, admin_token, tenant, jobs, monkeypatch, error
):
    real = service.policies.add_migrated_policy
    calls = []

    def crash_after_the_pending_records(ctx, uow, *args, **kwargs):
        """The worker dies (or a record the account changes changed) between the policy's pending records and
        the account's final write."""
        real(ctx, uow, *args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            raise error

    monkeypatch.setattr(service.policies, "add_migrated_policy", crash_after_the_pending_records)
    migration = ok(start(api, admin_token, tenant, [account_request("SRC-E1")]))["locator"]
    jobs.drain()
    errored = fetch(api, admin_token, tenant, migration)
    assert (errored["migrationState"], errored["errorAccounts"]) == ("error", 1)
    assert events_of_type(api, admin_token, tenant, "migration.error") == [{"migrationLocator": migration}]
    assert _accounts(api, admin_token, tenant) == []

    assert control(api, admin_token, tenant, migration, "recover").status_code in (200, 204)
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["processedAccounts"], done["errorAccounts"], done["completedAccounts"]) == (
        "finished",
        1,
        0,
        1,
    )
    mapped = account_of(api, admin_token, tenant, migration, "SRC-E1")
    (policy,) = _policies_of(api, admin_token, tenant, mapped["accountLocator"])
    assert policy["locator"] in mapped["policies"]
    issued = ok(
        call(api, "GET", f"/policy/{tenant}/policies/{policy['locator']}/issuedTransactions/list", admin_token)
    )["items"]
    assert len(issued) == 2  # the rerun rewrote the pending records: none twice
    assert_error(control(api, admin_token, tenant, migration, "recover"), 409, "migration.invalid_state")


def test_a_worker_killed_after_the_last_accounts_commit_ends_the_migration_when_its_message_comes_back(
    api, admin_token, tenant, jobs, monkeypatch
):
    """The last account committed, then its worker died before the migration's end move: SQS delivers the
    message again, and the rerun, which finds the account completed, ends the migration (once)."""
    real = service._end_if_done
    killed: list[str] = []

    def killed_after_the_commit(ctx, locator):
        if not killed:
            killed.append(locator)
            raise RuntimeError("worker killed")
        return real(ctx, locator)

    monkeypatch.setattr(service, "_end_if_done", killed_after_the_commit)
    migration = ok(start(api, admin_token, tenant, [account_request("SRC-K1")]))["locator"]
    with pytest.raises(RuntimeError, match="worker killed"):
        jobs.drain()
    stuck = fetch(api, admin_token, tenant, migration)
    assert (stuck["migrationState"], stuck["processedAccounts"], stuck["completedAccounts"]) == ("processing", 1, 1)
    (message,) = [sent for sent in jobs.sent if sent.job_type == "migration.account"]
    jobs.send(message.model_dump_json())  # delivered again, as SQS does a message its worker did not delete
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["processedAccounts"], done["completedAccounts"]) == ("finished", 1, 1)
    assert events_of_type(api, admin_token, tenant, "migration.finish") == [{"migrationLocator": migration}]
    assert len(_accounts(api, admin_token, tenant)) == 1


def test_dynamodb_calls_per_account_are_flat_batched_and_few(api, admin_token, tenant, jobs, ddb_calls):
    """One account with a policy of two transactions: one read (the migration, the account's state, its job's item,
    the deployment pointer), its final write holding its pending records (the policy's first transaction, its
    segments), its state (no `processing` write before it) and its job's end, the number counters, the end check;
    the new account's billing roots are not read (they are new)."""
    counted = []
    for size, prefix in ((1, "SRC-C"), (4, "SRC-D")):
        ok(start(api, admin_token, tenant, [account_request(f"{prefix}{n}") for n in range(size)]))
        jobs.drain(job_types=frozenset({"migration.run"}))
        ddb_calls.clear()
        jobs.drain(job_types=frozenset({"migration.account"}))
        counted.append(len(ddb_calls) / size)
        # each account: its final write (with its state); the migration's end once
        assert ddb_calls.count("TransactWriteItems") == size + 1
        # the job's item is read with the migration and the account's state (with the deployment pointer), and
        # finished in the account's final write: no GetItem or status UpdateItem of it; the end check's GetItem
        assert ddb_calls.count("GetItem") == size and ddb_calls.count("BatchGetItem") == size
    one, four = counted
    assert one <= 6 and four <= one  # was 12, 10, 7: the job framework's three calls, the pointer's GetItem, the
    # `processing` write
