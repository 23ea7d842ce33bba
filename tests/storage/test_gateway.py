"""The table gateway on moto: the tenant guard, paging, optimistic locking, transactions."""

from __future__ import annotations

import pytest

from chalicelib.core import codes
from chalicelib.core.errors import AlreadyExists, ConcurrentModification, InvalidRequest, InvalidState
from chalicelib.core.paging import PageRequest
from chalicelib.http.errors import status_of
from chalicelib.storage import keys, query, table
from chalicelib.storage.table import ScopeViolation
from tests.builders import new_tenant
from tests.storage.support import item, key


@pytest.fixture
def gateway(aws):
    return table.gateway()


@pytest.fixture
def other(aws):
    return new_tenant()


# --- the tenant guard -----------------------------------------------------------------------------


def test_reads_outside_the_scope_are_refused_before_any_call(gateway, tenant, other, ddb_calls):
    scope = keys.tenant_scope(tenant)
    foreign = key(other, "x")

    with pytest.raises(ScopeViolation):
        gateway.get(scope, foreign)
    with pytest.raises(ScopeViolation):
        gateway.batch_get(scope, [key(tenant, "x"), foreign])
    with pytest.raises(ScopeViolation):
        gateway.query(scope, foreign.pk)
    with pytest.raises(ScopeViolation):
        gateway.query(scope, keys.events_stream(keys.tenant_scope(other)), index="GSI1")
    with pytest.raises(ScopeViolation):
        gateway.get(keys.SYSTEM_SCOPE, key(tenant, "x"))
    with pytest.raises(ScopeViolation):
        gateway.get(scope, keys.user("U1"))
    assert ddb_calls == []


def test_a_tenant_whose_locator_extends_another_is_still_another_scope(gateway):
    with pytest.raises(ScopeViolation):
        gateway.get(keys.tenant_scope("abc"), key("abcd", "x"))


def test_writes_outside_the_scope_are_refused_and_nothing_is_written(gateway, tenant, other, ddb_calls):
    scope = keys.tenant_scope(tenant)
    foreign_partition = keys.events_stream(keys.tenant_scope(other))
    refused = [
        table.put(item(other, "a")),
        table.put_new(item(other, "a")),
        table.put(item(tenant, "a", GSI1PK=foreign_partition, GSI1SK="1")),
        table.update(key(other, "a"), {"x": 1}),
        table.update(key(tenant, "a"), {"x": 1, "GSI2PK": foreign_partition, "GSI2SK": "1"}, must_exist=False),
        table.delete(key(other, "a")),
        table.check_version(key(other, "a"), 1),
    ]

    for op in refused:
        if op.action != "ConditionCheck":
            with pytest.raises(ScopeViolation):
                gateway.write(scope, op)
        with pytest.raises(ScopeViolation):
            gateway.transact(scope, [table.put(item(tenant, "fine")), op])
    assert ddb_calls == []
    assert gateway.get(scope, key(tenant, "fine")) is None


def test_index_keys_inside_the_scope_are_written(gateway, tenant):
    scope = keys.tenant_scope(tenant)
    gateway.write(scope, table.put_new(item(tenant, "a", version=1)))

    gateway.write(scope, table.update(key(tenant, "a"), {"GSI2PK": f"{scope}TESTS", "GSI2SK": "a"}))

    assert [i["PK"] for i in query.all_items(gateway, scope, f"{scope}TESTS", index="GSI2")] == [key(tenant, "a").pk]


# --- offset/count paging --------------------------------------------------------------------------


def _partition(gateway, tenant, size):
    scope = keys.tenant_scope(tenant)
    pk = key(tenant, "list").pk
    if size:
        gateway.transact(scope, [table.put({"PK": pk, "SK": f"{n:04d}", "n": n}) for n in range(size)])
    return scope, pk


@pytest.mark.parametrize(
    "size, offset, expected, completed",
    [
        (0, 0, [], True),
        (3, 0, [0, 1, 2], True),
        (4, 0, [0, 1, 2], False),
        (4, 3, [3], True),
        (7, 3, [3, 4, 5], False),
        (6, 3, [3, 4, 5], True),
        (4, 4, [], True),
        (4, 10, [], True),
    ],
)
def test_a_page_is_exact_at_its_boundaries(gateway, tenant, size, offset, expected, completed):
    scope, pk = _partition(gateway, tenant, size)

    page = query.page(gateway, scope, pk, PageRequest.of(offset, 3))

    assert [i["n"] for i in page.items] == expected
    assert page.list_completed is completed


def test_a_page_reads_one_item_past_its_end_in_one_query(gateway, tenant, ddb_calls):
    scope, pk = _partition(gateway, tenant, 30)
    ddb_calls.clear()

    page = query.page(gateway, scope, pk, PageRequest.of(5, 10))

    assert [i["n"] for i in page.items] == list(range(5, 15))
    assert ddb_calls == ["Query"]


def test_paging_parameters_are_bounded():
    for offset, count in ((-1, 10), (0, 0), (0, 101), (10_001, 10)):
        with pytest.raises(InvalidRequest):
            PageRequest.of(offset, count)
    assert PageRequest.of(None, None) == PageRequest(0, 20)
    assert PageRequest.of(0, 1000, max_count=1000).count == 1000


# --- optimistic locking and conditions ------------------------------------------------------------


def test_an_update_with_a_stale_version_is_a_409_and_changes_nothing(gateway, tenant):
    scope = keys.tenant_scope(tenant)
    gateway.write(scope, table.put_new(item(tenant, "a", name="first", version=1)))
    gateway.write(scope, table.update(key(tenant, "a"), {"name": "second"}, expected_version=1))

    with pytest.raises(ConcurrentModification) as raised:
        gateway.write(scope, table.update(key(tenant, "a"), {"name": "third"}, expected_version=1))

    assert status_of(raised.value) == 409
    assert raised.value.code == "conflict.concurrent_modification"
    stored = gateway.get(scope, key(tenant, "a"))
    assert (stored["name"], stored["version"]) == ("second", 2)


def test_an_update_of_a_missing_record_fails_its_condition(gateway, tenant):
    with pytest.raises(ConcurrentModification):
        gateway.write(keys.tenant_scope(tenant), table.update(key(tenant, "missing"), {"x": 1}))


def test_put_new_on_an_existing_key_already_exists(gateway, tenant):
    scope = keys.tenant_scope(tenant)
    gateway.write(scope, table.put_new(item(tenant, "a", name="first")))

    with pytest.raises(AlreadyExists) as raised:
        gateway.write(scope, table.put_new(item(tenant, "a", name="second")))

    assert status_of(raised.value) == 409
    assert gateway.get(scope, key(tenant, "a"))["name"] == "first"


def test_a_cancelled_transaction_raises_the_error_of_the_op_that_failed(gateway, tenant):
    scope = keys.tenant_scope(tenant)
    gateway.write(scope, table.put_new(item(tenant, "root", version=3)))
    stale = table.update(
        key(tenant, "root"),
        {"x": 1},
        expected_version=2,
        on_failure=lambda: codes.TRANSACTION_STALE_BASE("the root moved"),
    )

    with pytest.raises(InvalidState) as raised:
        gateway.transact(scope, [table.put_new(item(tenant, "child")), stale])

    assert raised.value.code == "transaction.stale_base"
    assert gateway.get(scope, key(tenant, "child")) is None  # all or nothing
    assert gateway.get(scope, key(tenant, "root"))["version"] == 3


def test_the_first_failing_op_decides_the_error(gateway, tenant):
    scope = keys.tenant_scope(tenant)
    gateway.write(scope, table.put_new(item(tenant, "taken", version=1)))
    gateway.write(scope, table.put_new(item(tenant, "root", version=1)))
    ops = [
        table.put_new(item(tenant, "free")),
        table.put_new(item(tenant, "taken")),
        table.check_version(key(tenant, "root"), 2),
    ]

    with pytest.raises(AlreadyExists):
        gateway.transact(scope, ops)

    assert gateway.get(scope, key(tenant, "free")) is None


def test_a_transaction_of_more_than_100_ops_is_refused_before_any_call(gateway, tenant, ddb_calls):
    scope = keys.tenant_scope(tenant)
    ops = [table.put(item(tenant, f"i{n}")) for n in range(101)]

    with pytest.raises(InvalidRequest):
        gateway.transact(scope, ops)

    assert ddb_calls == []
    gateway.transact(scope, ops[:100])
    assert len(gateway.batch_get(scope, [key(tenant, f"i{n}") for n in range(101)])) == 100


def test_two_ops_on_one_item_in_one_transaction_are_a_bug(gateway, tenant):
    scope = keys.tenant_scope(tenant)

    with pytest.raises(ValueError):
        gateway.transact(scope, [table.put(item(tenant, "a")), table.delete(key(tenant, "a"))])


def test_batch_get_answers_the_existing_items_among_many_keys(gateway, tenant, ddb_calls):
    scope = keys.tenant_scope(tenant)
    gateway.transact(scope, [table.put(item(tenant, f"i{n}", n=n)) for n in range(0, 150, 2)])
    ddb_calls.clear()

    found = gateway.batch_get(scope, [key(tenant, f"i{n}") for n in range(150)] + [key(tenant, "i0")])

    assert sorted(i["n"] for i in found) == list(range(0, 150, 2))
    assert ddb_calls == ["BatchGetItem", "BatchGetItem"]  # 100 keys per call
