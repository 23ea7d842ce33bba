"""Who is calling: a principal's permissions and tenants, and a call's tenant."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from chalicelib.core.context import SYSTEM, SYSTEM_USER_LOCATOR, CallContext, Principal
from chalicelib.core.errors import Forbidden

TENANT = "6f1c2a4e-0d7b-4b8e-9a51-3c2d1e0f9a77"
ALICE = Principal("01JALICE", "alice", frozenset({"policies.*", "users.read"}), frozenset({TENANT}))


def test_a_principal_may_do_what_one_of_its_permissions_covers():
    assert ALICE.may("policies.issue")
    assert ALICE.may("roles.write", "users.read")
    assert not ALICE.may("users.write")
    assert not ALICE.may()


def test_a_principal_reaches_only_its_tenants_unless_it_is_the_system():
    assert ALICE.may_access(TENANT)
    assert not ALICE.may_access("00000000-0000-0000-0000-000000000001")
    assert SYSTEM.may_access("00000000-0000-0000-0000-000000000001")
    assert Principal("u", "u", frozenset(), frozenset({"any"})).may_access(TENANT)
    assert (SYSTEM.user_locator, SYSTEM.user_name, SYSTEM.is_system) == (SYSTEM_USER_LOCATOR, "system", True)
    assert SYSTEM.may("anything.at_all") and not ALICE.is_system


def test_a_call_without_a_tenant_is_refused_what_needs_one():
    call = CallContext(ALICE, "req-1", datetime(2026, 1, 15, tzinfo=timezone.utc))

    with pytest.raises(Forbidden) as refused:
        call.tenant
    assert (refused.value.code, refused.value.message) == ("auth.forbidden", "This operation needs a tenant")

    scoped = call.for_tenant(TENANT)
    assert (scoped.tenant, scoped.user_locator, scoped.request_id) == (TENANT, "01JALICE", "req-1")
    assert call.tenant_locator is None  # the original call is unchanged
