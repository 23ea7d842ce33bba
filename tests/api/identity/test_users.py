"""The twelve user endpoints."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from tests.api.identity.support import (
    PASSWORD,
    assert_error,
    assert_event,
    events_of,
    field_names,
    list_length,
    sign_in,
    user_body,
    user_with_password,
    whoami,
)
from tests.builders import new_role, new_tenant, new_user, unique_name
from tests.support.api import call, ok

UNKNOWN_USER = "00000000-0000-4000-8000-000000000000"
BASIC_LIST = "/auth/users/basic/list"
USER_FIELDS = {"locator", "userName", "firstName", "lastName", "serviceAccount", "tenants", "roles", "permissions"}


def assert_user_shape(user):
    """UserResponse as the OpenAPI file requires it (serviceAccount included)."""
    assert USER_FIELDS <= set(user) <= USER_FIELDS | {"email"}
    assert uuid.UUID(user["locator"])
    assert isinstance(user["serviceAccount"], bool)
    assert all(isinstance(user[f], list) for f in ("tenants", "roles", "permissions"))


def create_user(api, token, **fields):
    return call(api, "POST", "/auth/users", token, user_body(**fields))


# --- POST /auth/users ----------------------------------------------------------------------------


def test_create_user_answers_the_user_response(api, admin_token, admin_locator, tenant):
    role = new_role(["accounts.read", "policies.*"])
    name = unique_name()
    response = call(
        api,
        "POST",
        "/auth/users",
        admin_token,
        {
            "userName": name,
            "firstName": "Grace",
            "lastName": "Hopper",
            "email": "grace@example.com",
            "serviceAccount": False,
            "roles": [role],
            "tenants": [tenant],
        },
    )
    user = ok(response)
    assert_user_shape(user)
    assert {k: v for k, v in user.items() if k != "locator"} == {
        "userName": name,
        "firstName": "Grace",
        "lastName": "Hopper",
        "email": "grace@example.com",
        "serviceAccount": False,
        "tenants": [tenant],
        "roles": [role],
        "permissions": ["accounts.read", "policies.*", "users.custom"],
    }
    assert assert_event(response, "auth.user.create", admin_locator)["data"] == {"userLocator": user["locator"]}
    assert ok(call(api, "GET", f"/auth/users/{user['locator']}", admin_token)) == user


def test_create_a_service_account_without_email(api, admin_token):
    user = ok(create_user(api, admin_token, serviceAccount=True))
    assert_user_shape(user)
    assert user["serviceAccount"] is True and "email" not in user
    assert user["roles"] == [] and user["tenants"] == [] and user["permissions"] == ["users.custom"]


def test_a_user_created_with_a_password_signs_in(api, admin_token):
    name = unique_name()
    ok(call(api, "POST", "/auth/users", admin_token, user_body(userName=name, password=PASSWORD)))
    ok(sign_in(api, name))


def test_user_names_are_unique_whatever_their_case(api, admin_token):
    name = unique_name()
    first = ok(create_user(api, admin_token, userName=name))
    assert_error(create_user(api, admin_token, userName=name), 409, "user.name_taken")
    assert_error(create_user(api, admin_token, userName=name.upper()), 409, "user.name_taken")
    found = ok(call(api, "GET", f"/auth/users/username/{name}", admin_token))
    assert [u["locator"] for u in found] == [first["locator"]]


@pytest.mark.parametrize(
    "change, field",
    [
        ({"locator": UNKNOWN_USER}, "locator"),
        ({"version": 3}, "version"),
        ({"createdAt": "2026-01-01T00:00:00Z"}, "createdAt"),
        ({"permissions": ["*.*"]}, "permissions"),
        ({"userName": "not-an-email"}, "userName"),
        ({"email": "grace@"}, "email"),
        ({"firstName": 42}, "firstName"),
        ({"firstName": ""}, "firstName"),
        ({"roles": "admin"}, "roles"),
        ({"tenants": [7]}, "tenants.0"),
        ({"tenants": ["not-a-tenant"]}, "tenants.0"),
        ({"serviceAccount": "sometimes"}, "serviceAccount"),
    ],
)
def test_invalid_user_creation_answers_400(api, admin_token, change, field):
    body = assert_error(create_user(api, admin_token, **change), 400, "request.invalid")
    assert field in field_names(body)


def test_user_creation_with_missing_fields_malformed_or_oversized_bodies(api, admin_token):
    assert_error(call(api, "POST", "/auth/users", admin_token, {"userName": unique_name()}), 400, "request.invalid")
    assert_error(
        call(api, "POST", "/auth/users", admin_token, raw=b'{"userName": "a@example.com",'),
        400,
        "request.malformed_json",
    )
    assert_error(call(api, "POST", "/auth/users", admin_token, raw=b""), 400, "request.body_missing")
    huge = user_body(lastName="x" * (1024 * 1024))
    assert_error(call(api, "POST", "/auth/users", admin_token, huge), 413, "request.too_large")


def test_create_user_with_an_unknown_role_answers_400_and_creates_nothing(api, admin_token):
    name = unique_name()
    body = assert_error(create_user(api, admin_token, userName=name, roles=["no-such-role"]), 400, "role.unknown")
    assert field_names(body) == {"roles"}
    assert ok(call(api, "GET", f"/auth/users/username/{name}", admin_token)) == []


def test_create_user_needs_users_add_and_the_tenants_granted(api, admin_token, tenant):
    _, reader = new_user(["users.read"], [tenant])
    _, adder = new_user(["users.add"], [tenant])
    assert_error(create_user(api, reader), 403, "auth.permission_denied")
    assert ok(create_user(api, adder, tenants=[tenant]))["tenants"] == [tenant]
    name = unique_name()
    assert_error(create_user(api, adder, userName=name, tenants=[tenant, new_tenant()]), 403, "auth.tenant_not_held")
    assert_error(create_user(api, adder, tenants=["any"]), 403, "auth.tenant_not_held")
    assert ok(call(api, "GET", f"/auth/users/username/{name}", admin_token)) == []


def test_enable_user_activates_a_user_without_password(api, admin_token, clock):
    """Without a password and without `enableUser=true` a user is disabled: no credential works."""
    from chalicelib.identity import service
    from tests.builders import system_ctx

    enabled = ok(call(api, "POST", "/auth/users?enableUser=true", admin_token, user_body()))
    disabled = ok(call(api, "POST", "/auth/users", admin_token, user_body()))
    for user, status in ((enabled, 200), (disabled, 401)):
        token = service.create_token(
            system_ctx(),
            user["locator"],
            name="sso",
            permissions=["users.custom"],
            tenants=[],
            expires_at=clock.now() + timedelta(days=1),
        )
        assert whoami(api, token).status_code == status
    assert_error(call(api, "POST", "/auth/users?enableUser=perhaps", admin_token, user_body()), 400, "request.invalid")


def test_create_user_honours_the_idempotency_key(api, admin_token):
    body = user_body()
    key = {"X-Idempotency-Key": str(uuid.uuid4())}
    first = call(api, "POST", "/auth/users", admin_token, body, headers=key)
    again = call(api, "POST", "/auth/users", admin_token, body, headers=key)
    assert ok(again) == ok(first)
    assert events_of(again) == []
    assert_error(call(api, "POST", "/auth/users", admin_token, user_body(), headers=key), 409, "idempotency.key_reused")


# --- GET /auth/users/whoami ----------------------------------------------------------------------


def test_whoami_answers_the_callers_user(api, tenant):
    locator, token = new_user(["accounts.read"], [tenant])
    me = ok(whoami(api, token))
    assert_user_shape(me)
    assert me["locator"] == locator and me["tenants"] == [tenant]
    assert len(me["roles"]) == 1
    assert me["permissions"] == ["accounts.read", "users.custom"]


def test_whoami_of_the_bootstrap_admin(api, admin_token):
    me = ok(whoami(api, admin_token))
    assert_user_shape(me)
    assert me["userName"] == "admin@example.com"
    assert me["roles"] == ["admin"] and me["tenants"] == ["any"] and me["serviceAccount"] is False
    assert me["permissions"] == ["*.*", "users.custom"]


# --- GET /auth/users/username/{username} ---------------------------------------------------------


def test_fetch_users_by_name(api, admin_token):
    created = ok(create_user(api, admin_token))
    _, reader = new_user(["users.read"], [])
    found = ok(call(api, "GET", f"/auth/users/username/{created['userName'].upper()}", reader))
    assert found == [created]
    assert ok(call(api, "GET", f"/auth/users/username/{unique_name()}", reader)) == []
    _, plain = new_user([], [])
    assert_error(call(api, "GET", f"/auth/users/username/{created['userName']}", plain), 403, "auth.permission_denied")


# --- GET /auth/users/{locator} -------------------------------------------------------------------


def test_fetch_user_is_self_service_or_users_read(api):
    locator, token = new_user([], [])
    other, _ = new_user([], [])
    _, reader = new_user(["users.read"], [])
    mine = ok(call(api, "GET", f"/auth/users/{locator}", token))
    assert mine == ok(whoami(api, token))
    assert_error(call(api, "GET", f"/auth/users/{other}", token), 403, "auth.permission_denied")
    assert ok(call(api, "GET", f"/auth/users/{locator}", reader)) == mine
    assert_error(call(api, "GET", f"/auth/users/{UNKNOWN_USER}", reader), 404, "user.not_found")


# --- GET /auth/users/list and /auth/users/basic/list ---------------------------------------------


@pytest.mark.parametrize("path", ["/auth/users/list", "/auth/users/basic/list"])
def test_user_lists_page_by_offset_and_count_oldest_first(api, admin_token, path):
    mine = [ok(create_user(api, admin_token))["locator"] for _ in range(3)]
    start = list_length(api, admin_token, BASIC_LIST, 1000) - 3  # the newest three

    def page(offset, count):
        body = ok(call(api, "GET", f"{path}?offset={offset}&count={count}", admin_token))
        return [u["locator"] for u in body["items"]], body["listCompleted"]

    assert page(start, 3) == (mine, True)
    assert page(start, 2) == (mine[:2], False)
    assert page(start + 1, 2) == (mine[1:], True)
    assert page(start + 2, 5) == (mine[2:], True)
    assert page(start + 3, 5) == ([], True)
    assert page(start - 1, 2)[0][1] == mine[0]


def test_user_list_items_are_user_responses(api, admin_token, tenant):
    created = ok(create_user(api, admin_token, tenants=[tenant], roles=[new_role(["accounts.read"])]))
    offset = list_length(api, admin_token, BASIC_LIST, 1000) - 1
    body = ok(call(api, "GET", f"/auth/users/list?offset={offset}&count=1", admin_token))
    assert body == {"listCompleted": True, "items": [created]}
    plain = ok(call(api, "GET", f"/auth/users/list?offset={offset}&count=1&extended=false", admin_token))
    assert plain == body  # extended=false answers the same envelope


def test_basic_user_list_items_are_basic_user_responses(api, admin_token):
    created = ok(create_user(api, admin_token))
    offset = list_length(api, admin_token, BASIC_LIST, 1000) - 1
    body = ok(call(api, "GET", f"/auth/users/basic/list?offset={offset}&count=1", admin_token))
    assert body == {
        "listCompleted": True,
        "items": [{k: created[k] for k in ("locator", "userName", "firstName", "lastName")}],
    }
    plain = ok(call(api, "GET", f"/auth/users/basic/list?offset={offset}&count=1&extended=false", admin_token))
    assert plain == body  # extended=false answers the same envelope


def test_user_list_defaults_to_the_first_twenty(api, admin_token):
    for _ in range(2):
        ok(create_user(api, admin_token))
    default = ok(call(api, "GET", "/auth/users/list", admin_token))
    length = list_length(api, admin_token, BASIC_LIST, 1000)
    assert len(default["items"]) == min(20, length)
    assert default["listCompleted"] is (length <= 20)
    assert default == ok(call(api, "GET", "/auth/users/list?offset=0&count=20", admin_token))


@pytest.mark.parametrize(
    "path, query, field",
    [
        ("/auth/users/list", "count=101", "count"),
        ("/auth/users/list", "count=0", "count"),
        ("/auth/users/list", "offset=-1", "offset"),
        ("/auth/users/list", "count=ten", "count"),
        ("/auth/users/list", "extended=maybe", "extended"),
        ("/auth/users/basic/list", "count=1001", "count"),
        ("/auth/users/basic/list", "offset=-5", "offset"),
    ],
)
def test_invalid_paging_answers_400(api, admin_token, path, query, field):
    body = assert_error(call(api, "GET", f"{path}?{query}", admin_token), 400, "request.invalid")
    assert field_names(body) == {field}


def test_the_basic_list_allows_a_thousand(api, admin_token):
    assert "items" in ok(call(api, "GET", "/auth/users/basic/list?count=1000", admin_token))


@pytest.mark.parametrize("path", ["/auth/users/list", "/auth/users/basic/list"])
def test_user_lists_need_users_read_or_users_list(api, path):
    _, plain = new_user([], [])
    _, lister = new_user(["users.list"], [])
    assert_error(call(api, "GET", path, plain), 403, "auth.permission_denied")
    ok(call(api, "GET", f"{path}?count=1", lister))


# --- PATCH /auth/users/{locator} -----------------------------------------------------------------


def test_update_user(api, admin_token, admin_locator, tenant):
    created = ok(create_user(api, admin_token, email="old@example.com", tenants=[tenant]))
    other_tenant = new_tenant()
    role = new_role(["quotes.read"])
    response = call(
        api,
        "PATCH",
        f"/auth/users/{created['locator']}",
        admin_token,
        {
            "firstName": "Renamed",
            "lastName": "Person",
            "email": "new@example.com",
            "tenants": [other_tenant],
            "roles": [role],
        },
    )
    updated = ok(response)
    assert updated == {
        **created,
        "firstName": "Renamed",
        "lastName": "Person",
        "email": "new@example.com",
        "tenants": [other_tenant],
        "roles": [role],
        "permissions": ["quotes.read", "users.custom"],
    }
    assert_event(response, "auth.user.update", admin_locator)
    assert ok(call(api, "GET", f"/auth/users/{created['locator']}", admin_token)) == updated


def test_a_user_updates_its_own_record_but_not_its_roles(api, tenant):
    locator, token = new_user([], [tenant])
    mine = {"firstName": "Self", "lastName": "Service", "tenants": [tenant]}
    assert ok(call(api, "PATCH", f"/auth/users/{locator}", token, mine))["firstName"] == "Self"
    assert_error(
        call(api, "PATCH", f"/auth/users/{locator}", token, {**mine, "roles": ["admin"]}), 403, "auth.permission_denied"
    )
    assert_error(
        call(api, "PATCH", f"/auth/users/{locator}", token, {**mine, "tenants": [tenant, new_tenant()]}),
        403,
        "auth.tenant_not_held",
    )
    assert ok(whoami(api, token))["roles"] == []
    other, _ = new_user([], [tenant])
    assert_error(call(api, "PATCH", f"/auth/users/{other}", token, mine), 403, "auth.permission_denied")


@pytest.mark.parametrize(
    "change, code",
    [
        ({"permissions": ["users.read"]}, "user.direct_permissions"),
        ({"locator": UNKNOWN_USER}, "request.invalid"),
        ({"version": 2}, "request.invalid"),
        ({"userName": "renamed@example.com"}, "request.invalid"),
        ({"tenants": "all"}, "request.invalid"),
        ({"tenants": ["all"]}, "request.invalid"),
        ({"email": "nope"}, "request.invalid"),
        ({"roles": ["no-such-role"]}, "role.unknown"),
    ],
)
def test_invalid_user_updates_answer_400_and_change_nothing(api, admin_token, change, code):
    created = ok(create_user(api, admin_token))
    body = {"firstName": "Changed", "lastName": "Name", "tenants": [], **change}
    assert_error(call(api, "PATCH", f"/auth/users/{created['locator']}", admin_token, body), 400, code)
    assert ok(call(api, "GET", f"/auth/users/{created['locator']}", admin_token)) == created


def test_update_an_unknown_user_answers_404(api, admin_token):
    body = {"firstName": "A", "lastName": "B", "tenants": []}
    assert_error(call(api, "PATCH", f"/auth/users/{UNKNOWN_USER}", admin_token, body), 404, "user.not_found")


# --- PATCH /auth/users/{locator}/passwordreset ---------------------------------------------------


def test_password_reset_sets_a_new_password_and_ends_sessions(api, admin_token, admin_locator, tenant):
    locator, name = user_with_password([tenant])
    session = ok(sign_in(api, name))["access_token"]
    response = call(api, "PATCH", f"/auth/users/{locator}/passwordreset", admin_token, "a brand new secret")
    assert response.status_code == 200 and response.body == b""
    assert_event(response, "auth.user.password.reset", admin_locator)
    assert_error(whoami(api, session), 401, "auth.token_revoked")
    assert_error(sign_in(api, name), 401, "auth.sign_in_failed")
    ok(sign_in(api, name, "a brand new secret"))


def test_password_reset_as_plain_text(api, admin_token):
    name = unique_name()
    created = ok(create_user(api, admin_token, userName=name))
    response = call(
        api,
        "PATCH",
        f"/auth/users/{created['locator']}/passwordreset",
        admin_token,
        raw=b"plain text secret",
        headers={"Content-Type": "text/plain"},
    )
    assert response.status_code == 200
    ok(sign_in(api, name, "plain text secret"))


def test_password_reset_refusals(api, admin_token):
    locator, _ = new_user([], [])
    _, stranger = new_user([], [])
    path = f"/auth/users/{locator}/passwordreset"
    assert_error(call(api, "PATCH", path, stranger, "a long enough secret"), 403, "auth.permission_denied")
    for bad in ("", 42, ["x"], {"password": "x"}):
        assert_error(call(api, "PATCH", path, admin_token, bad), 400, "request.invalid")
    assert_error(
        call(api, "PATCH", f"/auth/users/{UNKNOWN_USER}/passwordreset", admin_token, "secret"), 404, "user.not_found"
    )


# --- DELETE /auth/users/{locator} ----------------------------------------------------------------


def test_delete_user(api, admin_token, admin_locator):
    locator, token = new_user([], [])
    name = ok(whoami(api, token))["userName"]
    response = call(api, "DELETE", f"/auth/users/{locator}", admin_token)
    assert response.status_code == 200 and response.body == b""
    assert assert_event(response, "auth.user.delete", admin_locator)["data"] == {"userLocator": locator}
    assert_error(call(api, "GET", f"/auth/users/{locator}", admin_token), 404, "user.not_found")
    assert ok(call(api, "GET", f"/auth/users/username/{name}", admin_token)) == []
    assert_error(call(api, "DELETE", f"/auth/users/{locator}", admin_token), 404, "user.not_found")
    ok(create_user(api, admin_token, userName=name))  # the name is free again


def test_delete_user_refusals(api):
    locator, token = new_user(["users.delete"], [])
    other, other_token = new_user([], [])
    assert_error(call(api, "DELETE", f"/auth/users/{locator}", token), 409, "user.delete_self")
    assert_error(call(api, "DELETE", f"/auth/users/{locator}", other_token), 403, "auth.permission_denied")
    ok(whoami(api, token))
    ok(whoami(api, other_token))


# --- GET /auth/users/{locator}/permissions -------------------------------------------------------


def test_effective_permissions(api):
    locator, token = new_user(["accounts.read", "policies.*"], [])
    from chalicelib.identity import service
    from tests.builders import system_ctx

    service.update_user_roles(system_ctx(), locator, [new_role(["accounts.read", "billing.write"])], [])
    expected = ["accounts.read", "billing.write", "policies.*", "users.custom"]
    assert ok(call(api, "GET", f"/auth/users/{locator}/permissions", token)) == expected
    _, reader = new_user(["users.read"], [])
    assert ok(call(api, "GET", f"/auth/users/{locator}/permissions", reader)) == expected
    other, _ = new_user([], [])
    assert_error(call(api, "GET", f"/auth/users/{other}/permissions", token), 403, "auth.permission_denied")
    assert_error(call(api, "GET", f"/auth/users/{UNKNOWN_USER}/permissions", reader), 404, "user.not_found")


# --- PATCH /auth/users/{locator}/roles -----------------------------------------------------------


def test_add_and_remove_roles(api, admin_locator):
    _, manager = new_user(["users.update-roles", "quotes.read", "accounts.read"], [])
    locator, token = new_user(["accounts.read"], [])
    granted = new_role(["quotes.read"])
    held = ok(whoami(api, token))["roles"]
    response = call(api, "PATCH", f"/auth/users/{locator}/roles", manager, {"addRoles": [granted], "removeRoles": held})
    manager_locator = ok(whoami(api, manager))["locator"]
    updated = ok(response)
    assert updated["roles"] == [granted]
    assert updated["permissions"] == ["quotes.read", "users.custom"]
    assert_event(response, "auth.user.roles.update", manager_locator)
    assert ok(whoami(api, token))["roles"] == [granted]


def test_role_assignment_refusals(api, admin_token):
    locator, token = new_user([], [])
    path = f"/auth/users/{locator}/roles"
    assert_error(
        call(api, "PATCH", path, token, {"addRoles": ["admin"], "removeRoles": []}), 403, "auth.permission_denied"
    )
    body = assert_error(
        call(api, "PATCH", path, admin_token, {"addRoles": ["no-such-role"], "removeRoles": []}), 400, "role.unknown"
    )
    assert field_names(body) == {"roles"}
    assert_error(call(api, "PATCH", path, admin_token, {"addRoles": []}), 400, "request.invalid")
    assert_error(
        call(api, "PATCH", f"/auth/users/{UNKNOWN_USER}/roles", admin_token, {"addRoles": [], "removeRoles": []}),
        404,
        "user.not_found",
    )
    assert ok(whoami(api, token))["roles"] == []


# --- PATCH /auth/users/{locator}/tenants ---------------------------------------------------------


def test_add_and_remove_tenants(api, tenant):
    second, third = new_tenant(), new_tenant()
    _, manager = new_user(["users.update-tenants"], [tenant, second, third])
    locator, token = new_user([], [tenant, second])
    response = call(
        api, "PATCH", f"/auth/users/{locator}/tenants", manager, {"addTenants": [third], "removeTenants": [tenant]}
    )
    assert sorted(ok(response)["tenants"]) == sorted([second, third])
    assert_event(response, "auth.user.tenants.update", ok(whoami(api, manager))["locator"])
    assert sorted(ok(whoami(api, token))["tenants"]) == sorted([second, third])


def test_a_caller_cannot_grant_a_tenant_it_does_not_hold(api, tenant):
    _, manager = new_user(["users.update-tenants"], [tenant])
    locator, token = new_user([], [tenant])
    path = f"/auth/users/{locator}/tenants"
    for foreign in ([new_tenant()], ["any"]):
        assert_error(
            call(api, "PATCH", path, manager, {"addTenants": foreign, "removeTenants": []}), 403, "auth.tenant_not_held"
        )
    assert ok(whoami(api, token))["tenants"] == [tenant]


def test_tenant_assignment_refusals(api, admin_token, tenant):
    locator, token = new_user([], [tenant])
    path = f"/auth/users/{locator}/tenants"
    assert_error(
        call(api, "PATCH", path, token, {"addTenants": [], "removeTenants": [tenant]}), 403, "auth.permission_denied"
    )
    assert_error(
        call(api, "PATCH", path, admin_token, {"addTenants": [tenant], "removeTenants": [], "version": 1}),
        400,
        "request.invalid",
    )
    body = assert_error(
        call(api, "PATCH", path, admin_token, {"addTenants": ["tenant-1"], "removeTenants": []}), 400, "request.invalid"
    )
    assert field_names(body) == {"addTenants.0"}
    assert_error(
        call(api, "PATCH", f"/auth/users/{UNKNOWN_USER}/tenants", admin_token, {"addTenants": [], "removeTenants": []}),
        404,
        "user.not_found",
    )
