"""Tenant isolation over the whole route table: tenant A holds one record of every kind; a caller who may
do anything on tenant B (a user holding `*.*` on B only, or a named token restricted to B of a user
holding every tenant) never reaches A's data.

- Every route with `{tenantLocator}`, called with A's tenant: 403 `auth.tenant_forbidden`.
- Called with B's tenant and A's locators, numbers and names in the path: 404, or an empty list where
  the answer is a list (lists of an unknown parent answer empty, DECISIONS.md "Lists and events").
- Called with B's tenant and a body naming A's records: a 4xx.
- No answer anywhere carries one of A's locators or numbers.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from app import app as chalice_app
from tests.api.quotes.support import new_account
from tests.architecture.support import World, fill, make_world, route_id, routes, value_key, variables
from tests.builders import new_user
from tests.support.api import call, ok
from tests.support.configs import QUOTE_PLUGINS, deployed_tenant, package_with_files, quotes_model

TENANT_ROUTES = [route for route in routes(chalice_app) if "tenantLocator" in variables(route[0])]
CALLERS = ["user holding *.* on B only", "token restricted to B of a user holding any"]


@pytest.fixture(scope="module")
def admin(app) -> str:
    return new_user(["*.*"], ["any"])[1]


@pytest.fixture(scope="module")
def world(app, admin) -> World:
    """Tenant A."""
    return make_world(app, admin)


@pytest.fixture(scope="module")
def tenant_b(app, admin) -> str:
    """The same configuration as A, no tables uploaded, and an account of its own (so B's lists are not
    empty by accident)."""
    from chalice.test import Client

    from tests.conftest import ROOT

    with Client(app, stage_name="test", project_dir=str(ROOT)) as client:
        tenant = deployed_tenant(client, admin, package_with_files(
            quotes_model(), {"plugins/python/auto.py": QUOTE_PLUGINS.encode()}))
        new_account(client, admin, tenant)
    return tenant


@pytest.fixture(scope="module", params=CALLERS)
def caller(request, app, tenant_b) -> str:
    if request.param == CALLERS[0]:
        return new_user(["*.*"], [tenant_b])[1]
    from chalice.test import Client

    from tests.conftest import ROOT

    owner = new_user(["*.*"], ["any"])[1]
    expires = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    with Client(app, stage_name="test", project_dir=str(ROOT)) as client:
        return ok(call(client, "POST", "/auth/users/tokens", owner, {
            "name": "only-b", "expiresAt": expires, "permissions": ["*.*"], "tenants": [tenant_b]}))


def _requests(world: World) -> dict[str, tuple[str, Any]]:
    """(query, body) a route needs so that its answer depends on finding the record in the path, by
    route function name; every other route gets no query and `{}`."""
    values = world.values
    return {
        **{name: ("", body) for name, body in world.bodies.items()},
        "update_account_billing_level": ("", {"billingLevel": "account"}),
        "update_policy_billing_level": ("", {"billingLevel": "account"}),
        "update_policy_delinquency_plan": ("", {"delinquencyPlanName": "Lenient"}),
        "update_policy_jurisdiction": ("", {"jurisdiction": "CA"}),
        "add_account_contact": ("", {"contactLocator": values["accounts/contacts"], "roles": ["billing"]}),
        "add_policy_contact": ("", {"contactLocator": values["policies/contacts"], "roles": ["billing"]}),
        "set_account_number": ("accountNumber=B-1", None),
        "set_policy_number": ("policyNumber=B-1", None),
        "set_quote_number": ("quoteNumber=B-1", None),
        "set_quote_reserved_policy_number": ("reservedPolicyNumber=B-1", None),
        "list_events": (f"pagingToken={values['pagingToken']}", None),
        "fetch_policy_snapshot": ("date=2026-06-01T00:00:00Z", None),
        "fetch_table_record": ("key=web", None),
        "fetch_range_table_record": ("key=auto&boundValue=3", None),
        "fetch_constraint_record": ("key=CA", None),
        "add_quote_elements": ("", []),
        "remove_quote_elements": ("", []),
        "add_transaction_elements": ("", []),
        "remove_transaction_elements": ("", []),
        "update_transaction_elements": ("", {"locator": values["segmentLocator"]}),
        "reverse_policy_change": ("", {"baseLocator": values["transactions/locator"], "toTransaction": values[
            "transactions/locator"], "reverseTransactions": [values["transactions/locator"]]}),
    }


def _send(api: Any, method: str, path: str, token: str, content_type: str, query: str, body: Any) -> Any:
    data = b"" if body is None else json.dumps(body).encode()
    return api.http.request(method, f"{path}?{query}" if query else path, body=data, headers={
        "Authorization": f"Bearer {token}", "Content-Type": content_type, "Accept": "*/*"})


def _empty(answer: Any) -> bool:
    return answer == [] or (isinstance(answer, dict) and answer.get("items") == [] and set(answer) <= {
        "items", "listCompleted"})


def _mentions(text: str, world: World, sent: str = "") -> list[str]:
    """A's values in `text`, but for those the caller sent itself (a 404 names what it did not find)."""
    return [f"{key}={value}" for key, value in world.tenant_records.items() if value in text and value not in sent]


@pytest.mark.parametrize("route", TENANT_ROUTES, ids=[route_id(r) for r in TENANT_ROUTES])
def test_a_caller_of_tenant_b_never_reaches_tenant_a(api, world, tenant_b, caller, route):
    path, method, entry = route
    content_type = (entry.content_types or ["application/json"])[0]
    query, body = _requests(world).get(entry.view_name, ("", {}))
    body = body if content_type == "application/json" else None
    problems = []

    forbidden = _send(api, method, fill(path, world.values), caller, content_type, query, body)
    answer = json.loads(forbidden.body)
    if (forbidden.status_code, answer.get("code")) != (403, "auth.tenant_forbidden"):
        problems.append(f"tenant A: {forbidden.status_code} {forbidden.body[:200]!r}")

    url = fill(path, world.values, tenantLocator=tenant_b)
    own = _send(api, method, url, caller, content_type, query, body)
    text = own.body.decode("utf-8", "replace")
    answer = json.loads(own.body) if own.headers.get("Content-Type") == "application/json" else None
    names_a_record = [v for v in variables(path) if v != "tenantLocator"]
    if names_a_record and not (own.status_code == 404 or (own.status_code == 200 and _empty(answer))):
        problems.append(f"tenant B with A's {', '.join(value_key(path, v) for v in names_a_record)}: "
                        f"{own.status_code} {text[:200]}")
    if not names_a_record and _mentions(json.dumps(body), world) and own.status_code < 400:
        problems.append(f"tenant B with a body naming A's records: {own.status_code} {text[:200]}")
    if own.status_code >= 500:
        problems.append(f"tenant B: {own.status_code} {text[:200]}")
    sent = f"{url}?{query} {json.dumps(body)}"
    leaked = _mentions(text, world, sent) + _mentions(forbidden.body.decode("utf-8", "replace"), world, sent)
    if leaked:
        problems.append(f"A's data in an answer: {', '.join(leaked)}")
    assert not problems, f"{method} {path}\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def user_of_b(tenant_b) -> str:
    """Someone else holding tenant B only: the caller may manage their tenants, but only within its own."""
    return new_user([], [tenant_b])[0]


@pytest.mark.parametrize("tenant", ["A", "any"])
def test_a_caller_of_tenant_b_cannot_hand_out_tenant_a(api, world, tenant_b, caller, user_of_b, tenant):
    granted = world.tenant if tenant == "A" else "any"
    expires = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    attempts = [
        ("POST", "/auth/users/tokens", {"name": "wider", "expiresAt": expires, "permissions": ["accounts.read"],
                                        "tenants": [granted]}, "token.tenant_not_held"),
        ("POST", "/auth/users", {"userName": f"wider-{user_of_b.lower()}@example.com", "firstName": "W",
                                 "lastName": "W", "tenants": [granted]}, "auth.tenant_not_held"),
        ("PATCH", f"/auth/users/{user_of_b}/tenants", {"addTenants": [granted], "removeTenants": []},
         "auth.tenant_not_held"),
    ]
    for method, path, body, code in attempts:
        response = call(api, method, path, caller, body)
        assert (response.status_code, json.loads(response.body).get("code")) == (403, code), (path, response.body)
    assert ok(call(api, "GET", f"/auth/users/{user_of_b}", caller))["tenants"] == [tenant_b]

