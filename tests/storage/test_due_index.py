"""The due index (storage/due_index.py): entries put, moved and removed by (kind, ref); a tenant's entries
due up to a moment read in time order, a page at a time; settling and moving on condition of the token."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest

from chalicelib.core.context import SYSTEM, CallContext
from chalicelib.core.errors import ConcurrentModification
from chalicelib.runtime import wiring
from chalicelib.storage import due_index, keys, table

T0 = datetime(2027, 3, 1, 5, tzinfo=timezone.utc)


def write(tenant, *ops):
    uow = wiring.unit_of_work(CallContext(principal=SYSTEM, request_id="r", now=T0, tenant_locator=tenant))
    uow.add(*ops)
    uow.commit()


def due(tenant, until, **options):
    return [(e.kind, e.ref, e.due_at) for e in due_index.page(tenant, until, **options).entries]


def test_entries_are_read_in_time_order_up_to_and_including_a_moment(tenant):
    write(
        tenant,
        due_index.put(tenant, "invoice.generate", "A2", T0 + timedelta(days=2)),
        due_index.put(tenant, "policy.autoRenew", "P1", T0),
        due_index.put(tenant, "invoice.due", "A1", T0 + timedelta(hours=1)),
        due_index.put(tenant, "invoice.generate", "A1", T0),
    )

    assert due(tenant, T0 - timedelta(milliseconds=1)) == []
    assert due(tenant, T0) == [("invoice.generate", "A1", T0), ("policy.autoRenew", "P1", T0)]
    assert due(tenant, T0 + timedelta(days=2)) == [
        ("invoice.generate", "A1", T0),
        ("policy.autoRenew", "P1", T0),
        ("invoice.due", "A1", T0 + timedelta(hours=1)),
        ("invoice.generate", "A2", T0 + timedelta(days=2)),
    ]


def test_a_page_is_one_query_and_one_consistent_batch_read_and_continues_after_its_last(tenant, ddb_calls):
    write(tenant, *[due_index.put(tenant, "policy.autoRenew", f"P{n}", T0 + timedelta(minutes=n)) for n in range(5)])
    ddb_calls.clear()

    first = due_index.page(tenant, T0 + timedelta(days=1), limit=2)

    assert Counter(ddb_calls) == {"Query": 1, "BatchGetItem": 1}
    assert [e.ref for e in first.entries] == ["P0", "P1"]
    second = due_index.page(tenant, T0 + timedelta(days=1), after=first.after, limit=2)
    third = due_index.page(tenant, T0 + timedelta(days=1), after=second.after, limit=2)
    assert ([e.ref for e in second.entries], [e.ref for e in third.entries]) == (["P2", "P3"], ["P4"])
    assert third.after is None
    assert due_index.page(tenant, T0 + timedelta(days=1), after=first.after, limit=2).after == second.after


def test_an_entry_is_named_by_kind_and_ref_so_a_put_moves_it_and_a_remove_needs_no_due_time(tenant):
    write(tenant, due_index.put(tenant, "policy.autoRenew", "P1", T0, {"accountLocator": "A1"}))
    write(tenant, due_index.put(tenant, "policy.autoRenew", "P1", T0 + timedelta(days=10), {"accountLocator": "A2"}))

    assert due(tenant, T0 + timedelta(days=9)) == []
    [moved] = due_index.page(tenant, T0 + timedelta(days=10)).entries
    assert (moved.due_at, moved.payload) == (T0 + timedelta(days=10), {"accountLocator": "A2"})
    assert due_index.get(tenant, "policy.autoRenew", "P1") == moved

    write(tenant, due_index.remove(tenant, "policy.autoRenew", "P1"))
    write(tenant, due_index.remove(tenant, "policy.autoRenew", "P1"))  # whether or not there is one
    assert due(tenant, T0 + timedelta(days=30)) == []
    assert due_index.get(tenant, "policy.autoRenew", "P1") is None


def test_settling_or_moving_an_entry_put_again_since_it_was_read_fails_and_changes_nothing(tenant):
    write(tenant, due_index.put(tenant, "policy.autoRenew", "P1", T0))
    [read] = due_index.page(tenant, T0).entries
    write(tenant, due_index.put(tenant, "policy.autoRenew", "P1", T0 + timedelta(days=365)))  # an issue moved it

    for op in (due_index.settle(read), due_index.move(read, T0 + timedelta(days=10))):
        with pytest.raises(due_index.EntryMoved) as raised:
            write(tenant, op)
        assert isinstance(raised.value, ConcurrentModification)
    assert due_index.get(tenant, "policy.autoRenew", "P1").due_at == T0 + timedelta(days=365)

    [again] = due_index.page(tenant, T0 + timedelta(days=365)).entries
    write(tenant, due_index.move(again, T0 + timedelta(days=400), attempts=2))
    moved = due_index.get(tenant, "policy.autoRenew", "P1")
    assert (moved.due_at, moved.attempts, moved.token != again.token) == (T0 + timedelta(days=400), 2, True)
    write(tenant, due_index.settle(moved))
    assert due_index.get(tenant, "policy.autoRenew", "P1") is None


def test_an_entry_the_index_still_shows_after_it_was_settled_or_moved_is_not_answered(tenant, monkeypatch):
    """The index is read eventually consistently: the page reads its entries again, consistently."""
    write(
        tenant, due_index.put(tenant, "policy.autoRenew", "P1", T0), due_index.put(tenant, "policy.autoRenew", "P2", T0)
    )
    stale, _ = table.gateway().query(keys.tenant_scope(tenant), keys.due_index(tenant), index="GSI3")
    [p1] = [e for e in due_index.page(tenant, T0).entries if e.ref == "P1"]
    write(tenant, due_index.settle(p1), due_index.put(tenant, "policy.autoRenew", "P2", T0 + timedelta(days=1)))
    query = table.TableGateway.query
    monkeypatch.setattr(
        table.TableGateway,
        "query",
        lambda self, scope, pk, **options: (
            (stale, None) if pk == keys.due_index(tenant) else query(self, scope, pk, **options)
        ),
    )

    page = due_index.page(tenant, T0)

    assert (page.entries, page.after) == ([], None)


def test_entries_are_per_tenant(tenant):
    from tests.builders import new_tenant

    other = new_tenant()
    write(tenant, due_index.put(tenant, "policy.autoRenew", "P1", T0))
    write(other, due_index.put(other, "policy.autoRenew", "P1", T0 + timedelta(hours=1)))

    assert due(tenant, T0 + timedelta(days=1)) == [("policy.autoRenew", "P1", T0)]
    assert due(other, T0 + timedelta(days=1)) == [("policy.autoRenew", "P1", T0 + timedelta(hours=1))]


@pytest.mark.parametrize("kind, ref", [("a#b", "P1"), ("policy.autoRenew", "P\u00e9")])
def test_a_kind_holds_no_hash_and_both_are_ascii(tenant, kind, ref):
    with pytest.raises(ValueError):
        due_index.put(tenant, kind, ref, T0)
