"""Numbers of migrated accounts and policies: the run job reserves them for its slice, a block per plan and kind
(configuration/numbers.reserve_block), and each account's job takes its own from its message (no UpdateItem an
account); unique, counting up within the slice in the request's order; a rerun takes the same ones; a message
without them (resume) numbers from the counters as before."""

from __future__ import annotations

import pytest

from chalicelib.policies import service as policies
from tests.api.accounts.support import create, person
from tests.api.migration.support import account_of, account_request, auto_policy, control, fetch, start
from tests.support.api import call, ok


class _WorkerGone(BaseException):
    """The worker's process ends in the account's job (what `except Exception` does not catch)."""


def _numbers(api, token, tenant, migration, originals):
    found = []
    for original in originals:
        mapped = account_of(api, token, tenant, migration, original)
        account = ok(call(api, "GET", f"/policy/{tenant}/accounts/{mapped['accountLocator']}", token))
        held = sorted(
            ok(call(api, "GET", f"/policy/{tenant}/policies/{locator}", token))["policyNumber"]
            for locator in mapped["policies"]
        )
        found.append((account["accountNumber"], held))
    return found


def test_the_run_job_reserves_the_slices_numbers_and_the_accounts_jobs_take_theirs(
    api, admin_token, tenant, jobs, ddb_calls
):
    two = [auto_policy("SRC-N2-p1"), auto_policy("SRC-N2-p2")]
    body = [account_request("SRC-N1"), account_request("SRC-N2", policies=two), account_request("SRC-N3")]
    migration = ok(start(api, admin_token, tenant, body))["locator"]
    ddb_calls.clear()
    jobs.drain(job_types=frozenset({"migration.run"}))
    # the run job's own moves (running, finished), a block of account numbers and one of policy numbers
    assert ddb_calls.count("UpdateItem") == 2 + 2
    ddb_calls.clear()
    jobs.drain(job_types=frozenset({"migration.account"}))
    assert "UpdateItem" not in ddb_calls
    assert fetch(api, admin_token, tenant, migration)["completedAccounts"] == 3
    assert _numbers(api, admin_token, tenant, migration, ["SRC-N1", "SRC-N2", "SRC-N3"]) == [
        ("AC-A998", ["PA-000001"]),
        ("AC-A999", ["PA-000002", "PA-000003"]),
        ("AC-B000", ["PA-000004"]),
    ]
    # the counters moved past the block: an account created afterwards takes the next number
    assert create(api, admin_token, tenant, person(autoValidate=True))["accountNumber"] == "AC-B001"


def test_an_account_rerun_after_a_crash_takes_the_numbers_of_its_message(api, admin_token, tenant, jobs, monkeypatch):
    real, calls = policies.add_migrated_policy, []

    def killed_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("worker killed")
        return real(*args, **kwargs)

    monkeypatch.setattr(policies, "add_migrated_policy", killed_once)
    migration = ok(start(api, admin_token, tenant, [account_request("SRC-K1"), account_request("SRC-K2")]))["locator"]
    jobs.drain()
    assert fetch(api, admin_token, tenant, migration)["errorAccounts"] == 1
    assert control(api, admin_token, tenant, migration, "recover").status_code == 200
    jobs.drain()  # recover's message carries no numbers: the counters give the rerun's
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["completedAccounts"]) == ("finished", 2)
    (first, _), (second, _) = _numbers(api, admin_token, tenant, migration, ["SRC-K1", "SRC-K2"])
    assert second == "AC-A999" and first == "AC-B000"  # K1's reserved AC-A998 is a gap, which plans allow


def test_a_message_delivered_again_before_the_commit_takes_the_same_numbers(
    api, admin_token, tenant, jobs, monkeypatch
):
    """The worker dies in the account (before its one write); its message comes back: the same numbers."""
    real, calls = policies.add_migrated_policy, []

    def killed_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise _WorkerGone  # not caught as the account's error: the worker is gone, its message comes back
        return real(*args, **kwargs)

    monkeypatch.setattr(policies, "add_migrated_policy", killed_once)
    migration = ok(start(api, admin_token, tenant, [account_request("SRC-R1")]))["locator"]
    jobs.drain(job_types=frozenset({"migration.run"}))
    (message,) = [sent for sent in jobs.sent if sent.job_type == "migration.account"]
    with pytest.raises(_WorkerGone):
        jobs.drain()
    jobs.send(message.model_dump_json())
    jobs.drain()
    assert fetch(api, admin_token, tenant, migration)["completedAccounts"] == 1
    assert _numbers(api, admin_token, tenant, migration, ["SRC-R1"]) == [("AC-A998", ["PA-000001"])]
