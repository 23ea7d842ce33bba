"""The unit of work: one TransactWriteItems with the changes, their events and the idempotency guard."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.core.clock import isoformat
from chalicelib.core.context import SYSTEM_USER_LOCATOR, CallContext, IdempotencyClaim, Principal
from chalicelib.core.errors import AlreadyExists, Conflict, InvalidRequest
from chalicelib.core.ids import new_locator
from chalicelib.runtime import wiring
from chalicelib.storage import codec, keys, query, table, unit_of_work
from tests.builders import system_ctx
from tests.storage.support import item, key


def user_ctx(tenant, clock, idempotency=None):
    user = Principal("0190a5b2-0000-7000-8000-000000000001", "ann", frozenset({"*.*"}), frozenset({tenant}))
    return CallContext(
        principal=user, request_id=new_locator(), now=clock.now(), tenant_locator=tenant, idempotency=idempotency
    )


def test_changes_and_their_events_are_written_in_one_transaction(tenant, clock, ddb_calls):
    ctx = user_ctx(tenant, clock)
    uow = wiring.unit_of_work(ctx)
    uow.add(table.put_new(item(tenant, "policy", version=1)))
    uow.record_event("policy.quote.create", {"quoteLocator": "Q1", "amount": Decimal("10.05")})
    uow.record_event("policy.quote.price", {"quoteLocator": "Q1"})
    clock.advance(seconds=3)  # the request takes a while: events carry the time it completes
    ddb_calls.clear()

    written = uow.commit()

    assert ddb_calls == ["TransactWriteItems"]
    scope = keys.tenant_scope(tenant)
    stored = sorted(
        (
            codec.without_keys(i)
            for i in query.all_items(
                table.gateway(), scope, keys.events_by_request(scope, ctx.request_id), index="GSI3"
            )
        ),
        key=lambda e: e["type"],
    )
    assert [e["type"] for e in stored] == ["policy.quote.create", "policy.quote.price"]
    for event in stored:
        assert event["requestId"] == ctx.request_id
        assert event["userLocator"] == "0190a5b2-0000-7000-8000-000000000001"
        assert event["timestamp"] == "2026-01-15T09:30:03.000Z" == isoformat(clock.now())
    assert stored[0]["data"] == {"quoteLocator": "Q1", "amount": Decimal("10.05")}
    assert sorted(e["locator"] for e in stored) == sorted(e["locator"] for e in written)
    assert table.gateway().get(scope, key(tenant, "policy")) is not None


def test_events_enter_the_tenant_stream_and_the_stream_of_their_type(tenant, clock):
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    uow.record_event("test.made", {})
    [event] = uow.commit()
    scope = keys.tenant_scope(tenant)
    gateway = table.gateway()

    assert [e["locator"] for e in query.all_items(gateway, scope, keys.events_stream(scope), index="GSI1")] == [
        event["locator"]
    ]
    assert [
        e["locator"] for e in query.all_items(gateway, scope, keys.events_by_type(scope, "test.made"), index="GSI2")
    ] == [event["locator"]]
    assert event["userLocator"] == SYSTEM_USER_LOCATOR
    assert event["GSI1SK"] == f"{event['timestamp']}#{event['locator']}"


def test_a_failed_commit_writes_no_event_and_runs_no_after_commit_action(tenant, clock):
    scope = keys.tenant_scope(tenant)
    table.gateway().write(scope, table.put_new(item(tenant, "taken")))
    ctx = user_ctx(tenant, clock)
    uow = wiring.unit_of_work(ctx)
    uow.add(table.put_new(item(tenant, "taken")))
    uow.record_event("test.made", {})
    ran = []
    uow.after_commit(lambda: ran.append("sent"))

    with pytest.raises(AlreadyExists):
        uow.commit()

    assert ran == []
    assert query.all_items(table.gateway(), scope, keys.events_by_request(scope, ctx.request_id), index="GSI3") == []


def test_the_after_commit_actions_run_once_the_transaction_succeeded(tenant, clock):
    uow = wiring.unit_of_work(user_ctx(tenant, clock))
    uow.add(table.put_new(item(tenant, "a")))
    seen = []
    uow.after_commit(lambda: seen.append(table.gateway().get(keys.tenant_scope(tenant), key(tenant, "a"))))

    uow.commit()

    assert len(seen) == 1 and seen[0] is not None


def test_the_idempotency_guard_is_written_once_in_the_first_commit(tenant, clock):
    claim = IdempotencyClaim(key="pay-1", operation="create_payment", request_hash="h1")
    ctx = user_ctx(tenant, clock, idempotency=claim)
    scope = keys.tenant_scope(tenant)
    guard_key = keys.idempotency_guard(scope, ctx.user_locator, "create_payment", "pay-1")

    first = wiring.unit_of_work(ctx)
    first.add(table.put_new(item(tenant, "payment")))
    first.record_event("billing.payment.create", {})
    first.commit()
    second = wiring.unit_of_work(ctx)  # a request may commit more than once
    second.record_event("billing.payment.post", {})
    second.commit()

    guard = table.gateway().get(scope, guard_key)
    assert claim.claimed is True
    assert guard["requestHash"] == "h1"
    assert guard["createdAt"] == isoformat(clock.now())
    assert guard["ttl"] >= int(clock.now().timestamp()) + 24 * 3600


def test_a_second_request_with_a_claimed_key_conflicts_and_writes_nothing(tenant, clock):
    first = user_ctx(tenant, clock, IdempotencyClaim(key="k", operation="op", request_hash="h"))
    uow = wiring.unit_of_work(first)
    uow.record_event("test.made", {})
    uow.commit()
    again = user_ctx(tenant, clock, IdempotencyClaim(key="k", operation="op", request_hash="h"))
    uow = wiring.unit_of_work(again)
    uow.add(table.put_new(item(tenant, "b")))
    uow.record_event("test.made", {})

    with pytest.raises(Conflict) as raised:
        uow.commit()

    assert raised.value.code == "idempotency.in_progress"
    assert table.gateway().get(keys.tenant_scope(tenant), key(tenant, "b")) is None


def test_a_change_with_more_than_100_records_including_its_events_is_refused(tenant, clock, ddb_calls):
    uow = wiring.unit_of_work(user_ctx(tenant, clock))
    uow.add(*(table.put(item(tenant, f"i{n}")) for n in range(100)))
    uow.record_event("test.bulk", {})
    ddb_calls.clear()

    with pytest.raises(InvalidRequest):
        uow.commit()

    assert ddb_calls == []


def test_a_unit_of_work_says_how_many_actions_it_has_left_keeping_one_for_the_idempotency_guard(tenant, clock):
    uow = wiring.unit_of_work(user_ctx(tenant, clock))
    assert (uow.capacity, uow.remaining) == (100, 99)

    uow.add(*(table.put(item(tenant, f"i{n}")) for n in range(90)))
    uow.record_event("test.bulk", {})
    assert uow.remaining == 8

    uow.add(*(table.put(item(tenant, f"j{n}")) for n in range(uow.remaining)))
    assert uow.remaining == 0
    uow.commit()  # what it said fits, fits
    assert uow.remaining == 99


def test_the_guard_is_kept_whatever_the_request_claims_until_a_commit_has_written_it(tenant, clock):
    claim = IdempotencyClaim(key="k", operation="op", request_hash="h")
    ctx = user_ctx(tenant, clock, claim)
    keyed, keyless = wiring.unit_of_work(ctx), wiring.unit_of_work(user_ctx(tenant, clock))
    assert keyed.remaining == keyless.remaining == 99

    keyed.add(*(table.put(item(tenant, f"i{n}")) for n in range(keyed.remaining)))
    keyed.commit()  # 99 records and the guard

    assert wiring.unit_of_work(ctx).remaining == 100  # the request's next write carries no guard
    assert table.gateway().get(keys.tenant_scope(tenant), key(tenant, "i98")) is not None


def test_a_unit_of_work_holding_too_much_has_negative_room_and_refuses_to_commit(tenant, clock, monkeypatch):
    monkeypatch.setattr(unit_of_work, "MAX_TRANSACTION_ITEMS", 5)
    uow = wiring.unit_of_work(user_ctx(tenant, clock))
    uow.add(*(table.put(item(tenant, f"i{n}")) for n in range(5)))
    uow.record_event("test.bulk", {})

    assert (uow.capacity, uow.remaining) == (5, -2)
    with pytest.raises(InvalidRequest, match="at most 5 records"):
        uow.commit()
