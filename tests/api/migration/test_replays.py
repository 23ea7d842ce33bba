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
