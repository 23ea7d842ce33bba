"""Who may call the account endpoints: 401 without a token, 403 without the permission (each listed one
suffices), 404 for another tenant's account. Without access to the tenant:
tests/architecture/test_tenant_isolation.py, over every route."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.accounts.support import CONTACT, OTHER_CONTACT, accounts, create, person
from tests.builders import new_user
from tests.support.api import assert_error, call, ok
from tests.support.configs import configured_tenant

# (method, path below /policy/{tenantLocator}/accounts with {a} for the account, body, permissions that suffice)
ENDPOINTS: list[tuple[str, str, Any, list[str]]] = [
    ("GET", "/{a}", None, ["accounts.read"]),
    ("GET", "/list", None, ["accounts.read", "accounts.list"]),
    ("POST", "", person(), ["accounts.write"]),
    ("PATCH", "/{a}", {"setData": {}}, ["accounts.write"]),
    ("PUT", "/{a}", person(), ["accounts.write"]),
    ("PATCH", "/{a}/validate", None, ["accounts.write"]),
    ("POST", "/{a}/contacts", {"contactLocator": OTHER_CONTACT, "roles": []}, ["accounts.write"]),
    ("DELETE", f"/{{a}}/contacts/{CONTACT}", None, ["accounts.write"]),
    ("PATCH", f"/{{a}}/contacts/{CONTACT}", {"addRoles": []}, ["accounts.write"]),
    ("GET", "/{a}/contacts", None, ["accounts.write"]),
    ("PATCH", "/{a}/billingLevel", {"billingLevel": "policy"}, ["accounts.write"]),
    ("GET", "/numbers/AC-A998", None, ["accounts.read", "accounts.list"]),
    ("POST", "/{a}/number/set?accountNumber=N-1", None, ["accounts.write"]),
    ("POST", "/{a}/number/generate", None, ["accounts.write"]),
    ("POST", "/{a}/constraints/evaluate", {}, ["accounts.read"]),
    ("GET", "/{a}/constraints/dependency", None, ["accounts.read"]),
]
IDS = [f"{method} {path}" for method, path, _, _ in ENDPOINTS]


@pytest.fixture
def account(api, admin_token, tenant) -> str:
    return create(
        api, admin_token, tenant, person(contacts=[{"contactLocator": CONTACT, "roles": []}], autoValidate=True)
    )["locator"]


def path_of(tenant: str, path: str, account: str) -> str:
    return accounts(tenant, path.replace("{a}", account))


@pytest.mark.parametrize("method, path, body, permissions", ENDPOINTS, ids=IDS)
def test_without_a_token_every_endpoint_is_a_401(api, tenant, account, method, path, body, permissions):
    assert_error(call(api, method, path_of(tenant, path, account), None, body), 401, "auth.token_missing")


@pytest.mark.parametrize("method, path, body, permissions", ENDPOINTS, ids=IDS)
def test_each_listed_permission_suffices_and_others_do_not(api, tenant, account, method, path, body, permissions):
    others = sorted({"accounts.read", "accounts.list", "accounts.write"} - set(permissions)) + ["policies.read"]
    _, token = new_user(others, [tenant])
    assert_error(call(api, method, path_of(tenant, path, account), token, body), 403, "auth.permission_denied")
    for permission in permissions:
        _, token = new_user([permission], [tenant])
        response = call(api, method, path_of(tenant, path, account), token, body)
        assert response.status_code == 200, (permission, response.body)


@pytest.mark.parametrize(
    "method, path, body, permissions",
    [e for e in ENDPOINTS if "{a}" in e[1]],
    ids=[i for i, e in zip(IDS, ENDPOINTS) if "{a}" in e[1]],
)
def test_another_tenants_account_is_a_404(api, admin_token, tenant, account, method, path, body, permissions):
    other = configured_tenant(api, admin_token)
    assert_error(call(api, method, path_of(other, path, account), admin_token, body), 404, "account.not_found")


def test_another_tenants_number_is_a_404(api, admin_token, tenant, account):
    other = configured_tenant(api, admin_token)
    assert ok(call(api, "GET", accounts(tenant, "/numbers/AC-A998"), admin_token))[0]["locator"] == account
    assert_error(call(api, "GET", accounts(other, "/numbers/AC-A998"), admin_token), 404, "account.not_found")


def test_a_tenant_locator_that_is_no_uuid_is_a_404(api, admin_token):
    assert_error(call(api, "GET", "/policy/not-a-tenant/accounts/list", admin_token), 404, "tenant.not_found")


def test_an_unknown_token_is_a_401(api, tenant, account):
    response = call(api, "GET", accounts(tenant, f"/{account}"), "pas.unknown.token")
    assert response.status_code == 401
    assert "data" not in response.body.decode()
