"""The six role endpoints."""

from __future__ import annotations

import re
import uuid

import pytest

from chalicelib.core.clock import isoformat
from tests.api.identity.support import (
    assert_error,
    assert_event,
    events_of,
    field_names,
    list_length,
    role_body,
    role_name,
    user_with_role,
    whoami,
)
from tests.builders import new_user
from tests.support.api import call, ok

ROLE_FIELDS = {"locator", "name", "description", "version", "createdAt", "createdBy", "permissions"}
UNKNOWN_ROLE = "01J0000000000000000000000Z"
ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")


def create_role(api, token, **fields):
    return call(api, "POST", "/auth/roles", token, role_body(**fields))


def update(role, **changes):
    """A RoleUpdateRequest that keeps `role` as it is, plus `changes`."""
    return {
        "name": role["name"],
        "description": role["description"],
        "version": role["version"],
        "addPermissions": [],
        "removePermissions": [],
        **changes,
    }


# --- POST /auth/roles ----------------------------------------------------------------------------


def test_create_role_answers_the_role_response(api, admin_token, admin_locator, clock):
    name = role_name()
    response = call(
        api,
        "POST",
        "/auth/roles",
        admin_token,
        {
            "name": name,
            "description": "Underwriters",
            "permissions": ["quotes.underwrite", "quotes.read", "accounts.*", "quotes.read"],
        },
    )
    role = ok(response)
    assert set(role) == ROLE_FIELDS
    assert ULID.match(role["locator"])
    assert {k: v for k, v in role.items() if k != "locator"} == {
        "name": name,
        "description": "Underwriters",
        "version": 1,
        "createdAt": isoformat(clock.now()),
        "createdBy": admin_locator,
        "permissions": ["accounts.*", "quotes.read", "quotes.underwrite"],
    }
    event = assert_event(response, "auth.role.create", admin_locator)
    assert event["data"] == {"roleLocator": role["locator"]}
    assert event["timestamp"] == isoformat(clock.now())
    assert ok(call(api, "GET", f"/auth/roles/{role['locator']}", admin_token)) == role


def test_role_names_are_unique_whatever_their_case(api, admin_token):
    name = role_name()
    ok(create_role(api, admin_token, name=name))
    assert_error(create_role(api, admin_token, name=name), 409, "role.name_taken")
    assert_error(create_role(api, admin_token, name=name.upper()), 409, "role.name_taken")


@pytest.mark.parametrize("permission", ["*.read", "nodot", "users.", ".read", "a.b.c", "users read", "*", ""])
def test_invalid_permission_names_answer_400(api, admin_token, permission):
    body = assert_error(
        create_role(api, admin_token, permissions=["users.read", permission]),
        400,
        "role.invalid_permission" if permission else "request.invalid",
    )
    assert field_names(body) == {"permissions[1]" if permission else "permissions.1"}


@pytest.mark.parametrize(
    "change, field",
    [
        ({"locator": UNKNOWN_ROLE}, "locator"),
        ({"version": 1}, "version"),
        ({"createdAt": "2026-01-01T00:00:00Z"}, "createdAt"),
        ({"createdBy": "00000000-0000-4000-8000-000000000000"}, "createdBy"),
        ({"name": "has space"}, "name"),
        ({"name": ""}, "name"),
        ({"description": None}, "description"),
        ({"permissions": "users.read"}, "permissions"),
        ({"permissions": [1]}, "permissions.0"),
    ],
)
def test_invalid_role_creation_answers_400(api, admin_token, change, field):
    assert field in field_names(assert_error(create_role(api, admin_token, **change), 400, "request.invalid"))


def test_role_creation_with_malformed_or_oversized_bodies(api, admin_token):
    assert_error(
        call(api, "POST", "/auth/roles", admin_token, raw=b"{'name': 'single quotes'}"), 400, "request.malformed_json"
    )
    assert_error(call(api, "POST", "/auth/roles", admin_token, raw=b'"just a string"'), 400, "request.invalid")
    oversized = role_body(description="d" * (1024 * 1024))
    assert_error(call(api, "POST", "/auth/roles", admin_token, oversized), 413, "request.too_large")


def test_a_role_with_roles_read_cannot_create_roles(api):
    _, reader = new_user(["roles.read"], [])
    assert_error(create_role(api, reader), 403, "auth.permission_denied")
    _, adder = new_user(["roles.add", "accounts.read"], [])  # a role of accounts.read
    ok(create_role(api, adder))


def test_create_role_is_idempotent_with_a_key(api, admin_token):
    key = {"X-Idempotency-Key": str(uuid.uuid4())}
    body = role_body()
    first = call(api, "POST", "/auth/roles", admin_token, body, headers=key)
    again = call(api, "POST", "/auth/roles", admin_token, body, headers=key)
    assert again.status_code == 200
    assert again.body == first.body
    assert events_of(again) == []
    created = ok(first)
    offset = list_length(api, admin_token, "/auth/roles/list") - 1
    assert ok(call(api, "GET", f"/auth/roles/list?offset={offset}&count=1", admin_token))["items"] == [created]
    different = call(api, "POST", "/auth/roles", admin_token, role_body(), headers=key)
    assert_error(different, 409, "idempotency.key_reused")
    # another key, the same body: a second role with that name is a conflict, not a replay
    assert_error(
        call(api, "POST", "/auth/roles", admin_token, body, headers={"X-Idempotency-Key": "other"}),
        409,
        "role.name_taken",
    )


def test_idempotency_keys_belong_to_their_caller(api):
    _, first_caller = new_user(["roles.add", "accounts.read"], [])
    _, second_caller = new_user(["roles.add", "accounts.read"], [])
    key = {"X-Idempotency-Key": "shared-key"}
    ok(call(api, "POST", "/auth/roles", first_caller, role_body(), headers=key))
    ok(call(api, "POST", "/auth/roles", second_caller, role_body(), headers=key))


# --- GET /auth/roles/{locator} -------------------------------------------------------------------


def test_fetch_role(api, admin_token):
    role = ok(create_role(api, admin_token))
    _, reader = new_user(["roles.read"], [])
    assert ok(call(api, "GET", f"/auth/roles/{role['locator']}", reader)) == role
    assert_error(call(api, "GET", f"/auth/roles/{UNKNOWN_ROLE}", reader), 404, "role.not_found")
    _, plain = new_user([], [])
    assert_error(call(api, "GET", f"/auth/roles/{role['locator']}", plain), 403, "auth.permission_denied")


# --- PATCH /auth/roles/{locator} -----------------------------------------------------------------


def test_update_role(api, admin_token, admin_locator):
    role = ok(create_role(api, admin_token, permissions=["accounts.read", "quotes.read"]))
    renamed = role_name()
    response = call(
        api,
        "PATCH",
        f"/auth/roles/{role['locator']}",
        admin_token,
        update(
            role,
            name=renamed,
            description="Changed",
            addPermissions=["policies.*", "accounts.read"],
            removePermissions=["quotes.read", "never.held"],
        ),
    )
    updated = ok(response)
    assert updated == {
        **role,
        "name": renamed,
        "description": "Changed",
        "version": 2,
        "permissions": ["accounts.read", "policies.*"],
    }
    assert assert_event(response, "auth.role.update", admin_locator)["data"] == {"roleLocator": role["locator"]}
    assert ok(call(api, "GET", f"/auth/roles/{role['locator']}", admin_token)) == updated
    ok(create_role(api, admin_token, name=role["name"]))  # the old name is free again


def test_a_stale_version_answers_409_and_changes_nothing(api, admin_token):
    role = ok(create_role(api, admin_token))
    path = f"/auth/roles/{role['locator']}"
    current = ok(call(api, "PATCH", path, admin_token, update(role, description="v2")))
    stale = call(api, "PATCH", path, admin_token, update(role, description="lost update"))
    assert_error(stale, 409, "conflict.concurrent_modification")
    assert_error(
        call(api, "PATCH", path, admin_token, update(role, version=7)), 409, "conflict.concurrent_modification"
    )
    assert ok(call(api, "GET", path, admin_token)) == current


def test_renaming_onto_a_taken_name_answers_409(api, admin_token):
    taken = ok(create_role(api, admin_token))
    role = ok(create_role(api, admin_token))
    path = f"/auth/roles/{role['locator']}"
    assert_error(
        call(api, "PATCH", path, admin_token, update(role, name=taken["name"].upper())), 409, "role.name_taken"
    )
    assert ok(call(api, "GET", path, admin_token)) == role


@pytest.mark.parametrize(
    "change, code",
    [
        ({"addPermissions": ["*.write"]}, "role.invalid_permission"),
        ({"addPermissions": "users.read"}, "request.invalid"),
        ({"version": "one"}, "request.invalid"),
        ({"version": 1.5}, "request.invalid"),
        ({"createdBy": "00000000-0000-4000-8000-000000000000"}, "request.invalid"),
        ({"permissions": ["users.read"]}, "request.invalid"),
    ],
)
def test_invalid_role_updates_answer_400_and_change_nothing(api, admin_token, change, code):
    role = ok(create_role(api, admin_token))
    path = f"/auth/roles/{role['locator']}"
    assert_error(call(api, "PATCH", path, admin_token, update(role, **change)), 400, code)
    assert ok(call(api, "GET", path, admin_token)) == role


def test_a_role_update_without_version_answers_400(api, admin_token):
    role = ok(create_role(api, admin_token))
    body = update(role)
    del body["version"]
    assert "version" in field_names(
        assert_error(call(api, "PATCH", f"/auth/roles/{role['locator']}", admin_token, body), 400, "request.invalid")
    )


def test_update_role_refusals(api, admin_token):
    role = ok(create_role(api, admin_token))
    _, reader = new_user(["roles.read"], [])
    assert_error(
        call(api, "PATCH", f"/auth/roles/{role['locator']}", reader, update(role)), 403, "auth.permission_denied"
    )
    assert_error(call(api, "PATCH", f"/auth/roles/{UNKNOWN_ROLE}", admin_token, update(role)), 404, "role.not_found")


def test_a_role_update_changes_what_its_holders_may_do(api, admin_token):
    role = ok(create_role(api, admin_token, permissions=["users.read"]))
    locator, token = user_with_role(role["name"], ["users.read", "users.custom"])
    ok(call(api, "GET", "/auth/users/list?count=1", token))
    ok(
        call(
            api,
            "PATCH",
            f"/auth/roles/{role['locator']}",
            admin_token,
            update(role, addPermissions=["accounts.read"], removePermissions=["users.read"]),
        )
    )
    assert ok(call(api, "GET", f"/auth/users/{locator}/permissions", token)) == ["accounts.read", "users.custom"]
    assert_error(call(api, "GET", "/auth/users/list?count=1", token), 403, "auth.permission_denied")


# --- GET /auth/roles/list ------------------------------------------------------------------------


def test_role_list_pages_by_offset_and_count_oldest_first(api, admin_token):
    mine = [ok(create_role(api, admin_token)) for _ in range(3)]
    start = list_length(api, admin_token, "/auth/roles/list") - 3  # the newest three

    def page(offset, count, extended=""):
        return ok(call(api, "GET", f"/auth/roles/list?offset={offset}&count={count}{extended}", admin_token))

    assert page(start, 3) == {"listCompleted": True, "items": mine}
    assert page(start, 2) == {"listCompleted": False, "items": mine[:2]}
    assert page(start + 1, 2) == {"listCompleted": True, "items": mine[1:]}
    assert page(start + 3, 1) == {"listCompleted": True, "items": []}
    assert page(start, 2, "&extended=false") == {"listCompleted": False, "items": mine[:2]}
    assert page(start - 1, 2)["items"][1] == mine[0]


def test_role_list_defaults_to_the_first_twenty(api, admin_token):
    default = ok(call(api, "GET", "/auth/roles/list", admin_token))
    assert len(default["items"]) == min(20, list_length(api, admin_token, "/auth/roles/list"))
    assert default == ok(call(api, "GET", "/auth/roles/list?offset=0&count=20", admin_token))
    assert all(set(role) == ROLE_FIELDS for role in default["items"])


@pytest.mark.parametrize(
    "query, field", [("count=101", "count"), ("count=0", "count"), ("offset=-1", "offset"), ("offset=x", "offset")]
)
def test_invalid_role_paging_answers_400(api, admin_token, query, field):
    body = assert_error(call(api, "GET", f"/auth/roles/list?{query}", admin_token), 400, "request.invalid")
    assert field_names(body) == {field}


def test_role_list_needs_roles_read_or_roles_list(api):
    _, plain = new_user(["users.read"], [])
    _, lister = new_user(["roles.list"], [])
    assert_error(call(api, "GET", "/auth/roles/list", plain), 403, "auth.permission_denied")
    assert len(ok(call(api, "GET", "/auth/roles/list?count=1", lister))["items"]) == 1


# --- DELETE /auth/roles/{locator} ----------------------------------------------------------------


def test_delete_role(api, admin_token, admin_locator):
    role = ok(create_role(api, admin_token, permissions=["accounts.read"]))
    _, token = user_with_role(role["name"], ["accounts.read", "users.custom"])
    assert ok(whoami(api, token))["roles"] == [role["name"]]
    response = call(api, "DELETE", f"/auth/roles/{role['locator']}", admin_token)
    assert response.status_code == 200 and response.body == b""
    assert assert_event(response, "auth.role.delete", admin_locator)["data"] == {"roleLocator": role["locator"]}
    assert_error(call(api, "GET", f"/auth/roles/{role['locator']}", admin_token), 404, "role.not_found")
    me = ok(whoami(api, token))
    assert me["roles"] == [] and me["permissions"] == ["users.custom"]
    assert_error(call(api, "DELETE", f"/auth/roles/{role['locator']}", admin_token), 404, "role.not_found")
    ok(create_role(api, admin_token, name=role["name"]))  # the name is free again


def test_delete_role_needs_roles_delete(api, admin_token):
    role = ok(create_role(api, admin_token))
    _, updater = new_user(["roles.update", "roles.read"], [])
    assert_error(call(api, "DELETE", f"/auth/roles/{role['locator']}", updater), 403, "auth.permission_denied")
    assert ok(call(api, "GET", f"/auth/roles/{role['locator']}", updater)) == role


# --- GET /auth/roles/permissions -----------------------------------------------------------------


def test_permissions_are_exactly_those_the_routes_check(api, app):
    from_routes = {
        permission
        for methods in app.routes.values()
        for entry in methods.values()
        for permission in entry.view_function.__endpoint__.permissions
    }
    _, reader = new_user(["roles.read"], [])
    listed = ok(call(api, "GET", "/auth/roles/permissions", reader))
    assert listed == sorted(listed)
    assert set(listed) == from_routes
    assert {"users.custom", "users.read", "roles.add", "roles.read"} <= from_routes
    _, plain = new_user([], [])
    assert_error(call(api, "GET", "/auth/roles/permissions", plain), 403, "auth.permission_denied")
