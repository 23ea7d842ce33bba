"""Authentication costs one DynamoDB round trip: token, owner and roles version in one BatchGetItem;
the roles come from a per-process cache that the version, bumped by every role change, keeps exact."""

from __future__ import annotations

from tests.api.identity.support import assert_error, role_name, whoami
from tests.builders import new_user, system_ctx
from tests.support.api import call, ok


def calls_of(ddb_calls: list[str], request) -> list[str]:
    ddb_calls.clear()
    request()
    return list(ddb_calls)


def a_role(permissions: list[str]):
    from chalicelib.identity import service

    return service.create_role(system_ctx(), name=role_name(), description="round trips", permissions=permissions)


def test_whoami_costs_one_round_trip(api, ddb_calls):
    _, token = new_user(["accounts.read", "policies.read"], [])
    ok(whoami(api, token))  # this process may not know the role yet
    assert calls_of(ddb_calls, lambda: ok(whoami(api, token))) == ["BatchGetItem"]


def test_a_get_by_locator_costs_authentication_plus_one_read(api, ddb_calls):
    _, token = new_user(["users.read", "roles.read", "accounts.read"], [])
    other, _ = new_user(["accounts.read"], [])
    role = a_role(["accounts.read"])
    for path in (f"/auth/users/{other}", f"/auth/roles/{role.locator}"):
        ok(call(api, "GET", path, token))
        assert calls_of(ddb_calls, lambda p=path: ok(call(api, "GET", p, token))) == ["BatchGetItem", "GetItem"]


def test_a_role_change_takes_effect_on_the_next_request(api, ddb_calls):
    from chalicelib.identity import service
    from chalicelib.identity.models import UserFields

    role = a_role(["roles.read", "accounts.read"])
    holder = service.create_user(
        system_ctx(),
        UserFields(userName=role_name() + "@example.com", firstName="H", lastName="R", roles=[role.name]),
        enable_user=True,
    )
    token = service.create_token(
        system_ctx(),
        holder.user.locator,
        name="t",
        tenants=[],
        permissions=["roles.read", "accounts.read", "users.custom"],
        expires_at=system_ctx().now.replace(year=2030),
    )
    ok(call(api, "GET", "/auth/roles/list?count=1", token))
    ok(call(api, "GET", "/auth/roles/list?count=1", token))

    service.update_role(
        system_ctx(),
        role.locator,
        name=role.name,
        description=role.description,
        version=role.version,
        add_permissions=[],
        remove_permissions=["roles.read"],
    )
    ddb_calls.clear()
    refused = call(api, "GET", "/auth/roles/list?count=1", token)
    assert ddb_calls == ["BatchGetItem", "BatchGetItem"]  # the stale cache is refreshed once
    assert_error(refused, 403, "auth.permission_denied")
    assert ok(whoami(api, token))["permissions"] == ["accounts.read", "users.custom"]

    service.delete_role(system_ctx(), role.locator)
    assert ok(whoami(api, token))["permissions"] == ["users.custom"]
    assert calls_of(ddb_calls, lambda: ok(whoami(api, token))) == ["BatchGetItem"]
