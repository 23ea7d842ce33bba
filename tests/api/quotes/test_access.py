"""Who may call the quote endpoints: 401 without a token, 403 without the permission (any one listed
permission suffices), 404 for another tenant's quote. Without access to the tenant:
tests/architecture/test_tenant_isolation.py, over every route."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.quotes.support import UNKNOWN, auto, create, quote_path
from tests.builders import new_tenant, new_user
from tests.support.api import assert_error, call, ok
from tests.support.configs import quotes_tenant

Q = f"/quotes/{UNKNOWN}"
QQ = f"/quickquotes/{UNKNOWN}"
WRITE = ["quotes.write"]

# (method, path below /policy/{tenantLocator}, body, permissions that suffice)
ENDPOINTS: list[tuple[str, str, Any, list[str]]] = [
    ("POST", "/quotes", {}, ["quotes.write", "quotes.create"]),
    ("GET", "/quotes/list", None, ["quotes.read", "quotes.list"]),
    ("GET", "/quotes/numbers/Q-1", None, ["quotes.read", "quotes.list"]),
    ("GET", f"/accounts/{UNKNOWN}/quotes/list", None, ["accounts.read", "accounts.list"]),
    ("POST", "/quotes/validatePreview", {}, ["quotes.read"]),
    ("POST", "/quotes/pricePreview", {}, ["quotes.read"]),
    ("GET", Q, None, ["quotes.read"]),
    ("PATCH", Q, {}, ["quotes.write", "quotes.update"]),
    ("PUT", f"{Q}/elements", [], ["quotes.write", "quotes.elements-add"]),
    ("DELETE", f"{Q}/elements", [], ["quotes.write", "quotes.elements-delete"]),
    ("PATCH", f"{Q}/validate", None, ["quotes.write", "quotes.validate"]),
    ("PATCH", f"{Q}/price", None, ["quotes.write", "quotes.price"]),
    ("GET", f"{Q}/price", None, ["quotes.read"]),
    ("PATCH", f"{Q}/underwrite", None, ["quotes.write", "quotes.underwrite"]),
    ("PATCH", f"{Q}/accept", None, ["quotes.write", "quotes.accept"]),
    ("PATCH", f"{Q}/issue", None, ["quotes.write", "quotes.issue"]),
    ("PATCH", f"{Q}/reset", None, ["quotes.write", "quotes.reset"]),
    ("PATCH", f"{Q}/refuse", None, ["quotes.write", "quotes.refuse"]),
    ("PATCH", f"{Q}/discard", None, ["quotes.write", "quotes.discard"]),
    ("GET", f"{Q}/underwritingFlags", None, ["quotes.read"]),
    ("PATCH", f"{Q}/underwritingFlags", {}, WRITE),
    *[
        ("POST", f"{Q}/underwritingFlags/{level}", {}, ["quotes.write", f"quotes.{level}-add"])
        for level in ("approve", "block", "decline", "reject", "info")
    ],
    *[
        ("DELETE", f"{Q}/underwritingFlags/{level}/{UNKNOWN}", None, ["quotes.write", f"quotes.{level}-clear"])
        for level in ("approve", "block", "decline", "reject", "info")
    ],
    ("POST", f"{Q}/number/set?quoteNumber=Q-1", None, WRITE),
    ("POST", f"{Q}/number/generate", None, WRITE),
    (
        "POST",
        f"{Q}/reservedPolicyNumber/set?reservedPolicyNumber=P-1",
        None,
        ["quotes.write", "quotes.reserve-policy-number-set"],
    ),
    ("GET", f"{Q}/static", None, ["quotes.read"]),
    ("POST", f"{Q}/static", {}, ["quotes.write", "quotes.static-data-add"]),
    ("PUT", f"{Q}/static", {}, ["quotes.write", "quotes.static-data-add"]),
    ("PATCH", f"{Q}/static", {}, ["quotes.write", "quotes.static-data-update"]),
    ("GET", f"{Q}/static/history/list", None, ["quotes.read"]),
    ("POST", f"{Q}/constraints/evaluate", {}, ["quotes.read"]),
    ("GET", f"{Q}/constraints/dependency", None, ["quotes.read"]),
    ("POST", "/quickquotes", {}, ["quick-quotes.write"]),
    ("GET", QQ, None, ["quick-quotes.read"]),
    ("PATCH", QQ, {}, ["quick-quotes.write"]),
    ("PATCH", f"{QQ}/validate", None, ["quick-quotes.write"]),
    ("PATCH", f"{QQ}/price", None, ["quick-quotes.write"]),
    ("GET", f"{QQ}/price", None, ["quick-quotes.read"]),
    ("PATCH", f"{QQ}/discard", None, ["quick-quotes.write"]),
    ("POST", f"{QQ}/constraints/evaluate", {}, ["quick-quotes.read"]),
    ("GET", f"{QQ}/constraints/dependency", None, ["quick-quotes.read"]),
]
IDS = [f"{method} {path}" for method, path, _, _ in ENDPOINTS]
GROUPS = {
    "quotes.read",
    "quotes.list",
    "quotes.write",
    "quick-quotes.read",
    "quick-quotes.write",
    "accounts.read",
    "accounts.list",
}


@pytest.fixture
def bare_tenant() -> str:
    """A fresh tenant without a configuration: access is decided before anything is read."""
    return new_tenant()


@pytest.mark.parametrize("method, path, body, permissions", ENDPOINTS, ids=IDS)
def test_without_a_token_every_endpoint_is_a_401(api, bare_tenant, method, path, body, permissions):
    assert_error(call(api, method, f"/policy/{bare_tenant}{path}", None, body), 401, "auth.token_missing")


@pytest.mark.parametrize("method, path, body, permissions", ENDPOINTS, ids=IDS)
def test_each_listed_permission_suffices_and_others_do_not(api, bare_tenant, method, path, body, permissions):
    _, others = new_user(sorted(GROUPS - set(permissions)) + ["policies.read"], [bare_tenant])
    allowed = [new_user([permission], [bare_tenant])[1] for permission in permissions]

    assert_error(call(api, method, f"/policy/{bare_tenant}{path}", others, body), 403, "auth.permission_denied")
    for token in allowed:
        assert call(api, method, f"/policy/{bare_tenant}{path}", token, body).status_code != 403


def test_another_tenants_quote_is_a_404_whatever_the_endpoint(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    other = quotes_tenant(api, admin_token, plugins=None)
    for method, suffix in [
        ("GET", ""),
        ("PATCH", "/issue"),
        ("GET", "/price"),
        ("GET", "/underwritingFlags"),
        ("GET", "/static"),
        ("POST", "/number/generate"),
        ("PATCH", "/discard"),
    ]:
        assert_error(call(api, method, quote_path(other, locator, suffix), admin_token), 404, "quote.not_found")
    assert ok(call(api, "GET", quote_path(tenant, locator), admin_token))["quoteState"] == "draft"
