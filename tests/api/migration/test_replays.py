"""A keyed migration move whose answer was lost after it committed (a fault between the commit and the answer's
save): its retry answers as the move did (a pause void, a patch the failures it left), never 409 in progress, and
moves nothing again."""

from __future__ import annotations

from tests.api.migration.support import (
    CREATED_BY,
    account_request,
    auto_policy,
    events_of_type,
    fetch,
    migrations,
    start,
)
from tests.simulation.support import answers_lost
from tests.support.api import assert_error, call, ok


def test_a_patch_and_a_pause_whose_answers_were_lost_answer_as_they_did_and_move_once(api, admin_token, tenant, jobs):
    bad = [auto_policy(f"SRC-K1-p{n}", productName="Motorbike") for n in (1, 2)]
    migration = ok(start(api, admin_token, tenant, [account_request("SRC-K1", policies=bad)]))["locator"]
    jobs.drain()
    (failure,) = fetch(api, admin_token, tenant, migration, "/failures/list")["items"]
    patch = {
        "accountLocator": failure["accountLocator"],
        "defaultCreatedBy": CREATED_BY,
        "policies": {"SRC-K1-p1": auto_policy("SRC-K1-p1")},
    }
    path = migrations(tenant, f"/{migration}")
    with answers_lost():
        lost = call(api, "PATCH", path, admin_token, patch, headers={"X-Idempotency-Key": "patch-lost"})
    assert_error(lost, 503, "service.unavailable")

    retried = call(api, "PATCH", path, admin_token, patch, headers={"X-Idempotency-Key": "patch-lost"})

    answered = ok(retried)
    assert (answered["accountLocator"], list(answered["policies"])) == (failure["accountLocator"], ["SRC-K1-p2"])
    assert events_of_type(api, admin_token, tenant, "migration.patch") == [{"migrationLocator": migration}]
    replayed = call(api, "PATCH", path, admin_token, patch, headers={"X-Idempotency-Key": "patch-lost"})
    assert (replayed.status_code, replayed.body) == (200, retried.body)

    with answers_lost():
        lost = call(api, "PATCH", f"{path}/pause", admin_token, headers={"X-Idempotency-Key": "pause-lost"})
    assert_error(lost, 503, "service.unavailable")
    paused = call(api, "PATCH", f"{path}/pause", admin_token, headers={"X-Idempotency-Key": "pause-lost"})
    assert paused.status_code in (200, 204), paused.body
    assert fetch(api, admin_token, tenant, migration)["migrationState"] == "paused"
    assert len(events_of_type(api, admin_token, tenant, "migration.pause")) == 1
    assert_error(call(api, "PATCH", f"{path}/pause", admin_token), 409, "migration.invalid_state")


def test_a_start_whose_answer_was_lost_answers_the_migration_it_started_and_starts_one(
    api, admin_token, tenant, jobs, clock
):
    from chalicelib.runtime.jobs import reap_expired
    from chalicelib.settings import settings
    from tests.api.accounts.support import create as create_account

    body = [account_request("SRC-K3", policies=[auto_policy("SRC-K3-p1")])]
    with answers_lost():
        lost = start(api, admin_token, tenant, body, key="start-lost")
    assert_error(lost, 503, "service.unavailable")
    [started] = events_of_type(api, admin_token, tenant, "migration.start")  # it committed

    retried = ok(start(api, admin_token, tenant, body, key="start-lost"))
    assert (retried["locator"], retried["migrationState"], retried["totalAccounts"]) == (
        started["migrationLocator"],
        "submitted",
        1,
    )
    replayed = start(api, admin_token, tenant, body, key="start-lost")  # now answered from the kept answer
    assert ok(replayed) == retried
    assert_error(
        start(api, admin_token, tenant, [account_request("SRC-K4")], key="start-lost"), 409, "idempotency.key_reused"
    )
    assert jobs.messages == []  # the lost commit sent no message, and the replays start nothing
    clock.advance(seconds=settings().job_lease_seconds + 1)
    assert reap_expired(tenant, clock.now()) == 1  # the reaper sends the run's message again
    jobs.drain()
    assert fetch(api, admin_token, tenant, retried["locator"])["migrationState"] == "finished"
    assert len(events_of_type(api, admin_token, tenant, "migration.start")) == 1
    assert len(fetch(api, admin_token, tenant, retried["locator"], "/accounts/list")["items"]) == 1

    # the start for an existing account likewise
    account = create_account(api, admin_token, tenant)["locator"]
    joining = {"defaultCreatedBy": CREATED_BY, "policies": [auto_policy("SRC-K5-p1")]}
    path = migrations(tenant, f"/accounts/{account}")
    with answers_lost():
        lost = call(api, "POST", path, admin_token, joining, headers={"X-Idempotency-Key": "join-lost"})
    assert_error(lost, 503, "service.unavailable")
    again = ok(call(api, "POST", path, admin_token, joining, headers={"X-Idempotency-Key": "join-lost"}))
    starts = events_of_type(api, admin_token, tenant, "migration.start")
    assert [e["migrationLocator"] for e in starts] == [retried["locator"], again["locator"]]
    other = {**joining, "policies": [auto_policy("SRC-K6-p1")]}
    assert_error(
        call(api, "POST", path, admin_token, other, headers={"X-Idempotency-Key": "join-lost"}),
        409,
        "idempotency.key_reused",
    )
