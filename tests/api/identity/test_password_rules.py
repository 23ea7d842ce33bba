"""Password rules wherever a password is set: at least 10 characters, not a common password, not the
user name. The bootstrap administrator of `make run` (password `admin`) is exempt."""
from __future__ import annotations

import pytest

from tests.api.identity.support import PASSWORD, assert_error, field_names, sign_in, user_body, user_with_password
from tests.support.api import call, ok

WEAK = [
    ("a", "must be at least 10 characters long"),
    ("password123", "is one of the most common passwords"),
    ("Qwertyuiop", "is one of the most common passwords"),
]


@pytest.mark.parametrize("password, problem", WEAK)
def test_creating_a_user_with_a_weak_password_is_refused(api, admin_token, password, problem):
    body = assert_error(call(api, "POST", "/auth/users", admin_token, user_body(password=password)), 400,
                        "user.weak_password")
    assert body["fieldErrors"] == [{"field": "password", "message": problem}]


def test_the_user_name_is_no_password(api, admin_token):
    fields = user_body()
    fields["password"] = fields["userName"]
    body = assert_error(call(api, "POST", "/auth/users", admin_token, fields), 400, "user.weak_password")
    assert field_names(body) == {"password"}


@pytest.mark.parametrize("password, problem", WEAK)
def test_a_weak_reset_is_refused_and_the_old_password_stays(api, admin_token, password, problem):
    locator, name = user_with_password([])
    body = assert_error(call(api, "PATCH", f"/auth/users/{locator}/passwordreset", admin_token, password), 400,
                        "user.weak_password")
    assert body["fieldErrors"] == [{"field": "password", "message": problem}]
    ok(sign_in(api, name, PASSWORD))


def test_a_strong_password_is_accepted(api, admin_token):
    fields = user_body(password="violet kettle under 7 bridges")
    ok(call(api, "POST", "/auth/users", admin_token, fields))
    ok(sign_in(api, fields["userName"], "violet kettle under 7 bridges"))


def test_the_bootstrap_administrator_keeps_its_configured_password(api):
    from chalicelib.settings import settings

    current = settings()
    assert len(current.admin_password) < 10  # `admin` in tests and `make run`
    ok(sign_in(api, current.admin_username, current.admin_password))
