"""A record is one table item: 413 `{code}.too_large` beyond MAX_RECORD_BYTES of JSON, named after its kind."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from chalicelib.core.errors import PayloadTooLarge
from chalicelib.core.records import MAX_RECORD_BYTES, check_size

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
