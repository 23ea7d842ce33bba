"""Tenant isolation over the whole route table, in both directions: tenants A and B each hold one record of
every kind (two worlds, built the same way); a caller who may do anything on its own tenant (a user holding
`*.*` on it only, or a named token restricted to it of a user holding every tenant) never reaches the
other's data. Every route with `{tenantLocator}` is sent the other tenant's valid request (its contract's
query and body, support.request_for):

- with the other tenant in the path: 403 `auth.tenant_forbidden`;
- with its own tenant and the other's locators, numbers and names in the path: 404, or an empty list where
  the answer is a list (lists of an unknown parent answer empty, DECISIONS.md "Lists and events");
- with its own tenant and a query or body naming the other's records: a 4xx;
- no answer carries one of the other tenant's locators, numbers or names (its tenant locator included).

So no cell that reaches the other tenant's data answers a 2xx but an empty list.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from app import app as chalice_app
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
    value_key,
    variables,
)
from tests.builders import unique_name
from tests.support.api import call, ok

TENANT_ROUTES = [route for route in routes(chalice_app) if "tenantLocator" in variables(route[0])]
DIRECTIONS = [("A", "B"), ("B", "A")]
"""(the caller's tenant, the tenant it must not reach)"""
CALLERS = ["user holding *.* on its tenant only", "token restricted to its tenant of a user holding any"]


@pytest.fixture(scope="module")
def worlds(app, admin_token) -> dict[str, World]:
    """Tenants A and B, each built by a builder of its own (holding every permission on every tenant)."""
    with module_client(app) as client:
        return {
            name: build_world(client, new_caller(client, admin_token, ["*.*"], ["any"]).token) for name in ("A", "B")
        }


@pytest.fixture(scope="module")
def callers(app, admin_token, worlds) -> dict[tuple[str, str], Caller]:
    """By (tenant, kind): a caller who may do anything on that tenant and nothing on the other."""
    found = {}
    with module_client(app) as client:
        for name, world in worlds.items():
            found[name, CALLERS[0]] = new_caller(client, admin_token, ["*.*"], [world.tenant])
            found[name, CALLERS[1]] = new_caller(client, admin_token, ["*.*"], ["any"], token_tenants=[world.tenant])
    return found


def _empty(answer: Any) -> bool:
    return answer == [] or (
        isinstance(answer, dict) and answer.get("items") == [] and set(answer) <= {"items", "listCompleted"}
    )


def _mentions(text: str, world: World, sent: str = "") -> list[str]:
    """The world's values in `text`, but for those the caller sent itself (a 404 names what it did not find)."""
    values = {**world.tenant_records, "tenantLocator": world.tenant}
    return [f"{key}={value}" for key, value in values.items() if value in text and value not in sent]


@pytest.mark.parametrize("kind", CALLERS)
@pytest.mark.parametrize("own, other", DIRECTIONS, ids=[f"{own}'s caller, {other}'s data" for own, other in DIRECTIONS])
@pytest.mark.parametrize("route", TENANT_ROUTES, ids=[route_id(r) for r in TENANT_ROUTES])
def test_a_caller_never_reaches_another_tenant(api, worlds, callers, route, own, other, kind):
    path, method, entry = route
    target, caller = worlds[other], callers[own, kind].token
    request = request_for(target, entry)
    problems = []

    forbidden = send(api, method, request.url(fill(path, target.values)), caller, request)
    answer = json.loads(forbidden.body)
    if (forbidden.status_code, answer.get("code")) != (403, "auth.tenant_forbidden"):
        problems.append(f"{other}'s tenant: {forbidden.status_code} {forbidden.body[:200]!r}")

    url = request.url(fill(path, target.values, tenantLocator=worlds[own].tenant))
    answered = send(api, method, url, caller, request)
    text = answered.body.decode("utf-8", "replace")
    answer = json.loads(answered.body) if answered.headers.get("Content-Type") == "application/json" else None
    sent = f"{url} {request.body.decode('utf-8', 'replace')}"
    records = [value_key(path, v) for v in variables(path) if value_key(path, v) in target.tenant_records]
    if records and not (answered.status_code == 404 or (answered.status_code == 200 and _empty(answer))):
        problems.append(f"{own}'s tenant with {other}'s {', '.join(records)}: {answered.status_code} {text[:200]}")
    if not records and _mentions(sent, target) and answered.status_code < 400:
        problems.append(
            f"{own}'s tenant with a query or body naming {other}'s records: {answered.status_code} {text[:200]}"
        )
    if answered.status_code >= 500:
        problems.append(f"{own}'s tenant: {answered.status_code} {text[:200]}")
    leaked = _mentions(text, target, sent) + _mentions(forbidden.body.decode("utf-8", "replace"), target, sent)
    if leaked:
        problems.append(f"{other}'s data in an answer: {', '.join(leaked)}")
    assert not problems, f"{method} {path}\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def tenant_users(app, admin_token, worlds) -> dict[str, str]:
    """Someone else holding one tenant only, by tenant: a caller may manage their tenants, but only within its
    own."""
    with module_client(app) as client:
        return {
            name: ok(
                call(
                    client,
                    "POST",
                    "/auth/users",
                    admin_token,
                    {"userName": unique_name(), "firstName": "Other", "lastName": "User", "tenants": [world.tenant]},
                )
            )["locator"]
            for name, world in worlds.items()
        }


@pytest.mark.parametrize("granted", ["the other tenant", "any"])
@pytest.mark.parametrize("kind", CALLERS)
@pytest.mark.parametrize("own, other", DIRECTIONS, ids=[f"{own}'s caller, {other}'s data" for own, other in DIRECTIONS])
def test_a_caller_cannot_hand_out_another_tenant(api, worlds, callers, tenant_users, own, other, kind, granted):
    caller, user = callers[own, kind].token, tenant_users[own]
    tenant = worlds[other].tenant if granted == "the other tenant" else "any"
    expires = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    attempts = [
        (
            "POST",
            "/auth/users/tokens",
            {"name": "wider", "expiresAt": expires, "permissions": ["accounts.read"], "tenants": [tenant]},
            "token.tenant_not_held",
        ),
        (
            "POST",
            "/auth/users",
            {"userName": unique_name("wider"), "firstName": "W", "lastName": "W", "tenants": [tenant]},
            "auth.tenant_not_held",
        ),
        ("PATCH", f"/auth/users/{user}/tenants", {"addTenants": [tenant], "removeTenants": []}, "auth.tenant_not_held"),
    ]
    for method, path, body, code in attempts:
        response = call(api, method, path, caller, body)
        assert (response.status_code, json.loads(response.body).get("code")) == (403, code), (path, response.body)
    assert ok(call(api, "GET", f"/auth/users/{user}", caller))["tenants"] == [worlds[own].tenant]
