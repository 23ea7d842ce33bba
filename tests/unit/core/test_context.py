"""Who is calling: a principal's permissions and tenants, and a call's tenant."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from chalicelib.core.context import SYSTEM, SYSTEM_USER_LOCATOR, CallContext, Principal, ReadCache
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


def test_a_read_cache_reads_each_key_once_and_a_missing_record_again():
    cache = ReadCache()
    reads = []

    def reader(value):
        return lambda: reads.append(value) or value

    assert cache.read(("account", "A"), reader({"v": 1}), record=("PK#A", "SK")) == {"v": 1}
    assert cache.read(("account", "A"), reader({"v": 2})) == {"v": 1}
    assert cache.read(("policy", "P"), reader(None)) is None
    assert cache.read(("policy", "P"), reader({"p": 1})) == {"p": 1}
    assert reads == [{"v": 1}, None, {"p": 1}]
    assert (cache.get(("account", "A")), cache.get(("quote", "Q"))) == ({"v": 1}, None)


def test_a_read_cache_forgets_the_records_written_and_the_entries_naming_none():
    cache = ReadCache()
    cache.put(("account", "A"), "a", record=("PK#A", "SK"))
    cache.put(("account", "B"), "b", record=("PK#B", "SK"))
    cache.put(("config",), "c")
    cache.forget([("PK#A", "SK")])
    assert [cache.get(key) for key in (("account", "A"), ("account", "B"), ("config",))] == [None, "b", None]
    assert cache.read(("account", "A"), lambda: "a2", record=("PK#A", "SK")) == "a2"
    cache.forget([])
    assert (cache.get(("account", "A")), cache.get(("account", "B"))) == ("a2", "b")
    cache.clear()
    assert cache.get(("account", "B")) is None
