"""The permission matrix over the whole route table, read from the routes' own declarations (@endpoint's
permissions and public flag; the view's query and body with its encoding, support.request_for), on a world
holding one record of every kind. Every call is the world's valid request for the route (real path
variables, its query, a valid body in the encoding it declares), so a refusal is no 400 or 404 in disguise.

- A caller holding every tenant and every permission but the route's own, and but the wildcards that would
  grant one of them (their groups' `group.*`, and `*.*`), is refused: 403 `auth.permission_denied`.
- Self-service: a caller holding only `group.custom` is refused another user's `{locator}` (403
  `auth.permission_denied`) on every route that allows it to the caller itself.
- A caller holding exactly one of the route's permissions, each in turn, on the world's tenant, gets past the
  permission check: any answer but 403 `auth.permission_denied` (a 404 or a 409 where the world's record
  does not fit the route, e.g. its one flag is an info flag of the quote, or an earlier call used it up),
  never a 5xx, and never a 400 about the request itself, which would mean the world's case is no valid
  request. With `group.custom`, the `{locator}` is the caller's own.

Callers are service accounts whose named token carries exactly the permissions listed (every user holds
`users.custom`; a named token carries only what it names), made through the API by the bootstrap
administrator. The exactly-one calls change the world, so they run last, the routes that use a record up
after the others (support.routes).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from app import app as chalice_app
from chalicelib.http.endpoint import SELF_SERVICE_SUFFIX
from tests.architecture.support import (
    Caller,
    World,
    build_world,
    fill,
    module_client,
    new_caller,
    request_for,
    route_id,
    routes,
    send,
    spec_of,
    variables,
)

GUARDED = [route for route in routes(chalice_app) if not spec_of(route[2]).public]
SELF_SERVICE = [
    route
    for route in GUARDED
    if "locator" in variables(route[0]) and any(p.endswith(SELF_SERVICE_SUFFIX) for p in spec_of(route[2]).permissions)
]
GRANTS = [(route, permission) for route in GUARDED for permission in spec_of(route[2]).permissions]
DECLARED = {permission for route in GUARDED for permission in spec_of(route[2]).permissions}
GROUPS = {permission.partition(".")[0] for permission in DECLARED}
DENIED = (403, "auth.permission_denied")


def all_but(permissions: Iterable[str]) -> set[str]:
    """Every permission the route table declares and the wildcard of every group, but `permissions` and the
    wildcards that would grant one of them (their groups' `group.*`; `*.*` is never held)."""
    excluded = set(permissions)
    groups = {permission.partition(".")[0] for permission in excluded}
    return (DECLARED - excluded) | {f"{group}.*" for group in GROUPS - groups}


class Callers:
    """Callers made through the API by the bootstrap administrator when first asked for, one per set of
    permissions and tenants."""

    def __init__(self, admin: str) -> None:
        self.admin = admin
        self.made: dict[tuple[frozenset[str], tuple[str, ...]], Caller] = {}

    def holding(self, api: Any, permissions: Iterable[str], tenants: list[str]) -> Caller:
        key = (frozenset(permissions), tuple(tenants))
        if key not in self.made:
            self.made[key] = new_caller(api, self.admin, key[0], tenants)
        return self.made[key]


@pytest.fixture(scope="module")
def world(app, admin_token) -> World:
    with module_client(app) as client:
        return build_world(client, new_caller(client, admin_token, ["*.*"], ["any"]).token)


@pytest.fixture(scope="module")
def callers(admin_token) -> Callers:
    return Callers(admin_token)


def _answer(response: Any) -> tuple[int, str | None]:
    """The status and, for an error, its code."""
    if response.status_code < 400 or response.headers.get("Content-Type") != "application/json":
        return response.status_code, None
    return response.status_code, json.loads(response.body).get("code")


def _call(
    api: Any, world: World, route: tuple[str, str, Any], caller: Caller, permission: str | None = None, **overrides: str
) -> Any:
    path, method, entry = route
    request = request_for(world, entry, permission)
    return send(api, method, request.url(fill(path, world.values, **overrides)), caller.token, request)


@pytest.mark.parametrize("route", GUARDED, ids=[route_id(r) for r in GUARDED])
def test_a_caller_without_the_routes_permissions_is_refused(api, world, callers, route):
    permissions = spec_of(route[2]).permissions
    caller = callers.holding(api, all_but(permissions), ["any"])

    response = _call(api, world, route, caller)

    assert _answer(response) == DENIED, (
        f"{route_id(route)} without {' or '.join(permissions)}: {response.status_code} {response.body[:300]!r}"
    )


@pytest.mark.parametrize("route", SELF_SERVICE, ids=[route_id(r) for r in SELF_SERVICE])
def test_self_service_never_reaches_another_users_locator(api, world, callers, route):
    custom = [p for p in spec_of(route[2]).permissions if p.endswith(SELF_SERVICE_SUFFIX)]
    caller = callers.holding(api, custom, [world.tenant])

    response = _call(api, world, route, caller)  # {locator}: the world's user, not the caller

    assert _answer(response) == DENIED, f"{route_id(route)}: {response.status_code} {response.body[:300]!r}"


@pytest.mark.parametrize("route, permission", GRANTS, ids=[f"{route_id(r)} with {p}" for r, p in GRANTS])
def test_each_declared_permission_gets_past_the_permission_check(api, world, callers, admin_token, route, permission):
    if permission.endswith(SELF_SERVICE_SUFFIX):
        # on itself (its own {locator}), which it may change, revoke or delete: a caller of its own
        caller = new_caller(api, admin_token, [permission], [world.tenant])
        overrides = {"locator": caller.locator} if "locator" in variables(route[0]) else {}
    else:
        caller, overrides = callers.holding(api, [permission], [world.tenant]), {}

    response = _call(api, world, route, caller, permission, **overrides)

    status, code = _answer(response)
    seen = f"{route_id(route)} with {permission}: {status} {response.body[:300]!r}"
    assert (status, code) != DENIED, seen
    assert status < 500, seen
    assert not (status == 400 and (code or "").startswith("request.")), (
        f"{seen}\nthe world's request is not valid: fix World.bodies or World.queries[{route[2].view_name!r}] "
        "in build_world()"
    )
