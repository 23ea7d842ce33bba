"""Reading uploaded table files: the ZIP, the header, typed values, keys."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.core.errors import InvalidRequest
from chalicelib.tables.models import TableKind, TableSchema
from chalicelib.tables.parser import canonical, join_key, parse_csv, parse_value, query_key, read_zip
from tests.unit.configuration.zips import zip_files

RULES = TableSchema.of_definition(
    TableKind.LOOKUP,
    {
        "columns": {
            "scope": {"dataType": "string", "isKey": True},
            "ruleId": {"dataType": "int", "isKey": True},
            "factor": {"dataType": "decimal", "isKey": False},
            "active": {"dataType": "boolean", "isKey": False},
            "from": {"dataType": "date", "isKey": False},
        }
    },
)


def parse(text: str, schema: TableSchema = RULES) -> list[dict]:
    return [row.values for row in parse_csv(text.encode(), schema, "Rules")]


def error_of(text: str, schema: TableSchema = RULES) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as raised:
        parse(text, schema)
    return raised.value


def test_values_are_parsed_to_their_column_types_whatever_the_header_order():
    rows = parse('ruleId,factor,scope,active,from\r\n007,1.50,uw,TRUE,2026-01-31\r\n8,,"a,b",false,\r\n')

    assert rows == [
        {"ruleId": 7, "factor": Decimal("1.50"), "scope": "uw", "active": True, "from": "2026-01-31"},
        {"ruleId": 8, "factor": None, "scope": "a,b", "active": False, "from": None},
    ]


def test_a_byte_order_mark_and_blank_rows_are_ignored():
    rows = parse("\ufeffscope,ruleId,factor,active,from\n\nuw,1,2,true,\n,,,,\n")

    assert rows == [{"scope": "uw", "ruleId": 1, "factor": Decimal(2), "active": True, "from": None}]


def test_a_header_that_does_not_name_the_columns_is_refused_with_what_differs():
    error = error_of("scope,ruleId,factor,extra,extra\nuw,1,2,3,4\n")

    assert error.code == "table.columns_mismatch"
    assert error.message == (
        "The CSV header does not match the columns of table Rules (scope, ruleId, factor, "
        "active, from): missing active, from; unknown 'extra', 'extra'; repeated extra"
    )


def test_every_wrong_value_is_named_by_row_and_column():
    error = error_of("scope,ruleId,factor,active,from\nuw,x,1,true,\nuw,2,1.2.3,yes,2026-02-30\n")

    assert error.code == "table.invalid_value"
    assert error.message.startswith(
        "The CSV has values that do not fit their column: row 2, column 'ruleId': 'x' is not a int (and 3 more)"
    )
    assert [(e.field, e.message) for e in error.field_errors] == [
        ("rows[2].ruleId", "row 2, column 'ruleId': 'x' is not a int"),
        ("rows[3].factor", "row 3, column 'factor': '1.2.3' is not a decimal"),
        ("rows[3].active", "row 3, column 'active': 'yes' is not a boolean"),
        ("rows[3].from", "row 3, column 'from': '2026-02-30' is not a date"),
    ]


def test_a_row_with_the_wrong_number_of_cells_and_an_empty_key_are_refused():
    error = error_of("scope,ruleId,factor,active,from\nuw,1,2\nuw,,1,true,\n")

    assert [(e.field, e.message) for e in error.field_errors] == [
        ("rows[2]", "row 2: has 3 cells; the header has 5"),
        ("rows[3].ruleId", "row 3, column 'ruleId': a value is required"),
    ]


def test_at_most_twenty_problems_are_looked_for():
    text = "scope,ruleId,factor,active,from\n" + "uw,x,1,true,\n" * 50

    assert len(error_of(text).field_errors) == 20


@pytest.mark.parametrize(
    ("text", "data_type", "expected"),
    [
        (" 12 ", "int", 12),
        ("-2147483648", "int", -2147483648),
        ("9223372036854775807", "long", 2**63 - 1),
        ("1e3", "decimal", Decimal("1E+3")),
        ("true", "boolean", True),
        ("2026-01-15T10:00:00+01:00", "datetime", "2026-01-15T09:00:00.000Z"),
        ("6F9619FF-8B86-D011-B42D-00C04FC964FF", "guid", "6f9619ff-8b86-d011-b42d-00c04fc964ff"),
        ("  padded ", "string", "  padded "),
        ("", "string", ""),
        ("", "decimal", None),
    ],
)
def test_parse_value(text, data_type, expected):
    assert parse_value(text, data_type) == expected


@pytest.mark.parametrize(
    ("text", "data_type", "problem"),
    [
        ("2147483648", "int", "'2147483648' is out of range for int"),
        ("1.5", "int", "'1.5' is not a int"),
        ("NaN", "decimal", "'NaN' is not a decimal"),
        ("1" * 39, "decimal", f"'{'1' * 39}' has more digits or a larger magnitude than a stored number may"),
        ("x", "uuid", "the column's dataType 'uuid' is not supported"),
    ],
)
def test_parse_value_refuses(text, data_type, problem):
    with pytest.raises(ValueError) as raised:
        parse_value(text, data_type)
    assert str(raised.value) == problem


def test_equal_values_have_one_canonical_text():
    assert canonical(Decimal("1.50")) == canonical(Decimal("1.5")) == "1.5"
    assert canonical(Decimal("1E+2")) == "100"
    assert canonical(Decimal("-0.0")) == "0"
    assert (canonical(True), canonical(None), canonical(7)) == ("true", "", "7")


def test_joined_keys_of_different_values_never_collide():
    samples = [["a|b"], ["a", "b"], ["a\\", "b"], ["a\\|b"], ["a", "", "b"], ["", "a|b"], ["a|", "b"]]

    assert len({join_key(parts) for parts in samples}) == len(samples)


def test_a_query_key_is_read_as_the_key_columns_read_the_rows():
    assert query_key(["uw", "007"], RULES) == join_key(["uw", "7"])
    with pytest.raises(InvalidRequest) as missing:
        query_key(["uw"], RULES)
    assert missing.value.code == "table.key_invalid"
    assert missing.value.message == "The key needs 2 value(s), one per key column (scope, ruleId); 1 given"
    with pytest.raises(InvalidRequest) as wrong:
        query_key(["uw", "seven"], RULES)
    assert wrong.value.message == "key[1] (column 'ruleId'): 'seven' is not a int"


def test_the_zip_must_hold_exactly_one_csv():
    assert read_zip(zip_files({"rates/Rates.csv": "a\n1\n", "__MACOSX/._Rates.csv": "x", "rates/.DS_Store": "x"})) == (
        "Rates.csv",
        b"a\n1\n",
    )
    for body, code in [
        (b"a,b\n1,2\n", "table.file_not_zip"),
        (zip_files({"a.csv": "a", "b.csv": "b"}), "table.file_invalid"),
        (zip_files({"a.txt": "a"}), "table.file_invalid"),
    ]:
        with pytest.raises(InvalidRequest) as raised:
            read_zip(body)
        assert raised.value.code == code


def test_a_csv_that_is_not_utf8_or_is_malformed_is_refused():
    with pytest.raises(InvalidRequest) as latin:
        parse_csv("scope,ruleId,factor,active,from\nGen\xe8ve,1,2,true,\n".encode("latin-1"), RULES, "Rules")
    assert (latin.value.code, latin.value.message) == ("table.file_invalid", "The CSV is not UTF-8 text (byte 35)")
    malformed = error_of('scope,ruleId,factor,active,from\n"uw,1,2,true,\n')
    assert malformed.code == "table.file_invalid"
    assert malformed.message.startswith("The CSV is malformed at line 2")


def test_range_bounds_not_listed_as_columns_are_decimal_columns_and_never_keys():
    schema = TableSchema.of_definition(
        TableKind.RANGE,
        {
            "rangeStart": "low",
            "rangeEnd": "high",
            "columns": {
                "state": {"dataType": "string", "isKey": True},
                "low": {"dataType": "int", "isKey": True},
                "factor": {"dataType": "decimal"},
            },
        },
    )

    assert [(c.name, c.dataType, c.isKey) for c in schema.columns] == [
        ("state", "string", True),
        ("low", "int", False),
        ("factor", "decimal", False),
        ("high", "decimal", False),
    ]
    assert [c.name for c in schema.key_columns] == ["state"]
