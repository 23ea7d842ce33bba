"""A temporary password (`temporaryPassword: true` on create, `?temporaryPassword=true` on a reset):
the next sign-in answers a token that can only change the password."""

from __future__ import annotations

from tests.api.identity.support import PASSWORD, assert_error, sign_in, user_body, whoami
from tests.support.api import call, ok

NEW_PASSWORD = "my very own new secret"


def temporary_user(api, admin_token) -> tuple[str, str]:
    fields = user_body(password=PASSWORD, temporaryPassword=True)
    return ok(call(api, "POST", "/auth/users", admin_token, fields))["locator"], fields["userName"]


def test_the_token_of_a_temporary_password_serves_only_to_change_it(api, admin_token, tenant):
    locator, name = temporary_user(api, admin_token)
    restricted = ok(sign_in(api, name))["access_token"]

    for method, path in (
        ("GET", "/auth/users/whoami"),
        ("GET", f"/auth/users/{locator}"),
        ("GET", f"/auth/users/{locator}/tokens"),
        ("GET", "/auth/roles/list"),
        ("GET", f"/config/{tenant}/deployments"),
    ):
        assert_error(call(api, method, path, restricted), 403, "auth.password_change_required")
    assert_error(call(api, "PATCH", f"/auth/users/{locator}/passwordreset", restricted, "a"), 400, "user.weak_password")

    assert call(api, "PATCH", f"/auth/users/{locator}/passwordreset", restricted, NEW_PASSWORD).status_code == 200
    assert_error(whoami(api, restricted), 401, "auth.token_revoked")
    assert_error(sign_in(api, name), 401, "auth.sign_in_failed")
    assert ok(whoami(api, ok(sign_in(api, name, NEW_PASSWORD))["access_token"]))["locator"] == locator


def test_it_cannot_change_anyone_elses_password(api, admin_token, admin_locator):
    _, name = temporary_user(api, admin_token)
    restricted = ok(sign_in(api, name))["access_token"]
    assert_error(
        call(api, "PATCH", f"/auth/users/{admin_locator}/passwordreset", restricted, NEW_PASSWORD),
        403,
        "auth.password_change_required",
    )


def test_an_administrator_reset_can_be_temporary(api, admin_token):
    fields = user_body(password=PASSWORD)
    locator = ok(call(api, "POST", "/auth/users", admin_token, fields))["locator"]
    ok(whoami(api, ok(sign_in(api, fields["userName"]))["access_token"]))

    path = f"/auth/users/{locator}/passwordreset?temporaryPassword=true"
    assert call(api, "PATCH", path, admin_token, "handed over by phone").status_code == 200
    restricted = ok(sign_in(api, fields["userName"], "handed over by phone"))["access_token"]
    assert_error(whoami(api, restricted), 403, "auth.password_change_required")


def test_a_password_a_user_sets_itself_is_never_temporary(api, admin_token):
    locator, name = temporary_user(api, admin_token)
    restricted = ok(sign_in(api, name))["access_token"]
    path = f"/auth/users/{locator}/passwordreset?temporaryPassword=true"
    assert call(api, "PATCH", path, restricted, NEW_PASSWORD).status_code == 200
    ok(whoami(api, ok(sign_in(api, name, NEW_PASSWORD))["access_token"]))


def test_a_user_created_without_temporary_password_signs_in_fully(api, admin_token):
    fields = user_body(password=PASSWORD, temporaryPassword=False)
    ok(call(api, "POST", "/auth/users", admin_token, fields))
    ok(whoami(api, ok(sign_in(api, fields["userName"]))["access_token"]))
