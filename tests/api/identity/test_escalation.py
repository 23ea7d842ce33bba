"""A caller manages only users it outranks or equals: every permission of the target (wildcards
included) and every tenant of it must be the caller's too, on every user-management route."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.identity.support import PASSWORD, assert_error, sign_in, token_body, user_holding, whoami
from tests.builders import new_tenant, new_user, unique_name
from tests.support.api import call, ok


def management_calls(target: str, tenant: str, clock: Any) -> list[tuple[str, str, Any]]:
    """Every route that changes another user, with a body that would succeed on a user the caller outranks."""
    return [
        ("PATCH", f"/auth/users/{target}/passwordreset", "a fresh long secret"),
        ("PATCH", f"/auth/users/{target}", {"firstName": "Mallory", "lastName": "X", "tenants": [tenant]}),
        ("PATCH", f"/auth/users/{target}/roles", {"addRoles": [], "removeRoles": ["admin"]}),
        ("PATCH", f"/auth/users/{target}/tenants", {"addTenants": [], "removeTenants": [tenant]}),
        ("POST", f"/auth/users/{target}/revoke", None),
        ("DELETE", f"/auth/users/{target}/credentials", None),
        ("POST", f"/auth/users/{target}/tokens", token_body(clock)),
        ("DELETE", f"/auth/users/{target}/tokens/api-token", None),
        ("DELETE", f"/auth/users/{target}", None),
    ]


def test_a_user_manager_cannot_take_over_an_administrator_of_its_tenant(api, admin_token, clock):
    """The reported path: `users.*` on tenant T, reset the password of T's admin, sign in as them."""
    tenant = new_tenant()
    admin_name = unique_name()
    admin = user_holding(["admin"], [tenant], password=PASSWORD, name=admin_name)
    _, manager = new_user(["users.*"], [tenant])

    for method, path, body in management_calls(admin, tenant, clock):
        body_out = assert_error(call(api, method, path, manager, body), 403, "auth.user_outranks_caller")
        assert "*.*" in body_out["message"], (method, path)

    assert_error(sign_in(api, admin_name, "a fresh long secret"), 401, "auth.sign_in_failed")
    session = ok(sign_in(api, admin_name))["access_token"]  # the real password still works
    assert ok(whoami(api, session))["roles"] == ["admin"]
    assert ok(whoami(api, manager))["permissions"] == ["users.*", "users.custom"]


@pytest.mark.parametrize(
    "caller_holds, target_holds",
    [
        (["users.*", "accounts.read"], ["accounts.read", "accounts.write"]),  # one permission more
        (["users.*", "accounts.read", "accounts.write"], ["accounts.*"]),  # a wildcard is more than its parts
        (["users.*", "accounts.*"], ["accounts.read", "policies.read"]),  # another group
    ],
)
def test_a_target_with_any_permission_beyond_the_caller_is_refused(api, clock, caller_holds, target_holds):
    from tests.builders import new_role

    tenant = new_tenant()
    target = user_holding([new_role(target_holds)], [tenant])
    _, caller = new_user(caller_holds, [tenant])
    assert_error(
        call(api, "PATCH", f"/auth/users/{target}/passwordreset", caller, "a fresh long secret"),
        403,
        "auth.user_outranks_caller",
    )
    assert_error(call(api, "DELETE", f"/auth/users/{target}", caller), 403, "auth.user_outranks_caller")


@pytest.mark.parametrize(
    "caller_holds, target_holds",
    [
        (["users.*", "accounts.*"], ["accounts.read", "accounts.write"]),  # a wildcard covers its parts
        (["*.*"], ["accounts.*", "users.*"]),
        (["users.*", "accounts.read"], ["accounts.read"]),  # equal
    ],
)
def test_a_target_within_the_callers_permissions_is_managed(api, clock, caller_holds, target_holds):
    from tests.builders import new_role

    tenant = new_tenant()
    target = user_holding([new_role(target_holds)], [tenant], service_account=True)
    _, caller = new_user(caller_holds, [tenant])
    for method, path, body in management_calls(target, tenant, clock):
        if path.endswith("/roles"):
            body = {"addRoles": [], "removeRoles": []}
        response = call(api, method, path, caller, body)
        assert response.status_code == 200, (method, path, response.body)


def test_a_named_token_narrower_than_its_owner_manages_only_what_it_carries(api, clock):
    from tests.builders import new_role

    tenant = new_tenant()
    target = user_holding([new_role(["accounts.read"])], [tenant])
    owner, owner_token = new_user(["users.*", "accounts.read"], [tenant])
    narrow = ok(
        call(
            api,
            "POST",
            f"/auth/users/{owner}/tokens",
            owner_token,
            token_body(clock, name="users-only", permissions=["users.*"], tenants=[tenant]),
        )
    )
    assert_error(call(api, "POST", f"/auth/users/{target}/revoke", narrow), 403, "auth.user_outranks_caller")
    assert call(api, "POST", f"/auth/users/{target}/revoke", owner_token).status_code == 200


def test_a_caller_cannot_grant_itself_more_through_its_own_roles(api, admin_token):
    tenant = new_tenant()
    locator, manager = new_user(["users.*"], [tenant])
    assert_error(
        call(api, "PATCH", f"/auth/users/{locator}/roles", manager, {"addRoles": ["admin"], "removeRoles": []}),
        403,
        "auth.role_not_grantable",
    )
    assert ok(whoami(api, manager))["permissions"] == ["users.*", "users.custom"]
