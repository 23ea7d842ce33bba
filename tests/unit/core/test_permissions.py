"""Permission strings `group.action`, the wildcards `group.*` and `*.*`, and tenant access."""

from __future__ import annotations

import pytest

from chalicelib.core.permissions import grants, grants_any, is_valid_permission, restrict, tenant_allowed


@pytest.mark.parametrize(
    "held, required, expected",
    [
        (["users.read"], "users.read", True),
        (["users.read"], "users.write", False),
        (["users.*"], "users.read", True),
        (["users.*"], "roles.read", False),
        (["*.*"], "policies.issue", True),
        (["*.*"], "users.*", True),
        (["users.read"], "users.*", False),
        (["users.*"], "*.*", False),
        (["user.*"], "users.read", False),
        ([], "users.read", False),
    ],
)
def test_grants(held, required, expected):
    assert grants(held, required) is expected


def test_grants_any_needs_one_of_the_required():
    assert grants_any(["roles.read"], ["users.read", "roles.read"])
    assert not grants_any(["roles.read"], ["users.read", "users.list"])
    assert not grants_any(["*.*"], [])


@pytest.mark.parametrize(
    "text",
    [
        "users.read",
        "users.*",
        "*.*",
        "users.update-roles",
        "retry-jobs.read",
        "deserializeJobs.write",
        "write_offs.create",
    ],
)
def test_valid_permissions(text):
    assert is_valid_permission(text)


@pytest.mark.parametrize(
    "text",
    [
        "*.read",
        "nodot",
        "",
        ".",
        "users.",
        ".read",
        "a.b.c",
        "users.read ",
        "users read",
        "*",
        "**.*",
        "users.**",
        "users.re/ad",
        "users.*a",
    ],
)
def test_invalid_permissions(text):
    assert not is_valid_permission(text)


@pytest.mark.parametrize(
    "held, wanted, expected",
    [
        (["users.read", "roles.read"], ["users.read"], {"users.read"}),
        (["users.read"], ["users.read", "users.write"], {"users.read"}),
        (["*.*"], ["users.read", "roles.*"], {"users.read", "roles.*"}),
        (["users.*"], ["users.*"], {"users.*"}),
        (["users.read", "users.write", "roles.read"], ["users.*"], {"users.read", "users.write"}),
        (["users.*", "roles.read"], ["*.*"], {"users.*", "roles.read"}),
        (["users.read"], [], set()),
        ([], ["users.read", "*.*"], set()),
    ],
)
def test_restrict_keeps_what_the_holder_covers(held, wanted, expected):
    assert restrict(held, wanted) == frozenset(expected)


def test_restrict_never_widens():
    held = ["users.read", "accounts.*"]
    for wanted in (["*.*"], ["users.*"], ["accounts.*", "roles.read"]):
        assert all(grants(held, p) for p in restrict(held, wanted))


@pytest.mark.parametrize(
    "tenants, tenant, expected",
    [
        (["any"], "a3b1c2d4-0000-4000-8000-000000000001", True),
        (["a3b1c2d4-0000-4000-8000-000000000001"], "a3b1c2d4-0000-4000-8000-000000000001", True),
        (["a3b1c2d4-0000-4000-8000-000000000001"], "a3b1c2d4-0000-4000-8000-000000000002", False),
        ([], "a3b1c2d4-0000-4000-8000-000000000001", False),
    ],
)
def test_tenant_allowed(tenants, tenant, expected):
    assert tenant_allowed(tenants, tenant) is expected
