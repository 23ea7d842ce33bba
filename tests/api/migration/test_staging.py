"""An account too large for one TransactWriteItems (25 policies with their brought installments, invoices and
payments): staged, then committed by one small write, all or nothing; a worker killed mid-staging leaves nothing
a client can read, and recover completes the account once."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from chalicelib.migration import repository, service
from tests.api.migration.support import (
    account_of,
    account_request,
    billed_policy,
    control,
    fetch,
    source_installment,
    source_invoice,
    source_payment,
    start,
)
from tests.support.api import assert_error, call, ok
from tests.support.configs import configured_tenant, policy_model

POLICIES = 25


def _large_account(original: str) -> dict[str, Any]:
    """25 policies, each 144.00 brought in two installments of 72.00 on the account's two invoices (June,
    settled by P1; July, 100.00 of it paid by P2), then changed (a second vehicle, billed by billing)."""
    policies = [
        billed_policy(
            f"{original}-p{n}",
            [
                source_installment(f"{original}-p{n}-I1", "INV1", 6),
                source_installment(f"{original}-p{n}-I2", "INV2", 7),
            ],
            [(1, "72.00"), (2, "72.00")],
        )
        for n in range(POLICIES)
    ]
    june = Decimal("72.00") * POLICIES
    return {
        **account_request(original, policies=policies),
        "invoices": [source_invoice("INV1", 6, "settled"), source_invoice("INV2", 7, "open")],
        "payments": [
            source_payment("P1", [("INV1", str(june))], payment_type="Card"),
            source_payment("P2", [("INV2", "100.00")], payment_type="Card"),
        ],
    }


@pytest.fixture
def tenant(api, admin_token) -> str:
    model = policy_model()
    model["payments"] = {"Card": {}}
    return configured_tenant(api, admin_token, model)


def test_a_large_account_killed_mid_staging_shows_nothing_and_recover_commits_it_once(
    api, admin_token, tenant, jobs, monkeypatch
):
    real = repository.write_chunk
    chunks: list[int] = []

    def killed_after_the_first_chunk(tenant_locator, chunk):
        chunks.append(len(chunk))
        if len(chunks) == 2:
            raise RuntimeError("worker killed")
        real(tenant_locator, chunk)

    monkeypatch.setattr(repository, "write_chunk", killed_after_the_first_chunk)
    migration = ok(start(api, admin_token, tenant, [_large_account("SRC-L1")]))["locator"]
    jobs.drain()

    errored = fetch(api, admin_token, tenant, migration)
    assert (errored["migrationState"], errored["errorAccounts"]) == ("error", 1)
    assert chunks[0] == 100  # the staged records fill more than one write
    (state,) = fetch(api, admin_token, tenant, migration, "/accounts/list")["items"]
    assert state["accountMigrationState"] == "error" and "accountLocator" not in state
    # nothing of it in any list, nor by the locator its account will have
    account = service.account_locator(migration, "SRC-L1", service.datetime.fromisoformat("2025-05-19T12:00:00Z"))
    for path in ("/policy/{t}/accounts/list", "/billing/{t}/payments/list"):
        assert ok(call(api, "GET", path.format(t=tenant), admin_token))["items"] == []
    assert_error(call(api, "GET", f"/policy/{tenant}/accounts/{account}", admin_token), 404, "account.not_found")
    assert_error(
        call(api, "GET", f"/policy/{tenant}/accounts/{account}/policies/list", admin_token), 404, "account.not_found"
    )
    assert ok(call(api, "GET", f"/billing/{tenant}/invoices/accounts/{account}/list", admin_token))["items"] == []
    assert fetch(api, admin_token, tenant, migration, "/mappings/list")["items"] == []

    assert control(api, admin_token, tenant, migration, "recover").status_code in (200, 204)
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["completedAccounts"], done["errorAccounts"]) == ("finished", 1, 0)
    mapped = account_of(api, admin_token, tenant, migration, "SRC-L1")
    assert mapped["accountLocator"] == account and len(mapped["policies"]) == POLICIES
    listed = ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}/policies/list?count=100", admin_token))
    assert sorted(p["locator"] for p in listed["items"]) == sorted(mapped["policies"])
    invoices = {
        mapped["invoices"][locator]["originalId"]: ok(
            call(api, "GET", f"/billing/{tenant}/invoices/{locator}", admin_token)
        )
        for locator in mapped["invoices"]
    }
    assert {
        original: (invoice["invoiceState"], Decimal(invoice["totalRemainingAmount"]))
        for original, invoice in invoices.items()
    } == {"INV1": ("settled", Decimal(0)), "INV2": ("open", Decimal("72.00") * POLICIES - Decimal("100.00"))}
    payments = ok(call(api, "GET", f"/billing/{tenant}/payments/list?count=100", admin_token))["items"]
    assert sorted(Decimal(p["amount"]) for p in payments) == [Decimal("100.00"), Decimal("72.00") * POLICIES]
    # each policy's history once (the rerun rewrote what the killed one staged), and its change billed by the
    # billing jobs that followed the commit
    some = sorted(mapped["policies"])[0]
    issued = ok(call(api, "GET", f"/policy/{tenant}/policies/{some}/issuedTransactions/list", admin_token))["items"]
    assert len(issued) == 2
    lattices = ok(call(api, "GET", f"/billing/{tenant}/installmentLattices/policies/{some}/list", admin_token))
    assert len(lattices["items"]) == 2
    after = fetch(api, admin_token, tenant, migration, f"/accounts/{account}")
    assert after["accountMigrationState"] == "completed" and after["accountLocator"] == account
    events = ok(call(api, "GET", f"/event/{tenant}/events/list?type=billing.payment.post&pageSize=100", admin_token))[
        "events"
    ]
    assert len(events) == 2  # the account's events followed its commit, once


def test_a_large_account_killed_after_its_commit_finishes_what_follows_when_its_message_comes_back(
    api, admin_token, tenant, jobs, monkeypatch
):
    """The worker dies in the writes that follow the staged account's commit: the account stays committed (not
    `error`, counted once), and the message SQS delivers again writes what follows, once."""
    real = repository.follow_up_done
    written: list[int] = []

    def killed_in_the_follow_up(tenant_locator, migration_locator, account_locator, done, *, last):
        written.append(done)
        if len(written) == 1:
            raise RuntimeError("worker killed")
        return real(tenant_locator, migration_locator, account_locator, done, last=last)

    monkeypatch.setattr(repository, "follow_up_done", killed_in_the_follow_up)
    migration = ok(start(api, admin_token, tenant, [_large_account("SRC-L2")]))["locator"]
    with pytest.raises(RuntimeError, match="worker killed"):
        jobs.drain()
    stuck = fetch(api, admin_token, tenant, migration)
    assert (
        stuck["migrationState"],
        stuck["processedAccounts"],
        stuck["completedAccounts"],
        stuck["errorAccounts"],
    ) == (
        "processing",
        1,
        1,
        0,
    )
    (message,) = [sent for sent in jobs.sent if sent.job_type == "migration.account"]
    jobs.send(message.model_dump_json())  # delivered again, as SQS does a message its worker did not delete
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["processedAccounts"], done["completedAccounts"], done["errorAccounts"]) == (
        "finished",
        1,
        1,
        0,
    )
    mapped = account_of(api, admin_token, tenant, migration, "SRC-L2")
    some = sorted(mapped["policies"])[0]
    lattices = ok(call(api, "GET", f"/billing/{tenant}/installmentLattices/policies/{some}/list", admin_token))
    assert len(lattices["items"]) == 2  # the change's, by the billing job that followed the commit
    events = ok(call(api, "GET", f"/event/{tenant}/events/list?type=billing.payment.post&pageSize=100", admin_token))[
        "events"
    ]
    assert len(events) == 2
