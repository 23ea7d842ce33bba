"""Who may call at all: every way a credential fails answers 401 with the error body."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.core.clock import isoformat
from tests.api.identity.support import assert_error, sign_in, user_with_password, whoami
from tests.builders import new_user
from tests.support.api import call, ok


def named_token(api, owner_token, owner_locator, clock, **overrides):
    body = {
        "name": "short-lived",
        "expiresAt": isoformat(clock.now() + timedelta(hours=1)),
        "permissions": ["users.custom"],
        "tenants": [],
        **overrides,
    }
    return ok(call(api, "POST", f"/auth/users/{owner_locator}/tokens", owner_token, body))


@pytest.mark.parametrize(
    "headers, code",
    [
        ({}, "auth.token_missing"),
        ({"Authorization": ""}, "auth.token_missing"),
        ({"Authorization": "Basic YWRtaW46YWRtaW4="}, "auth.token_invalid"),
        ({"Authorization": "Bearer"}, "auth.token_invalid"),
        ({"Authorization": "Bearer    "}, "auth.token_invalid"),
        ({"Authorization": "Bearer not-a-token"}, "auth.token_invalid"),
        ({"Authorization": "Bearer pas.00000000-0000-0000-0000-000000000001.unknown-secret"}, "auth.token_invalid"),
        ({"Authorization": "Bearer " + "pas." + "x" * 300}, "auth.token_invalid"),
    ],
)
def test_missing_malformed_or_unknown_credentials(api, headers, code):
    response = api.http.get("/auth/users/whoami", headers=headers)
    assert_error(response, 401, code)


def test_an_unknown_secret_for_an_existing_user_is_refused(api):
    locator, token = new_user([], [])
    forged = token.rsplit(".", 1)[0] + ".forged-secret"
    assert_error(whoami(api, forged), 401, "auth.token_invalid")


def test_a_token_presented_with_another_users_locator_is_refused(api):
    _, token = new_user([], [])
    other, _ = new_user([], [])
    _, _, secret = token.split(".", 2)
    assert_error(whoami(api, f"pas.{other}.{secret}"), 401, "auth.token_invalid")


def test_a_named_token_expires_at_its_expiry_time(api, clock):
    locator, token = new_user([], [])
    short = named_token(api, token, locator, clock)
    clock.advance(minutes=59)
    ok(whoami(api, short))
    clock.advance(minutes=1)
    assert_error(whoami(api, short), 401, "auth.token_expired")
    ok(whoami(api, token))


def test_a_deleted_named_token_is_refused(api, clock):
    locator, token = new_user([], [])
    short = named_token(api, token, locator, clock)
    ok(whoami(api, short))
    assert call(api, "DELETE", "/auth/users/tokens/short-lived", token).status_code == 200
    assert_error(whoami(api, short), 401, "auth.token_invalid")


def test_tokens_of_a_deleted_user_are_refused(api, admin_token, clock, tenant):
    locator, name = user_with_password([tenant])
    session = ok(sign_in(api, name))["access_token"]
    named = named_token(api, session, locator, clock)
    assert call(api, "DELETE", f"/auth/users/{locator}", admin_token).status_code == 200
    for token in (session, named):
        assert_error(whoami(api, token), 401, "auth.token_invalid")
