"""Who may call the policy endpoints: 401 without a token, 403 without the permission (each listed one
suffices), 404 for another tenant's policy, term, transaction, segment, account or number. Without access to
the tenant: tests/architecture/test_tenant_isolation.py, over every route."""

from __future__ import annotations

import pytest

from tests.api.policies.support import CONTACT, OTHER_CONTACT, policies_tenant
from tests.builders import new_user
from tests.support.api import assert_error, call

# (method, path below /policy/{tenantLocator} with {p} policy, {t} term, {x} transaction, {s} segment and
# {a} account, body, the permissions of which any one suffices)
ENDPOINTS = [
    ("GET", "/policies/{p}", None, ["policies.read"]),
    ("GET", "/policies/numbers/PA-000001", None, ["policies.read", "policies.list"]),
    ("POST", "/policies/{p}/number/set?policyNumber=N-1", None, ["policies.write"]),
    ("POST", "/policies/{p}/number/generate", None, ["policies.write"]),
    ("GET", "/policies/{p}/static", None, ["policies.read"]),
    ("POST", "/policies/{p}/static", {"agentCode": "ABC"}, ["policies.write"]),
    ("PATCH", "/policies/{p}/static", {"setData": {"renewals": 1}}, ["policies.write"]),
    ("PUT", "/policies/{p}/static", {"agency": "Uptown"}, ["policies.write"]),
    ("GET", "/policies/{p}/static/history/list", None, ["policies.read"]),
    ("GET", "/policies/{p}/snapshot?date=2026-06-01T00:00:00Z", None, ["policies.read"]),
    ("GET", "/policies/snapshot/list", None, ["policies.read", "policies.list"]),
    ("PATCH", "/policies/{p}/billingLevel", {"billingLevel": "policy"}, ["policies.write"]),
    ("PATCH", "/policies/{p}/delinquencyPlan", {"delinquencyPlanName": "Lenient"}, ["policies.write"]),
    ("PATCH", "/policies/{p}/jurisdiction", {"jurisdiction": "CA"}, ["policies.write"]),
    ("POST", "/policies/{p}/contacts", {"contactLocator": OTHER_CONTACT, "roles": []}, ["policies.write"]),
    ("GET", "/policies/{p}/contacts", None, ["policies.write"]),
    ("PATCH", f"/policies/{{p}}/contacts/{CONTACT}", {"addRoles": ["billing"]}, ["policies.write"]),
    ("DELETE", f"/policies/{{p}}/contacts/{CONTACT}", None, ["policies.write"]),
    ("GET", "/policies/{p}/holds", None, ["policies.read"]),
    ("GET", "/policies/{p}/terms/list", None, ["policies.read", "policies.list"]),
    ("GET", "/policies/{p}/issuedTransactions/list", None, ["policies.read"]),
    ("GET", "/terms/{t}", None, ["terms.read"]),
    ("GET", "/transactions/{x}", None, ["transactions.read"]),
    ("GET", "/transactions/{x}/segment", None, ["transactions.read"]),
    ("GET", "/transactions/segments/{s}", None, ["transactions.read"]),
    ("GET", "/accounts/{a}/policies/list", None, ["accounts.read", "accounts.list"]),
    ("GET", "/accounts/{a}/policies/snapshot/list", None, ["accounts.read", "accounts.list"]),
]
IDS = [f"{method} {path}" for method, path, _, _ in ENDPOINTS]
GRANTED = {
    "policies.read",
    "policies.list",
    "policies.write",
    "terms.read",
    "transactions.read",
    "accounts.read",
    "accounts.list",
}
NOT_FOUND = {
    "{p}": "policy.not_found",
    "{t}": "term.not_found",
    "{x}": "transaction.not_found",
    "{s}": "segment.not_found",
    "{a}": "account.not_found",
    "numbers": "policy.not_found",
}


def path_of(tenant, path, account, issued):
    for variable, value in {
        "{p}": issued.policyLocator,
        "{t}": issued.termLocator,
        "{x}": issued.transactionLocator,
        "{s}": issued.segmentLocator,
        "{a}": account,
    }.items():
        path = path.replace(variable, value)
    return f"/policy/{tenant}{path}"


@pytest.mark.parametrize("method, path, body, permissions", ENDPOINTS, ids=IDS)
def test_without_a_token_every_endpoint_is_a_401(api, tenant, account, issued, method, path, body, permissions):
    assert_error(call(api, method, path_of(tenant, path, account, issued), None, body), 401, "auth.token_missing")


@pytest.mark.parametrize("method, path, body, permissions", ENDPOINTS, ids=IDS)
def test_each_listed_permission_suffices_and_others_do_not(
    api, tenant, account, issued, method, path, body, permissions
):
    target = path_of(tenant, path, account, issued)
    _, token = new_user(sorted(GRANTED - set(permissions)) + ["quotes.read"], [tenant])
    assert_error(call(api, method, target, token, body), 403, "auth.permission_denied")
    for permission in permissions:
        _, token = new_user([permission], [tenant])
        response = call(api, method, target, token, body)
        assert response.status_code == 200, (permission, response.body)


@pytest.mark.parametrize(
    "method, path, body, permissions",
    [e for e in ENDPOINTS if e[1] != "/policies/snapshot/list"],
    ids=[i for i in IDS if not i.endswith(" /policies/snapshot/list")],
)
def test_another_tenants_records_are_404s(api, admin_token, tenant, account, issued, method, path, body, permissions):
    other = policies_tenant(api, admin_token)
    code = next(code for marker, code in NOT_FOUND.items() if marker in path)
    assert_error(call(api, method, path_of(other, path, account, issued), admin_token, body), 404, code)


def test_another_tenant_sees_none_of_the_tenants_policies(api, admin_token, tenant, issued):
    other = policies_tenant(api, admin_token)
    response = call(api, "GET", f"/policy/{other}/policies/snapshot/list", admin_token)
    assert response.status_code == 200
    assert response.json_body == {"listCompleted": True, "items": []}
