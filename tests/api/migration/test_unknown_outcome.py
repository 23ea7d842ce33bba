"""An account's commit that times out (the data store did not answer: its outcome unknown) is a system error,
never a validation failure: the account is `error` for recover when the commit did not happen, and completed,
counted once, when it did."""

from __future__ import annotations

import pytest

from chalicelib.core import codes
from chalicelib.storage import table
from tests.api.migration.support import account_of, account_request, control, fetch, start
from tests.support.api import call, ok


def _timing_out(monkeypatch, *, applied: bool) -> list[int]:
    """The first write holding an account's mappings (its commit) raises what a timeout raises (storage/table.py:
    the data store did not answer), after DynamoDB applied it (`applied`) or before."""
    gateway = type(table.gateway())
    real = gateway.transact
    timed_out: list[int] = []

    def transact(self, scope, ops):
        commit = any(op.params.get("Item", {}).get("entity", {}).get("S") == "migrationMapping" for op in ops)
        if commit and not timed_out:
            timed_out.append(len(ops))
            if applied:
                real(self, scope, ops)
            raise codes.SERVICE_UNAVAILABLE("The data store did not answer in time; retry shortly")
        return real(self, scope, ops)

    monkeypatch.setattr(gateway, "transact", transact)
    return timed_out


def _owned(api, token, tenant):
    return ok(call(api, "GET", f"/policy/{tenant}/accounts/list?count=100", token))["items"]


def test_a_commit_that_timed_out_without_committing_leaves_the_account_in_error_for_recover(
    api, admin_token, tenant, jobs, monkeypatch
):
    timed_out = _timing_out(monkeypatch, applied=False)
    migration = ok(start(api, admin_token, tenant, [account_request("SRC-T1")]))["locator"]
    jobs.drain()
    assert timed_out
    errored = fetch(api, admin_token, tenant, migration)
    assert (errored["migrationState"], errored["errorAccounts"], errored["failedAccounts"]) == ("error", 1, 0)
    assert fetch(api, admin_token, tenant, migration, "/failures/list")["items"] == []  # no validation failure
    (state,) = fetch(api, admin_token, tenant, migration, "/accounts/list")["items"]
    assert state["accountMigrationState"] == "error"
    assert _owned(api, admin_token, tenant) == []

    assert control(api, admin_token, tenant, migration, "recover").status_code in (200, 204)
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["processedAccounts"], done["completedAccounts"], done["errorAccounts"]) == (
        "finished",
        1,
        1,
        0,
    )
    assert [a["locator"] for a in _owned(api, admin_token, tenant)] == [
        account_of(api, admin_token, tenant, migration, "SRC-T1")["accountLocator"]
    ]


@pytest.mark.parametrize("accounts", [1, 2], ids=["the last account", "an account before the last"])
def test_a_commit_that_timed_out_after_committing_is_the_completed_account_counted_once(
    api, admin_token, tenant, jobs, monkeypatch, accounts
):
    timed_out = _timing_out(monkeypatch, applied=True)
    migration = ok(start(api, admin_token, tenant, [account_request(f"SRC-U{n}") for n in range(accounts)]))["locator"]
    jobs.drain()
    assert timed_out
    done = fetch(api, admin_token, tenant, migration)
    assert (
        done["migrationState"],
        done["processedAccounts"],
        done["completedAccounts"],
        done["errorAccounts"],
        done["failedAccounts"],
    ) == ("finished", accounts, accounts, 0, 0)
    states = fetch(api, admin_token, tenant, migration, "/accounts/list")["items"]
    assert {state["accountMigrationState"] for state in states} == {"completed"}
    assert len(_owned(api, admin_token, tenant)) == accounts
