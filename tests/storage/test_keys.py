"""Every key template: tenant records under `T#{tenant}#`, system records under `SYS#`."""

from __future__ import annotations

import pytest

from chalicelib.storage import keys


def test_every_tenant_key_starts_with_the_tenant_prefix():
    tenant = "5c0e6a8e-3f7c-4c1e-9d55-1a2b3c4d5e6f"
    scope = keys.tenant_scope(tenant)

    assert scope == f"T#{tenant}#"
    tenant_keys = [
        keys.job(tenant, "J1").pk,
        keys.jobs_index(tenant),
        keys.job_leases_index(tenant),
        keys.event(scope, "E1").pk,
        keys.events_stream(scope),
        keys.events_by_type(scope, "policy.quote.issue"),
        keys.events_by_request(scope, "R1"),
        keys.idempotency_guard(scope, "U1", "create_user", "k").pk,
    ]
    assert all(k.startswith(scope) for k in tenant_keys), tenant_keys
    assert len(set(tenant_keys)) == len(tenant_keys)


def test_every_system_key_starts_with_the_system_prefix():
    system_keys = [
        keys.user("U1").pk,
        keys.user_token_name("U1", "ci").pk,
        keys.user_name("A@example.com").pk,
        keys.role("R1").pk,
        keys.role_holders("R1").pk,
        keys.role_name("Admin").pk,
        keys.token("abc").pk,
        keys.tenant("T1").pk,
        keys.bootstrap_marker().pk,
        keys.USERS_INDEX,
        keys.ROLES_INDEX,
        keys.TENANTS_INDEX,
    ]

    assert all(k.startswith(keys.SYSTEM_SCOPE) for k in system_keys), system_keys


def test_names_are_keyed_case_insensitively():
    assert keys.user_name("Ann@Example.com") == keys.user_name("ann@example.com")
    assert keys.role_name("Underwriter") == keys.role_name("UNDERWRITER")


def test_a_tenant_key_needs_a_tenant():
    with pytest.raises(ValueError):
        keys.tenant_scope("")
    with pytest.raises(ValueError):
        keys.job("", "J1")
