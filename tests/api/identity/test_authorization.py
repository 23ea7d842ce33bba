"""What a caller may do: permission wildcards, self-service, and tokens bounded by their owner."""

from __future__ import annotations

import json

from chalicelib.identity import service
from tests.api.identity.support import assert_error, role_body, token_body, whoami
from tests.builders import new_role, new_tenant, new_user, system_ctx
from tests.support.api import call, ok


def test_a_group_wildcard_covers_every_action_of_its_group(api):
    _, token = new_user(["users.*"], [])
    ok(call(api, "GET", "/auth/users/list?count=1", token))
    ok(call(api, "GET", "/auth/users/basic/list?count=1", token))
    assert_error(call(api, "GET", "/auth/roles/list", token), 403, "auth.permission_denied")
    assert_error(call(api, "POST", "/auth/roles", token, role_body()), 403, "auth.permission_denied")


def test_the_global_wildcard_covers_everything(api):
    _, token = new_user(["*.*"], [])
    ok(call(api, "GET", "/auth/users/list?count=1", token))
    ok(call(api, "GET", "/auth/roles/permissions", token))
    role = ok(call(api, "POST", "/auth/roles", token, role_body()))
    assert call(api, "DELETE", f"/auth/roles/{role['locator']}", token).status_code == 200


def test_one_of_the_listed_permissions_suffices(api):
    _, lister = new_user(["users.list"], [])
    _, reader = new_user(["users.read"], [])
    for token in (lister, reader):
        ok(call(api, "GET", "/auth/users/list?count=1", token))


def test_self_service_applies_to_the_callers_own_locator_only(api):
    locator, token = new_user([], [])
    other, _ = new_user([], [])
    for path in ("", "/permissions", "/tokens"):
        ok(call(api, "GET", f"/auth/users/{locator}{path}", token))
        assert_error(call(api, "GET", f"/auth/users/{other}{path}", token), 403, "auth.permission_denied")


def test_even_a_wildcard_holder_mints_no_token_for_another_persons_account(api, clock):
    """DECISIONS.md: tokens for others only for service accounts, never for an interactive account."""
    _, admin_like = new_user(["*.*"], [])
    other, _ = new_user([], [])
    assert_error(
        call(api, "POST", f"/auth/users/{other}/tokens", admin_like, token_body(clock)),
        403,
        "token.not_service_account",
    )


def test_a_token_restricted_to_fewer_permissions_than_its_owner(api, clock):
    locator, owner_token = new_user(["users.read", "roles.read"], [])
    narrow = ok(
        call(
            api,
            "POST",
            f"/auth/users/{locator}/tokens",
            owner_token,
            token_body(clock, name="narrow", permissions=["roles.read", "users.custom"]),
        )
    )
    ok(call(api, "GET", "/auth/users/list?count=1", owner_token))
    ok(call(api, "GET", "/auth/roles/list?count=1", narrow))
    assert_error(call(api, "GET", "/auth/users/list?count=1", narrow), 403, "auth.permission_denied")


def test_a_restricted_token_cannot_mint_a_wider_token(api, clock):
    locator, owner_token = new_user(["users.read"], [])
    narrow = ok(
        call(
            api,
            "POST",
            f"/auth/users/{locator}/tokens",
            owner_token,
            token_body(clock, name="narrow", permissions=["users.custom"]),
        )
    )
    wider = token_body(clock, name="wider", permissions=["users.read", "users.custom"])
    assert_error(call(api, "POST", f"/auth/users/{locator}/tokens", narrow, wider), 403, "token.permission_not_held")
    assert_error(
        call(api, "POST", f"/auth/users/{locator}/tokens", narrow, token_body(clock, permissions=["*.*"])),
        403,
        "token.permission_not_held",
    )


def test_a_token_restricted_to_fewer_tenants_cannot_mint_a_wider_token(api, clock, tenant):
    second = new_tenant()
    locator, owner_token = new_user([], [tenant, second])
    narrow = ok(
        call(
            api,
            "POST",
            f"/auth/users/{locator}/tokens",
            owner_token,
            token_body(clock, name="narrow", tenants=[tenant]),
        )
    )
    assert_error(
        call(
            api,
            "POST",
            f"/auth/users/{locator}/tokens",
            narrow,
            token_body(clock, name="wider", tenants=[tenant, second]),
        ),
        403,
        "token.tenant_not_held",
    )


def test_a_named_token_loses_what_its_owner_loses(api, admin_token, clock):
    locator, owner_token = new_user(["users.read"], [])
    role = ok(whoami(api, owner_token))["roles"][0]
    token = ok(
        call(
            api,
            "POST",
            f"/auth/users/{locator}/tokens",
            owner_token,
            token_body(clock, name="reader", permissions=["users.read", "users.custom"]),
        )
    )
    ok(call(api, "GET", "/auth/users/list?count=1", token))
    ok(call(api, "PATCH", f"/auth/users/{locator}/roles", admin_token, {"addRoles": [], "removeRoles": [role]}))
    assert_error(call(api, "GET", "/auth/users/list?count=1", token), 403, "auth.permission_denied")
    ok(call(api, "PATCH", f"/auth/users/{locator}/roles", admin_token, {"addRoles": [role], "removeRoles": []}))
    ok(call(api, "GET", "/auth/users/list?count=1", token))


def test_a_wildcard_token_carries_exactly_what_its_owner_holds(api, clock):
    locator, owner_token = new_user(["users.*"], [])
    token = ok(
        call(
            api,
            "POST",
            f"/auth/users/{locator}/tokens",
            owner_token,
            token_body(clock, name="wide", permissions=["users.*"]),
        )
    )
    ok(call(api, "GET", "/auth/users/list?count=1", token))
    service.update_user_roles(system_ctx(), locator, [new_role(["roles.read"])], [])
    assert_error(call(api, "GET", "/auth/roles/list?count=1", token), 403, "auth.permission_denied")


def test_a_caller_cannot_hand_out_a_role_wider_than_its_own_permissions(api, tenant):
    from tests.builders import bearer, new_role, new_user

    wide_role = new_role(["*.*"])
    _, granter = new_user(["users.update-roles", "users.add", "users.read"], [tenant])
    target, _ = new_user([], [tenant])

    response = api.http.patch(
        f"/auth/users/{target}/roles",
        headers=bearer(granter),
        body=json.dumps({"addRoles": [wide_role], "removeRoles": []}),
    )

    assert response.status_code == 403
    assert response.json_body["code"] == "auth.role_not_grantable"
    whoami = api.http.get(f"/auth/users/{target}", headers=bearer(granter)).json_body
    assert wide_role not in whoami["roles"]


def test_a_caller_can_hand_out_a_role_within_its_own_permissions(api, tenant):
    from tests.builders import bearer, new_role, new_user

    narrow_role = new_role(["users.read"])
    _, granter = new_user(["users.update-roles", "users.read"], [tenant])
    target, _ = new_user([], [tenant])

    response = api.http.patch(
        f"/auth/users/{target}/roles",
        headers=bearer(granter),
        body=json.dumps({"addRoles": [narrow_role], "removeRoles": []}),
    )

    assert response.status_code == 200
    assert narrow_role in response.json_body["roles"]


def test_a_caller_of_one_tenant_cannot_see_or_manage_users_of_another(api):
    from tests.builders import bearer, new_tenant, new_user

    tenant_a, tenant_b = new_tenant(), new_tenant()
    user_of_a, _ = new_user(["accounts.read"], [tenant_a])
    _, admin_of_b = new_user(["*.*"], [tenant_b])
    headers = bearer(admin_of_b)

    assert api.http.get(f"/auth/users/{user_of_a}", headers=headers).status_code == 404
    assert api.http.get(f"/auth/users/{user_of_a}/permissions", headers=headers).status_code == 404
    assert api.http.get(f"/auth/users/{user_of_a}/tokens", headers=headers).status_code == 404
    assert api.http.post(f"/auth/users/{user_of_a}/revoke", headers=headers).status_code == 404
    assert api.http.delete(f"/auth/users/{user_of_a}", headers=headers).status_code == 404
    tenants = api.http.patch(
        f"/auth/users/{user_of_a}/tenants",
        headers=headers,
        body=json.dumps({"addTenants": [tenant_b], "removeTenants": []}),
    )
    assert tenants.status_code == 404

    listed = api.http.get("/auth/users/list?count=100", headers=headers).json_body["items"]
    assert user_of_a not in {u["locator"] for u in listed}


def test_a_caller_holding_every_tenant_of_a_user_manages_it(api):
    from tests.builders import bearer, new_tenant, new_user

    tenant = new_tenant()
    user, _ = new_user(["accounts.read"], [tenant])
    _, manager = new_user(["users.read", "users.write", "accounts.*"], [tenant])

    response = api.http.get(f"/auth/users/{user}", headers=bearer(manager))
    assert response.status_code == 200
    assert response.json_body["tenants"] == [tenant]
    assert api.http.post(f"/auth/users/{user}/revoke", headers=bearer(manager)).status_code == 200
