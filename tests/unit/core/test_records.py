"""A record is one table item: 413 `{code}.too_large` beyond MAX_RECORD_BYTES of JSON, named after its kind; its
overflow packed into pages."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from chalicelib.core.errors import PayloadTooLarge
from chalicelib.core.records import MAX_RECORD_BYTES, check_size, packed

OVERHEAD = len('{"text":""}')


class Note(BaseModel):
    text: str


def test_a_record_of_exactly_the_limit_fits():
    check_size(Note(text="x" * (MAX_RECORD_BYTES - OVERHEAD)), code="quote", noun="note")


def test_one_byte_more_is_a_413_saying_how_large_it_would_be():
    with pytest.raises(PayloadTooLarge) as refused:
        check_size(Note(text="x" * (MAX_RECORD_BYTES - OVERHEAD + 1)), code="quote", noun="note")

    assert (refused.value.code, refused.value.message) == (
        "quote.too_large",
        f"The note would take {MAX_RECORD_BYTES + 1} bytes; at most {MAX_RECORD_BYTES} are allowed",
    )


def test_packed_keeps_order_and_fills_each_group_to_its_limit():
    words = ["aa", "bbb", "c", "dddd", "ee"]  # each counts its length and one byte of separator
    assert packed(words, len, 7) == [["aa", "bbb"], ["c", "dddd"], ["ee"]]
    assert [w for group in packed(words, len, 7) for w in group] == words


def test_packed_gives_a_value_larger_than_the_limit_a_group_of_its_own():
    assert packed(["x" * 10, "y", "z"], len, 4) == [["x" * 10], ["y", "z"]]
    assert packed([], len, 4) == []
