"""`X-Idempotency-Key` on identity routes: a replay is bound to the credential that made the first request,
and an answer that carries a secret (a new token) is answered once and never kept."""

from __future__ import annotations

from tests.api.identity.support import (
    PASSWORD,
    assert_error,
    events_of,
    role_body,
    sign_in,
    token_body,
    user_with_password,
)
from tests.builders import new_role
from tests.support.api import call, ok


def signed_in_user(api, tenant: str, permissions: list[str]) -> tuple[str, str]:
    """A user holding `permissions` on `tenant`, and a session token of it: (locator, session)."""
    locator, name = user_with_password([tenant], [new_role(permissions)])
    return locator, ok(sign_in(api, name, PASSWORD))["access_token"]


def guard_of(user_locator: str, operation: str, key: str) -> dict:
    from chalicelib.storage import keys, table

    item = table.gateway().get(
        keys.SYSTEM_SCOPE, keys.idempotency_guard(keys.SYSTEM_SCOPE, user_locator, operation, key)
    )
    assert item is not None
    return item


def test_a_narrower_token_of_the_same_user_does_not_get_the_sessions_answer(api, clock, tenant):
    """The reported path: the session creates a wide token with a key, a narrow token of the same user
    replays that key and body."""
    _, session = signed_in_user(api, tenant, ["users.token", "accounts.read"])
    narrow = ok(
        call(
            api,
            "POST",
            "/auth/users/tokens",
            session,
            token_body(clock, name="narrow", permissions=["users.token"], tenants=[tenant]),
        )
    )
    key = {"X-Idempotency-Key": "wide-token"}
    wide_body = token_body(clock, name="wide", permissions=["users.token", "accounts.read"], tenants=[tenant])
    wide = ok(call(api, "POST", "/auth/users/tokens", session, wide_body, headers=key))

    replay = call(api, "POST", "/auth/users/tokens", narrow, wide_body, headers=key)

    assert_error(replay, 409, "idempotency.other_credential")
    assert wide.encode() not in replay.body
    assert [t["name"] for t in ok(call(api, "GET", "/auth/users/tokens", session))] == ["narrow", "wide"]


def test_another_credential_replaying_a_key_gets_409_not_the_stored_answer(api, tenant, clock):
    _, session = signed_in_user(api, tenant, ["roles.add", "accounts.read", "users.token"])
    other = ok(
        call(
            api,
            "POST",
            "/auth/users/tokens",
            session,
            token_body(clock, name="other", permissions=["roles.add", "accounts.read"], tenants=[tenant]),
        )
    )
    key = {"X-Idempotency-Key": "one-role"}
    body = role_body()
    first = call(api, "POST", "/auth/roles", session, body, headers=key)
    role = ok(first)

    same = call(api, "POST", "/auth/roles", session, body, headers=key)
    assert (same.status_code, same.body) == (200, first.body)
    assert events_of(same) == []
    replay = call(api, "POST", "/auth/roles", other, body, headers=key)
    assert_error(replay, 409, "idempotency.other_credential")
    assert role["locator"].encode() not in replay.body


def test_a_token_creation_is_not_replayed_and_its_token_is_not_kept(api, clock, tenant):
    locator, session = signed_in_user(api, tenant, ["users.token"])
    key = {"X-Idempotency-Key": "create-ci-token"}
    first = call(api, "POST", "/auth/users/tokens", session, token_body(clock, name="ci"), headers=key)
    token = ok(first)

    again = call(api, "POST", "/auth/users/tokens", session, token_body(clock, name="ci"), headers=key)

    body = assert_error(again, 409, "idempotency.secret_not_replayable")
    assert "'ci'" in body["message"] and locator in body["message"]
    assert token.encode() not in again.body
    guard = guard_of(locator, "create_own_token", "create-ci-token")
    assert token not in repr(guard) and token.rsplit(".", 1)[1] not in repr(guard)
    assert_error(
        call(api, "POST", "/auth/users/tokens", session, token_body(clock, name="other"), headers=key),
        409,
        "idempotency.key_reused",
    )
    assert [t["name"] for t in ok(call(api, "GET", "/auth/users/tokens", session))] == ["ci"]


def test_a_token_created_for_a_service_account_is_not_kept_either(api, admin_token, admin_locator, clock):
    from tests.api.identity.support import user_holding

    account = user_holding([], [], service_account=True)
    key = {"X-Idempotency-Key": "robot-token"}
    path = f"/auth/users/{account}/tokens"
    token = ok(call(api, "POST", path, admin_token, token_body(clock, name="robot"), headers=key))

    body = assert_error(
        call(api, "POST", path, admin_token, token_body(clock, name="robot"), headers=key),
        409,
        "idempotency.secret_not_replayable",
    )
    assert "'robot'" in body["message"] and account in body["message"]
    assert token not in repr(guard_of(admin_locator, "create_user_token", "robot-token"))


def test_an_empty_or_over_long_key_is_a_malformed_request_400_and_changes_nothing(api, admin_token):
    body = role_body()
    for malformed in ("", "k" * 201):
        answer = call(api, "POST", "/auth/roles", admin_token, body, headers={"X-Idempotency-Key": malformed})
        refused = assert_error(answer, 400, "idempotency.invalid_key")
        assert refused["message"] == "X-Idempotency-Key must be 1 to 200 characters"
    created = call(api, "POST", "/auth/roles", admin_token, body, headers={"X-Idempotency-Key": "k" * 200})
    assert ok(created)["name"] == body["name"]  # the refused requests created no role of this name
    assert events_of(created) != []
