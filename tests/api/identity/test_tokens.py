"""The eight authentication-token endpoints: named tokens, revocation, credential removal."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.core.clock import isoformat
from tests.api.identity.support import (
    assert_error,
    assert_event,
    sign_in,
    token_body,
    user_with_password,
    whoami,
)
from tests.builders import new_user
from tests.support.api import call, ok

TOKEN_FIELDS = {"name", "expiresAt", "createdAt", "permissions", "tenants"}


def tokens_of(api, token, locator=None):
    path = f"/auth/users/{locator}/tokens" if locator else "/auth/users/tokens"
    return ok(call(api, "GET", path, token))


# --- POST /auth/users/tokens ---------------------------------------------------------------------


def test_create_own_token_answers_the_token_string_once(api, clock, tenant):
    locator, token = new_user(["users.token", "accounts.read"], [tenant])
    body = token_body(clock, name="ci", permissions=["accounts.read", "users.custom"], tenants=[tenant])
    response = call(api, "POST", "/auth/users/tokens", token, body)
    created = ok(response)
    assert isinstance(created, str) and created.startswith("pas.")
    event = assert_event(response, "auth.token.create", locator)
    assert event["data"] == {"userLocator": locator, "name": "ci"}
    assert ok(whoami(api, created))["locator"] == locator
    listed = {t["name"]: t for t in tokens_of(api, token)}
    assert listed["ci"] == {
        "name": "ci",
        "expiresAt": body["expiresAt"],
        "createdAt": isoformat(clock.now()),
        "permissions": ["accounts.read", "users.custom"],
        "tenants": [tenant],
    }
    assert created not in str(listed)


def test_create_own_token_needs_users_write_or_users_token(api, clock):
    _, token = new_user(["users.read"], [])
    assert_error(call(api, "POST", "/auth/users/tokens", token, token_body(clock)), 403, "auth.permission_denied")


def test_a_duplicate_token_name_answers_409_and_keeps_the_first(api, clock):
    locator, token = new_user([], [])
    first = ok(call(api, "POST", f"/auth/users/{locator}/tokens", token, token_body(clock, name="dup")))
    later = token_body(clock, name="dup", expiresAt=isoformat(clock.now() + timedelta(days=9)))
    assert_error(call(api, "POST", f"/auth/users/{locator}/tokens", token, later), 409, "token.name_taken")
    assert [t["expiresAt"] for t in tokens_of(api, token) if t["name"] == "dup"] == [token_body(clock)["expiresAt"]]
    ok(whoami(api, first))


def test_a_user_holds_at_most_ten_named_tokens(api, clock):
    locator, token = new_user([], [])  # the builder's token is the first
    for i in range(9):
        ok(call(api, "POST", f"/auth/users/{locator}/tokens", token, token_body(clock, name=f"t{i}")))
    eleventh = call(api, "POST", f"/auth/users/{locator}/tokens", token, token_body(clock, name="eleventh"))
    assert_error(eleventh, 409, "token.limit_reached")
    assert len(tokens_of(api, token)) == 10
    assert call(api, "DELETE", "/auth/users/tokens/t0", token).status_code == 200
    ok(call(api, "POST", f"/auth/users/{locator}/tokens", token, token_body(clock, name="eleventh")))


def test_a_token_cannot_carry_more_than_its_owner_holds(api, clock, tenant):
    from tests.builders import new_tenant

    locator, token = new_user(["accounts.read"], [tenant])
    path = f"/auth/users/{locator}/tokens"
    for permissions in (["accounts.write"], ["accounts.*"], ["*.*"]):
        assert_error(
            call(api, "POST", path, token, token_body(clock, permissions=permissions)), 403, "token.permission_not_held"
        )
    for tenants in ([new_tenant()], ["any"]):
        assert_error(call(api, "POST", path, token, token_body(clock, tenants=tenants)), 403, "token.tenant_not_held")
    assert [t["name"] for t in tokens_of(api, token)] == ["test"]


@pytest.mark.parametrize(
    "change, field",
    [
        ({"permissions": ["*.read"]}, "permissions[0]"),
        ({"permissions": ["users.custom", "nodot"]}, "permissions[1]"),
        ({"permissions": "users.custom"}, "permissions"),
        ({"tenants": None}, "tenants"),
        ({"tenants": ["not-a-tenant"]}, "tenants.0"),
        ({"expiresAt": "2026-01-15T09:30:00Z"}, "expiresAt"),
        ({"expiresAt": "tomorrow"}, "expiresAt"),
        ({"name": ""}, "name"),
        ({"name": "a/b"}, "name"),
        ({"createdAt": "2026-01-01T00:00:00Z"}, "createdAt"),
        ({"tokenHash": "abc"}, "tokenHash"),
    ],
)
def test_invalid_token_requests_answer_400(api, clock, change, field):
    locator, token = new_user([], [])
    body = assert_error(
        call(api, "POST", f"/auth/users/{locator}/tokens", token, token_body(clock, **change)),
        400,
        "role.invalid_permission" if field.startswith("permissions[") else "request.invalid",
    )
    assert field in {f["field"] for f in body["fieldErrors"]}


def test_an_expiry_without_offset_is_utc(api, clock):
    locator, token = new_user([], [])
    naive = (clock.now() + timedelta(hours=2)).replace(tzinfo=None).isoformat()
    created = ok(call(api, "POST", f"/auth/users/{locator}/tokens", token, token_body(clock, expiresAt=naive)))
    listed = [t for t in tokens_of(api, token) if t["name"] == "api-token"]
    assert [t["expiresAt"] for t in listed] == [isoformat(clock.now() + timedelta(hours=2))]
    clock.advance(hours=2)
    assert_error(whoami(api, created), 401, "auth.token_expired")


def test_a_missing_field_answers_400(api, clock):
    locator, token = new_user([], [])
    body = token_body(clock)
    del body["expiresAt"]
    assert_error(call(api, "POST", f"/auth/users/{locator}/tokens", token, body), 400, "request.invalid")


# --- POST /auth/users/{locator}/tokens -----------------------------------------------------------


def test_a_user_creates_tokens_for_itself_only(api, clock):
    locator, token = new_user([], [])
    other, _ = new_user(["users.read"], [])
    response = call(api, "POST", f"/auth/users/{locator}/tokens", token, token_body(clock))
    assert ok(whoami(api, ok(response)))["locator"] == locator
    assert_event(response, "auth.token.create", locator)
    assert_error(
        call(api, "POST", f"/auth/users/{other}/tokens", token, token_body(clock)), 403, "auth.permission_denied"
    )


# --- GET /auth/users/tokens and /auth/users/{locator}/tokens ------------------------------------


def test_list_own_tokens(api, clock):
    _, token = new_user([], [])
    listed = tokens_of(api, token)
    assert [set(t) for t in listed] == [TOKEN_FIELDS]
    assert listed[0]["name"] == "test"


def test_list_tokens_of_a_user(api, clock):
    locator, token = new_user([], [])
    _, reader = new_user(["users.read"], [])
    _, stranger = new_user([], [])
    assert tokens_of(api, token, locator) == tokens_of(api, reader, locator)
    assert_error(call(api, "GET", f"/auth/users/{locator}/tokens", stranger), 403, "auth.permission_denied")
    assert_error(
        call(api, "GET", "/auth/users/00000000-0000-4000-8000-000000000000/tokens", reader), 404, "user.not_found"
    )


# --- DELETE /auth/users/tokens/{tokenOrName} ------------------------------------------------------


def test_delete_own_token_by_name_or_by_value(api, clock):
    locator, token = new_user([], [])
    by_name = ok(call(api, "POST", f"/auth/users/{locator}/tokens", token, token_body(clock, name="by-name")))
    by_value = ok(call(api, "POST", f"/auth/users/{locator}/tokens", token, token_body(clock, name="by-value")))
    response = call(api, "DELETE", "/auth/users/tokens/by-name", token)
    assert response.status_code == 200 and response.body == b""
    assert assert_event(response, "auth.token.delete", locator)["data"] == {"userLocator": locator, "name": "by-name"}
    assert call(api, "DELETE", f"/auth/users/tokens/{by_value}", token).status_code == 200
    for gone in (by_name, by_value):
        assert_error(whoami(api, gone), 401, "auth.token_invalid")
    assert [t["name"] for t in tokens_of(api, token)] == ["test"]


def test_delete_an_unknown_or_foreign_token_answers_404(api):
    _, token = new_user([], [])
    _, foreign = new_user([], [])
    assert_error(call(api, "DELETE", "/auth/users/tokens/no-such-token", token), 404, "token.not_found")
    assert_error(call(api, "DELETE", f"/auth/users/tokens/{foreign}", token), 404, "token.not_found")
    ok(whoami(api, foreign))


# --- DELETE /auth/users/{locator}/tokens/{tokenOrName} -------------------------------------------


def test_delete_a_users_token(api):
    locator, token = new_user([], [])
    _, writer = new_user(["users.write"], [])
    _, stranger = new_user([], [])
    assert_error(call(api, "DELETE", f"/auth/users/{locator}/tokens/test", stranger), 403, "auth.permission_denied")
    assert_error(call(api, "DELETE", f"/auth/users/{locator}/tokens/other", writer), 404, "token.not_found")
    response = call(api, "DELETE", f"/auth/users/{locator}/tokens/test", writer)
    assert response.status_code == 200
    assert assert_event(response, "auth.token.delete", ok(whoami(api, writer))["locator"])["data"] == {
        "userLocator": locator,
        "name": "test",
    }
    assert_error(whoami(api, token), 401, "auth.token_invalid")


def test_a_user_deletes_its_own_token_through_its_locator(api):
    locator, token = new_user([], [])
    assert call(api, "DELETE", f"/auth/users/{locator}/tokens/{token}", token).status_code == 200
    assert_error(whoami(api, token), 401, "auth.token_invalid")


# --- POST /auth/users/{locator}/revoke -----------------------------------------------------------


def test_revoke_ends_signed_in_sessions_but_not_named_tokens(api, clock, tenant):
    locator, name = user_with_password([tenant])
    session = ok(sign_in(api, name))["access_token"]
    named = ok(call(api, "POST", f"/auth/users/{locator}/tokens", session, token_body(clock, name="kept")))
    response = call(api, "POST", f"/auth/users/{locator}/revoke", session)
    assert response.status_code == 200
    assert_event(response, "auth.user.revoke", locator)
    assert_error(whoami(api, session), 401, "auth.token_revoked")
    ok(whoami(api, named))
    fresh = ok(sign_in(api, name))["access_token"]
    ok(whoami(api, fresh))


def test_revoke_needs_permission_for_other_users(api, admin_token):
    locator, _ = new_user([], [])
    _, stranger = new_user([], [])
    _, revoker = new_user(["users.revoke"], [])
    assert_error(call(api, "POST", f"/auth/users/{locator}/revoke", stranger), 403, "auth.permission_denied")
    assert call(api, "POST", f"/auth/users/{locator}/revoke", revoker).status_code == 200
    assert_error(
        call(api, "POST", "/auth/users/00000000-0000-4000-8000-000000000000/revoke", admin_token), 404, "user.not_found"
    )


# --- DELETE /auth/users/{locator}/credentials ----------------------------------------------------


def test_removing_credentials_ends_every_way_to_authenticate(api, admin_token, admin_locator, clock, tenant):
    locator, name = user_with_password([tenant])
    session = ok(sign_in(api, name))["access_token"]
    named = ok(call(api, "POST", f"/auth/users/{locator}/tokens", session, token_body(clock)))
    response = call(api, "DELETE", f"/auth/users/{locator}/credentials", admin_token)
    assert response.status_code == 200
    assert assert_event(response, "auth.user.credentials.delete", admin_locator)["data"] == {"userLocator": locator}
    for token in (session, named):
        assert_error(whoami(api, token), 401, "auth.token_invalid" if token == named else "auth.token_revoked")
    assert_error(sign_in(api, name), 401, "auth.sign_in_failed")
    assert tokens_of(api, admin_token, locator) == []
    assert ok(call(api, "GET", f"/auth/users/{locator}", admin_token))["userName"] == name


def test_credentials_removal_is_self_service_or_users_write(api):
    locator, token = new_user([], [])
    other, other_token = new_user([], [])
    assert_error(call(api, "DELETE", f"/auth/users/{other}/credentials", token), 403, "auth.permission_denied")
    ok(whoami(api, other_token))
    assert call(api, "DELETE", f"/auth/users/{locator}/credentials", token).status_code == 200
    assert_error(whoami(api, token), 401, "auth.token_invalid")
    _, writer = new_user(["users.write"], [])
    assert_error(
        call(api, "DELETE", "/auth/users/00000000-0000-4000-8000-000000000000/credentials", writer),
        404,
        "user.not_found",
    )
