"""Password rules wherever a password is set: at least 10 characters as typed, not blank, not one character
repeated, not a trivial sequence, not a common password, not the user name. The bootstrap administrator of
`make run` (password `admin`) is exempt."""

from __future__ import annotations

import pytest

from tests.api.identity.support import PASSWORD, assert_error, field_names, sign_in, user_body, user_with_password
from tests.support.api import call, ok

BLANK = "must not be blank (whitespace only)"
REPEATED = "must not be one character repeated"
SEQUENCE = "must not be a simple sequence (like 0123456789, abcdefghij or qwertyuiop)"
COMMON = "is one of the most common passwords"
WEAK = [
    ("a", ["must be at least 10 characters long"]),
    ("password123", [COMMON]),
    ("Qwertyuiop", [SEQUENCE, COMMON]),
]
TRIVIAL = [
    (" " * 10, BLANK),
    ("\t" * 10, BLANK),
    ("\u00a0" * 10, BLANK),  # no-break space
    ("\u3000\u2003\u200b" * 4, BLANK),  # ideographic space, em space, zero-width space
    ("\n\r" * 5, BLANK),
    ("aaaaaaaaaa", REPEATED),
    ("0000000000", REPEATED),
    ("AaAaAaAaAa", REPEATED),
    ("7 7 7 7 7 7", REPEATED),
    ("0123456789", SEQUENCE),
    ("abcdefghij", SEQUENCE),
    ("9876543210", SEQUENCE),
    ("ZYXWVUTSRQ", SEQUENCE),
    ("6789012345", SEQUENCE),
    ("asdfghjkl;", SEQUENCE),
    ("zxcvbnm,./", SEQUENCE),
    ("/.,mnbvcxz", SEQUENCE),
    ("!@#$%^&*()", SEQUENCE),
    ("\u03b1\u03b2\u03b3\u03b4\u03b5\u03b6\u03b7\u03b8\u03b9\u03ba", SEQUENCE),  # the Greek alphabet
]


@pytest.mark.parametrize("password, problems", WEAK)
def test_creating_a_user_with_a_weak_password_is_refused(api, admin_token, password, problems):
    body = assert_error(
        call(api, "POST", "/auth/users", admin_token, user_body(password=password)), 400, "user.weak_password"
    )
    assert body["fieldErrors"] == [{"field": "password", "message": problem} for problem in problems]


@pytest.mark.parametrize("password, problem", TRIVIAL)
def test_creating_a_user_with_a_trivial_password_is_refused(api, admin_token, password, problem):
    fields = user_body(password=password)
    body = assert_error(call(api, "POST", "/auth/users", admin_token, fields), 400, "user.weak_password")
    assert field_names(body) == {"password"}
    assert problem in [f["message"] for f in body["fieldErrors"]]
    assert ok(call(api, "GET", f"/auth/users/username/{fields['userName']}", admin_token)) == []


@pytest.mark.parametrize("password, problem", TRIVIAL)
def test_a_trivial_reset_is_refused_and_the_old_password_stays(api, admin_token, password, problem):
    locator, name = user_with_password([])
    body = assert_error(
        call(api, "PATCH", f"/auth/users/{locator}/passwordreset", admin_token, password), 400, "user.weak_password"
    )
    assert field_names(body) == {"password"}
    assert problem in [f["message"] for f in body["fieldErrors"]]
    ok(sign_in(api, name, PASSWORD))  # the old password stays (a failed sign-in would count for the whole session)


@pytest.mark.parametrize(
    "password", [" kettle99 ", "\u00a0correct horse battery staple\u00a0", "abcdefghik", "0123456798", "qwertyuiop]["]
)
def test_length_counts_what_was_typed_and_near_sequences_pass(api, admin_token, password):
    """Surrounding whitespace is kept and counted; a sequence broken anywhere is no longer trivial."""
    fields = user_body(password=password)
    ok(call(api, "POST", "/auth/users", admin_token, fields))
    ok(sign_in(api, fields["userName"], password))


def test_the_user_name_is_no_password(api, admin_token):
    fields = user_body()
    fields["password"] = fields["userName"]
    body = assert_error(call(api, "POST", "/auth/users", admin_token, fields), 400, "user.weak_password")
    assert field_names(body) == {"password"}


@pytest.mark.parametrize("password, problems", WEAK)
def test_a_weak_reset_is_refused_and_the_old_password_stays(api, admin_token, password, problems):
    locator, name = user_with_password([])
    body = assert_error(
        call(api, "PATCH", f"/auth/users/{locator}/passwordreset", admin_token, password), 400, "user.weak_password"
    )
    assert body["fieldErrors"] == [{"field": "password", "message": problem} for problem in problems]
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
