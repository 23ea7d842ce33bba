"""POST /auth/token: the OAuth2 password grant, form-encoded or JSON."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.api.identity.support import PASSWORD, assert_error, assert_event, user_with_password, whoami
from tests.builders import unique_name
from tests.support.api import call, ok


@pytest.fixture
def member(tenant):
    return user_with_password([tenant])


def form(api, fields):
    return api.http.post(
        "/auth/token", headers={"Content-Type": "application/x-www-form-urlencoded"}, body=urlencode(fields)
    )


def test_form_encoded_password_grant_answers_a_bearer_session_token(api, member, clock):
    locator, name = member
    response = form(api, {"grant_type": "password", "username": name, "password": PASSWORD})
    body = ok(response)
    assert set(body) == {"access_token", "token_type", "expires_in"}
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 3600
    assert_event(response, "auth.session.create", locator)
    me = ok(whoami(api, body["access_token"]))
    assert me["locator"] == locator and me["userName"] == name


def test_json_password_grant_and_the_session_expiring_after_expires_in(api, member, clock):
    locator, name = member
    body = ok(call(api, "POST", "/auth/token", body={"grant_type": "password", "username": name, "password": PASSWORD}))
    clock.advance(seconds=body["expires_in"] - 1)
    ok(whoami(api, body["access_token"]))
    clock.advance(seconds=1)
    assert_error(whoami(api, body["access_token"]), 401, "auth.token_expired")


def test_wrong_password_and_unknown_user_fail_alike(api, member):
    _, name = member
    wrong = form(api, {"grant_type": "password", "username": name, "password": "not it"})
    unknown = form(api, {"grant_type": "password", "username": unique_name(), "password": PASSWORD})
    first, second = assert_error(wrong, 401, "auth.sign_in_failed"), assert_error(unknown, 401, "auth.sign_in_failed")
    assert first["message"] == second["message"]
    assert PASSWORD not in unknown.body.decode()


def test_a_user_without_a_password_cannot_sign_in(api, admin_token):
    user = ok(
        call(
            api,
            "POST",
            "/auth/users?enableUser=true",
            admin_token,
            {"userName": unique_name(), "firstName": "No", "lastName": "Password"},
        )
    )
    assert_error(
        form(api, {"grant_type": "password", "username": user["userName"], "password": ""}), 401, "auth.sign_in_failed"
    )


@pytest.mark.parametrize(
    "fields, code",
    [
        (
            {"grant_type": "client_credentials", "username": "a@example.com", "password": "x"},
            "auth.unsupported_grant_type",
        ),
        ({"username": "a@example.com", "password": "x"}, "request.invalid"),
    ],
)
def test_bad_grants_answer_400(api, fields, code):
    assert_error(form(api, fields), 400, code)
    assert_error(call(api, "POST", "/auth/token", body=fields), 400, code)


def test_malformed_json_and_oversized_bodies(api):
    assert_error(call(api, "POST", "/auth/token", raw=b'{"grant_type": '), 400, "request.malformed_json")
    assert_error(call(api, "POST", "/auth/token", raw=b"[1, 2]"), 400, "request.invalid")
    huge = b'{"grant_type": "password", "username": "' + b"a" * (1024 * 1024) + b'"}'
    assert_error(call(api, "POST", "/auth/token", raw=huge), 413, "request.too_large")
