"""Laying a parsed table out for one-read lookups: duplicate keys, ranges, chunks, constraint filters."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.core.errors import InvalidRequest
from chalicelib.tables import layout
from chalicelib.tables.models import TableKind, TableSchema
from chalicelib.tables.parser import join_key, parse_csv

AGE_BANDS = TableSchema.of_definition(
    TableKind.RANGE,
    {
        "rangeStart": "minAge",
        "rangeEnd": "maxAge",
        "columns": {
            "state": {"dataType": "string", "isKey": True},
            "minAge": {"dataType": "int"},
            "maxAge": {"dataType": "int"},
            "factor": {"dataType": "decimal"},
        },
    },
)
RATES = TableSchema.of_definition(
    TableKind.LOOKUP, {"columns": {"state": {"dataType": "string", "isKey": True}, "rate": {"dataType": "decimal"}}}
)


def rows(text: str, schema: TableSchema):
    return parse_csv(text.encode(), schema, "T")


def test_lookup_rows_are_keyed_by_the_joined_key_and_hold_the_other_columns():
    laid_out = layout.lookup_rows(rows("state,rate\nCA,1.5\nNY,\n", RATES), RATES)

    assert laid_out == {"CA": {"rate": Decimal("1.5")}, "NY": {"rate": None}}


def test_a_repeated_key_names_both_rows():
    with pytest.raises(InvalidRequest) as raised:
        layout.lookup_rows(rows("state,rate\nCA,1\nNY,2\nCA,3\n", RATES), RATES)

    assert raised.value.code == "table.duplicate_key"
    assert raised.value.field_errors[0].message == "row 4: the key (CA) is already on row 2"


def test_ranges_are_sorted_per_key_and_found_by_start_inclusive_end_exclusive():
    laid_out = layout.range_rows(
        rows("state,minAge,maxAge,factor\nCA,25,65,1.0\nCA,16,25,1.8\nCA,65,,1.3\nNY,16,99,1.1\n", AGE_BANDS), AGE_BANDS
    )
    (chunk,) = laid_out["CA"].chunks

    assert [entry["minAge"] for entry in chunk] == [16, 25, 65]
    assert [
        layout.find_range(chunk, Decimal(age), AGE_BANDS)["factor"] for age in (16, 24, "24.99", 25, 64, 65, 120)
    ] == [Decimal(v) for v in ("1.8", "1.8", "1.8", "1.0", "1.0", "1.3", "1.3")]
    assert layout.find_range(chunk, Decimal(15), AGE_BANDS) is None
    (ny,) = laid_out["NY"].chunks
    assert layout.find_range(ny, Decimal(99), AGE_BANDS) is None


def test_overlapping_and_empty_ranges_are_refused_naming_the_rows():
    with pytest.raises(InvalidRequest) as overlap:
        layout.range_rows(rows("state,minAge,maxAge,factor\nCA,16,30,1\nCA,25,65,1\n", AGE_BANDS), AGE_BANDS)
    assert overlap.value.code == "table.overlapping_ranges"
    assert overlap.value.field_errors[0].message == (
        "row 3: the range starting at 25 overlaps the range of row 2 ([16, 30)) for the key (CA)"
    )

    with pytest.raises(InvalidRequest) as open_ended:
        layout.range_rows(rows("state,minAge,maxAge,factor\nCA,16,,1\nCA,65,70,1\n", AGE_BANDS), AGE_BANDS)
    assert open_ended.value.code == "table.overlapping_ranges"

    with pytest.raises(InvalidRequest) as empty:
        layout.range_rows(rows("state,minAge,maxAge,factor\nCA,30,30,1\n", AGE_BANDS), AGE_BANDS)
    assert empty.value.code == "table.invalid_range"
    assert (
        empty.value.field_errors[0].message == "row 2: the range [30, 30) is empty; its end must be greater "
        "than its start"
    )


def test_many_ranges_of_one_key_are_chunked_and_each_bound_finds_its_chunk(monkeypatch):
    monkeypatch.setattr(layout, "MAX_ITEM_BYTES", 400)
    text = "state,minAge,maxAge,factor\n" + "".join(f"CA,{n * 10},{n * 10 + 10},{n}\n" for n in range(30))
    laid_out = layout.range_rows(rows(text, AGE_BANDS), AGE_BANDS)["CA"]

    assert len(laid_out.chunks) > 3
    assert sum(len(chunk) for chunk in laid_out.chunks) == 30
    for age in (0, 5, 99, 100, 155, 299):
        chunk = laid_out.chunks[layout.chunk_for(laid_out.chunk_starts, Decimal(age))]
        assert layout.find_range(chunk, Decimal(age), AGE_BANDS)["factor"] == Decimal(age // 10)


def test_shards_grow_with_the_keys_and_a_key_always_lands_in_the_same_one():
    assert [layout.shard_count(n) for n in (0, 1, 5000, 5001, 100_000, 10_000_000)] == [1, 1, 1, 2, 20, 32]
    assert layout.shard_of(join_key(["CA", "7"]), 20) == layout.shard_of(join_key(["CA", "7"]), 20)
    assert len({layout.shard_of(str(n), 20) for n in range(1000)}) == 20


def test_constraint_values_filter_by_leading_columns_and_honour_make_distinct():
    schema = TableSchema.of_definition(
        TableKind.CONSTRAINT,
        {
            "columns": {
                "make": {"dataType": "string", "makeDistinct": True},
                "model": {"dataType": "string", "makeDistinct": True},
                "year": {"dataType": "int", "makeDistinct": False},
            }
        },
    )
    table = [
        row.values
        for row in rows(
            "make,model,year\nFord,Mustang,2020\nFord,Mustang,2021\nFord,F150,2021\nToyota,Camry,2020\n", schema
        )
    ]

    assert layout.constraint_values(table, schema, []) == {
        "make": ["Ford", "Toyota"],
        "model": ["Mustang", "F150", "Camry"],
        "year": [2020, 2021, 2021, 2020],
    }
    assert layout.constraint_values(table, schema, ["Ford"]) == {
        "make": ["Ford"],
        "model": ["Mustang", "F150"],
        "year": [2020, 2021, 2021],
    }
    assert layout.constraint_values(table, schema, ["", "Mustang"])["year"] == [2020, 2021]
    assert layout.constraint_values(table, schema, ["Tesla"]) == {"make": [], "model": [], "year": []}
