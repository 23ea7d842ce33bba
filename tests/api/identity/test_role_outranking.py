"""Roles are global: creating, changing or deleting one needs every permission it has before and after the
change, and every tenant of every user who holds it (`any` included); else 403 `auth.role_outranks_caller`.
The built-in `admin` role is never changed or deleted (409 `role.built_in`)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.api.identity.support import PASSWORD, assert_error, role_body, role_name, sign_in, user_with_password
from tests.builders import new_tenant, new_user, system_ctx
from tests.support.api import call, ok


def a_role(permissions: list[str]) -> dict[str, Any]:
    """A role as GET /auth/roles/{locator} answers it."""
    from chalicelib.core.clock import isoformat
    from chalicelib.identity import service

    role = service.create_role(system_ctx(), name=role_name(), description="outranking", permissions=permissions)
    return {**role.model_dump(), "createdAt": isoformat(role.createdAt)}


def signed_in_holder(api, roles: list[str], tenants: list[str]) -> tuple[str, str]:
    """A user holding `roles` on `tenants`, and a session token, whose permissions follow its roles."""
    locator, name = user_with_password(tenants, roles)
    return locator, ok(sign_in(api, name, PASSWORD))["access_token"]


def holder(roles: list[str], tenants: list[str]) -> str:
    from chalicelib.identity import service
    from chalicelib.identity.models import UserFields
    from tests.builders import unique_name

    return service.create_user(
        system_ctx(),
        UserFields(userName=unique_name(), firstName="Role", lastName="Holder", roles=roles, tenants=tenants),
        enable_user=True,
    ).user.locator


def change(role: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {
        "name": role["name"],
        "description": role["description"],
        "version": role["version"],
        "addPermissions": [],
        "removePermissions": [],
        **changes,
    }


def accounts(tenant: str) -> str:
    return f"/policy/{tenant}/accounts/list"


def role_now(api, admin_token, role: dict[str, Any]) -> dict[str, Any]:
    return ok(call(api, "GET", f"/auth/roles/{role['locator']}", admin_token))


def test_a_role_updater_cannot_give_its_own_role_everything(api, admin_token):
    """The reported path: the caller's only role grants roles.update; it adds *.* to that role."""
    tenant = new_tenant()
    own = a_role(["roles.update"])
    _, session = signed_in_holder(api, [own["name"]], [tenant])

    body = assert_error(
        call(api, "PATCH", f"/auth/roles/{own['locator']}", session, change(own, addPermissions=["*.*"])),
        403,
        "auth.role_outranks_caller",
    )

    assert "*.*" in body["message"]
    assert role_now(api, admin_token, own) == own
    assert_error(call(api, "GET", accounts(tenant), session), 403, "auth.permission_denied")


def test_a_role_held_in_another_tenant_cannot_be_stripped(api, admin_token):
    tenant_a, tenant_b = new_tenant(), new_tenant()
    shared = a_role(["accounts.read"])
    _, user_b = signed_in_holder(api, [shared["name"]], [tenant_b])
    _, caller = signed_in_holder(api, [a_role(["roles.update", "accounts.read"])["name"]], [tenant_a])

    body = assert_error(
        call(
            api,
            "PATCH",
            f"/auth/roles/{shared['locator']}",
            caller,
            change(shared, removePermissions=["accounts.read"]),
        ),
        403,
        "auth.role_outranks_caller",
    )

    assert tenant_b not in body["message"]  # another tenant's locator is not the caller's to learn
    assert role_now(api, admin_token, shared) == shared
    ok(call(api, "GET", accounts(tenant_b), user_b))


def test_a_role_held_in_another_tenant_cannot_be_deleted(api, admin_token):
    tenant_a, tenant_b = new_tenant(), new_tenant()
    shared = a_role(["accounts.read"])
    _, user_b = signed_in_holder(api, [shared["name"]], [tenant_b])
    _, caller = signed_in_holder(api, [a_role(["roles.delete", "accounts.read"])["name"]], [tenant_a])

    assert_error(call(api, "DELETE", f"/auth/roles/{shared['locator']}", caller), 403, "auth.role_outranks_caller")

    assert role_now(api, admin_token, shared) == shared
    ok(call(api, "GET", accounts(tenant_b), user_b))


def test_a_role_held_by_an_any_tenant_user_needs_an_any_tenant_caller(api, admin_token):
    tenant_a, tenant_b = new_tenant(), new_tenant()
    role = a_role(["accounts.read"])
    holder([role["name"]], ["any"])
    _, every_tenant = new_user(["roles.*", "accounts.*"], [tenant_a, tenant_b])
    _, any_tenant = new_user(["roles.*", "accounts.*"], ["any"])
    path = f"/auth/roles/{role['locator']}"

    assert_error(
        call(api, "PATCH", path, every_tenant, change(role, description="mine")), 403, "auth.role_outranks_caller"
    )
    assert_error(call(api, "DELETE", path, every_tenant), 403, "auth.role_outranks_caller")
    assert ok(call(api, "PATCH", path, any_tenant, change(role, description="mine")))["description"] == "mine"
    assert call(api, "DELETE", path, any_tenant).status_code == 200


def test_a_role_whose_holders_are_all_within_the_callers_tenants_is_managed(api, admin_token):
    tenant = new_tenant()
    role = a_role(["accounts.read", "accounts.write"])
    holder([role["name"]], [tenant])
    holder([role["name"]], [])  # a holder without tenants reaches no tenant's data
    _, caller = new_user(["roles.*", "accounts.*"], [tenant, new_tenant()])
    path = f"/auth/roles/{role['locator']}"

    changed = ok(
        call(
            api,
            "PATCH",
            path,
            caller,
            change(role, addPermissions=["accounts.*"], removePermissions=["accounts.write"]),
        )
    )

    assert changed["permissions"] == ["accounts.*", "accounts.read"]
    assert call(api, "DELETE", path, caller).status_code == 200


@pytest.mark.parametrize(
    "role_holds, changes",
    [
        (["accounts.read", "policies.read"], {"removePermissions": ["policies.read"]}),  # before the change
        (["accounts.read"], {"addPermissions": ["accounts.write"]}),  # after it
        (["accounts.read"], {"addPermissions": ["accounts.*"]}),  # a wildcard is more than the parts held
        (["accounts.*"], {"removePermissions": ["accounts.*"], "addPermissions": ["accounts.read"]}),
    ],
)
def test_a_change_needs_every_permission_of_the_role_before_and_after(api, admin_token, role_holds, changes):
    role = a_role(role_holds)
    _, caller = new_user(["roles.update", "accounts.read"], [])

    assert_error(
        call(api, "PATCH", f"/auth/roles/{role['locator']}", caller, change(role, **changes)),
        403,
        "auth.role_outranks_caller",
    )
    assert role_now(api, admin_token, role) == role


def test_creating_a_role_needs_every_permission_it_has(api, admin_token):
    _, adder = new_user(["roles.add", "accounts.*"], [])

    for permissions in (["accounts.read", "policies.read"], ["*.*"], ["policies.*"]):
        body = assert_error(
            call(api, "POST", "/auth/roles", adder, role_body(permissions=permissions)),
            403,
            "auth.role_outranks_caller",
        )
        assert permissions[-1] in body["message"]
    assert ok(call(api, "POST", "/auth/roles", adder, role_body(permissions=["accounts.*", "accounts.read"])))


def test_the_holders_tenants_follow_every_change_of_its_holders(api, admin_token):
    tenant_a, tenant_b = new_tenant(), new_tenant()
    role = a_role(["accounts.read"])
    user = holder([role["name"]], [tenant_a])
    _, caller = new_user(["roles.*", "accounts.read"], [tenant_a])
    path = f"/auth/roles/{role['locator']}"

    def describe(text: str) -> Any:
        current = role_now(api, admin_token, role)
        return call(api, "PATCH", path, caller, change(current, description=text))

    ok(describe("only tenant A holds it"))
    ok(call(api, "PATCH", f"/auth/users/{user}/tenants", admin_token, {"addTenants": [tenant_b], "removeTenants": []}))
    assert_error(describe("B holds it too"), 403, "auth.role_outranks_caller")
    ok(call(api, "PATCH", f"/auth/users/{user}/roles", admin_token, {"addRoles": [], "removeRoles": [role["name"]]}))
    ok(describe("nobody holds it"))
    ok(
        call(
            api,
            "PATCH",
            f"/auth/users/{user}",
            admin_token,
            {"firstName": "Re", "lastName": "Held", "tenants": [tenant_b], "roles": [role["name"]]},
        )
    )
    assert_error(describe("B holds it again"), 403, "auth.role_outranks_caller")
    ok(call(api, "PATCH", f"/auth/users/{user}/tenants", admin_token, {"addTenants": [], "removeTenants": [tenant_b]}))
    ok(describe("its holder has no tenant"))
    ok(call(api, "PATCH", f"/auth/users/{user}/tenants", admin_token, {"addTenants": ["any"], "removeTenants": []}))
    assert_error(describe("every tenant holds it"), 403, "auth.role_outranks_caller")
    assert call(api, "DELETE", f"/auth/users/{user}", admin_token).status_code == 200
    ok(describe("its holder is gone"))
    holder([role["name"]], [tenant_b])
    assert_error(describe("a new user of B holds it"), 403, "auth.role_outranks_caller")


def test_a_tenant_created_by_a_holder_counts_for_its_roles(api, admin_token):
    from tests.support.configs import configured_tenant

    tenant = new_tenant()
    role = a_role(["tenants.create-tenant", "accounts.read"])
    _, creator = signed_in_holder(api, [role["name"]], [tenant])
    _, caller = new_user(["roles.*", "tenants.create-tenant", "accounts.read"], [tenant])
    path = f"/auth/roles/{role['locator']}"
    role = ok(call(api, "PATCH", path, caller, change(role, description="held in one tenant")))

    configured_tenant(api, creator)

    assert_error(
        call(api, "PATCH", path, caller, change(role, description="held in two")), 403, "auth.role_outranks_caller"
    )


@pytest.mark.parametrize(
    "method, body",
    [
        ("PATCH", {"description": "Every permission, now a little less", "removePermissions": ["*.*"]}),
        ("PATCH", {"name": "superuser"}),
        ("DELETE", None),
    ],
)
def test_the_built_in_admin_role_is_never_changed_nor_deleted(api, admin_token, method, body):
    from chalicelib.identity import repository

    locator = repository.role_locators_by_name(["admin"])["admin"]
    admin_role = ok(call(api, "GET", f"/auth/roles/{locator}", admin_token))
    sent = change(admin_role, **body) if body is not None else None

    assert_error(call(api, method, f"/auth/roles/{locator}", admin_token, sent), 409, "role.built_in")
    assert ok(call(api, "GET", f"/auth/roles/{locator}", admin_token)) == admin_role


def test_a_user_gaining_the_role_while_it_changes_never_ends_up_beyond_the_changer(api, admin_token, dynamodb_in_turns):
    """The role change was checked against the holders it read; the grant against the role's permissions
    it read. Both commit only if neither changed in between: one of them answers 409."""
    tenant_a, tenant_b = new_tenant(), new_tenant()
    role = a_role(["accounts.read"])
    holder([role["name"]], [tenant_a])
    user_b = holder([], [tenant_b])
    _, changer = new_user(["roles.update", "accounts.*"], [tenant_a])
    dynamodb_in_turns.writes_meet(2)  # each request has read what it checks before either writes

    with ThreadPoolExecutor(2) as pool:
        widened, granted = pool.map(
            lambda request: request(),
            [
                lambda: call(
                    api,
                    "PATCH",
                    f"/auth/roles/{role['locator']}",
                    changer,
                    change(role, addPermissions=["accounts.write"]),
                ),
                lambda: call(
                    api,
                    "PATCH",
                    f"/auth/users/{user_b}/roles",
                    admin_token,
                    {"addRoles": [role["name"]], "removeRoles": []},
                ),
            ],
        )

    assert sorted([widened.status_code, granted.status_code]) == [200, 409]
    lost = widened if widened.status_code == 409 else granted
    assert_error(lost, 409, "conflict.concurrent_modification")
    permissions = role_now(api, admin_token, role)["permissions"]
    roles_of_b = ok(call(api, "GET", f"/auth/users/{user_b}", admin_token))["roles"]
    if widened.status_code == 200:
        assert (permissions, roles_of_b) == (["accounts.read", "accounts.write"], [])
    else:
        assert (permissions, roles_of_b) == (["accounts.read"], [role["name"]])
