"""CSV chunking of deserialization jobs: a step ends at a line break outside quoted cells, so a cell holding
a line break or a quote never splits across steps."""

from __future__ import annotations

import pytest

from chalicelib.core.errors import DomainError
from chalicelib.schedules.models import ScheduleDescription
from chalicelib.schedules.parsing import body_rows, check_flat, header_length, row_data, row_ends

DESCRIPTION = ScheduleDescription(
    staticElementLocator="S",
    elementType="Vehicle",
    scheduleItemType="Equipment",
    properties={
        "serial": {"type": "string"},
        "insured": {"type": "boolean?"},
        "owner": {"type": "Driver?"},
        "tags": {"type": "string*"},
    },
    resetOnRenewal=False,
    maxValidationErrors=5,
)


def test_rows_end_at_line_breaks_outside_quoted_cells():
    chunk = b'a,"one\nline",x\nb,"say ""hi""\n",y\r\nc,plain,z\nd,"open'
    ends = row_ends(chunk, 10, at_end=False)
    assert [chunk[start:end] for start, end in zip([0, *ends], ends)] == [
        b'a,"one\nline",x\n',
        b'b,"say ""hi""\n",y\r\n',
        b"c,plain,z\n",
    ]
    assert body_rows(chunk[: ends[-1]].decode()) == [
        ["a", "one\nline", "x"],
        ["b", 'say "hi"\n', "y"],
        ["c", "plain", "z"],
    ]


def test_a_step_takes_at_most_its_rows_and_the_last_row_needs_no_line_break():
    chunk = b"a\nb\nc\nd"
    assert row_ends(chunk, 2, at_end=True) == [2, 4]
    assert row_ends(chunk, 10, at_end=True) == [2, 4, 6, 7]
    assert row_ends(chunk, 10, at_end=False) == [2, 4, 6]
    assert row_ends(b"a\n\n", 10, at_end=True) == [2, 3]


def test_the_header_and_its_length_skip_a_byte_order_mark():
    assert header_length(b"\xef\xbb\xbfserial, insured\r\nAB0001,true\n", at_end=True) == (["serial", "insured"], 20)
    with pytest.raises(DomainError) as refused:
        header_length(b"serial,insu", at_end=False)
    assert refused.value.code == "schedule.file_invalid"


def test_cells_become_item_data_and_nested_columns_are_refused():
    assert row_data(["serial", "insured"], ["AB0001", "TRUE"], DESCRIPTION) == {"serial": "AB0001", "insured": True}
    assert row_data(["serial", "insured"], ["AB0001", ""], DESCRIPTION) == {"serial": "AB0001"}
    assert row_data(["serial", "insured"], ["AB0001", "yes"], DESCRIPTION) == {"serial": "AB0001", "insured": "yes"}
    assert row_data(["serial", "insured"], ["AB0001"], DESCRIPTION) == "has 1 cells where the header has 2"
    for header in (["serial", "owner"], ["tags"], ["owner.name"], ["tags[0]"]):
        with pytest.raises(DomainError) as refused:
            check_flat(header, DESCRIPTION)
        assert refused.value.code == "schedule.nested_column"
    check_flat(["serial", "insured", "unknown"], DESCRIPTION)
