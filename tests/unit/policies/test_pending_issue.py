"""The pure parts of an issue written in two stages (policies/repository.py): which stored records a read
shows, and how pending writes are packed into TransactWriteItems."""

from __future__ import annotations

import pytest

from chalicelib.policies.repository import visible
from chalicelib.storage.keys import Key
from chalicelib.storage.table import WriteOp, chunked


def op(pk: str, sk: str = "#ROOT", size: int = 1) -> WriteOp:
    return WriteOp("Put", {"size": size}, Key(pk, sk))


def by_size(write: WriteOp) -> int:
    return int(write.params["size"])


def keys_of(chunks: list[list[WriteOp]]) -> list[list[tuple[str, str]]]:
    return [[(write.key.pk, write.key.sk) for write in chunk] for chunk in chunks]


def test_a_record_written_in_its_final_write_is_always_shown():
    assert visible({"locator": "S1"}, set())


def test_a_pending_record_is_shown_once_its_token_is_committed_and_never_before():
    record = {"locator": "S1", "pendingIssue": "T2", "pendingIssueBy": "X1"}

    assert visible(record, {"T1", "T2"})
    assert not visible(record, set())
    assert not visible(record, {"T1"})  # an earlier attempt's token commits nothing of a later one's


def test_groups_are_packed_in_key_order_without_being_split():
    groups = [[op("P", "TX#3"), op("A#3")], [op("P", "SEG#1")], [op("P", "TX#1"), op("A#1")], [op("P", "SEG#2")]]

    assert keys_of(chunked(groups, 3, 100, by_size)) == [
        [("P", "SEG#1"), ("P", "SEG#2")],
        [("P", "TX#1"), ("A#1", "#ROOT")],
        [("P", "TX#3"), ("A#3", "#ROOT")],
    ]
    assert keys_of(chunked(groups, 100, 100, by_size)) == [
        [("P", "SEG#1"), ("P", "SEG#2"), ("P", "TX#1"), ("A#1", "#ROOT"), ("P", "TX#3"), ("A#3", "#ROOT")]
    ]


def test_a_chunk_is_closed_by_its_count_or_its_size_whichever_comes_first():
    groups = [[op("P", f"SEG#{n}", size=40)] for n in range(5)]

    assert [len(chunk) for chunk in chunked(groups, 100, 100, by_size)] == [2, 2, 1]
    assert [len(chunk) for chunk in chunked(groups, 3, 1000, by_size)] == [3, 2]
    assert [len(chunk) for chunk in chunked(groups * 50, 100, 10**9, by_size)] == [100, 100, 50]


def test_the_same_groups_in_any_order_give_the_same_chunks():
    groups = [[op("P", f"TX#{n}"), op(f"A#{n}")] for n in range(120)]

    assert keys_of(chunked(groups, 100, 10**9, by_size)) == keys_of(chunked(groups[::-1], 100, 10**9, by_size))
    assert [len(chunk) for chunk in chunked(groups, 100, 10**9, by_size)] == [100, 100, 40]


def test_nothing_to_write_is_no_chunk_and_a_group_no_chunk_holds_is_refused():
    assert chunked([], 100, 100, by_size) == []
    with pytest.raises(ValueError):
        chunked([[op("P", "TX#1", size=101)]], 100, 100, by_size)
    with pytest.raises(ValueError):
        chunked([[op("P", "TX#1"), op("A#1")]], 1, 100, by_size)
