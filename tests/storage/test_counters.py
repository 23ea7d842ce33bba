"""TableGateway.increment: the atomic counter behind numbering plans."""

from __future__ import annotations

import pytest

from chalicelib.core import codes
from chalicelib.core.errors import Conflict, InvalidState
from chalicelib.storage import keys, table
from chalicelib.storage.table import ScopeViolation
from tests.builders import new_tenant
from tests.storage.support import key


def test_a_counter_starts_at_one_and_counts_in_one_call(aws, tenant, ddb_calls):
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    assert [gateway.increment(scope, key(tenant, "seq"), "issued") for _ in range(3)] == [1, 2, 3]
    assert ddb_calls == ["UpdateItem"] * 3
    assert gateway.get(scope, key(tenant, "seq"))["issued"] == 3


def test_a_limited_counter_stops_below_its_limit(aws, tenant):
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    assert [gateway.increment(scope, key(tenant, "seq"), "issued", below=2) for _ in range(2)] == [1, 2]
    with pytest.raises(InvalidState):
        gateway.increment(
            scope, key(tenant, "seq"), "issued", below=2, on_limit=lambda: codes.NUMBERING_EXHAUSTED("used up")
        )
    with pytest.raises(Conflict):
        gateway.increment(scope, key(tenant, "seq"), "issued", below=2)
    assert gateway.get(scope, key(tenant, "seq"))["issued"] == 2


def test_a_counter_outside_the_scope_is_refused(aws, tenant, ddb_calls):
    foreign = key(new_tenant(), "seq")
    ddb_calls.clear()
    with pytest.raises(ScopeViolation):
        table.gateway().increment(keys.tenant_scope(tenant), foreign, "issued")
    assert ddb_calls == []
