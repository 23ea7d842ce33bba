"""The constraint engine where a definition is unusual: constrained fields after unconstrained ones,
malformed definitions, typed fixed values, nested keys, and the message of a missing column."""

from __future__ import annotations

import pytest

from chalicelib.core.errors import InvalidState
from chalicelib.tables.constraints import (
    ConstraintTable,
    allowed_options,
    constrained_fields,
    data_value,
    dependencies,
)
from chalicelib.tables.models import TableKind, TableSchema
from chalicelib.tables.parser import parse_csv

SCHEMA = TableSchema.of_definition(
    TableKind.CONSTRAINT,
    {
        "columns": {
            "make": {"dataType": "string", "makeDistinct": True},
            "model": {"dataType": "string", "makeDistinct": True},
            "year": {"dataType": "int", "makeDistinct": True},
            "engine": {"dataType": "decimal", "makeDistinct": True},
        }
    },
)
TABLES = {
    "Vehicles": ConstraintTable(
        SCHEMA,
        [
            row.values
            for row in parse_csv(
                b"make,model,year,engine\nFord,Mustang,2020,5.0\nFord,F150,2021,3.5\nToyota,Camry,2021,2.5\n",
                SCHEMA,
                "Vehicles",
            )
        ],
    )
}


def constraint(column: str, **where: dict) -> dict:
    return {"constraint": {"table": "Vehicles", "column": column, "where": where}}


def options(properties: dict, data: dict) -> dict[str, list[str]]:
    return allowed_options(constrained_fields(properties), data, TABLES)


def test_a_constrained_field_after_unconstrained_ones_is_still_constrained():
    properties = {
        "colour": {"type": "string"},
        "notes": "free text",
        "vin": None,
        "model": constraint("model", make={"key": "make", "values": []}),
    }

    assert [f.field for f in constrained_fields(properties)] == ["model"]
    assert options(properties, {"make": "Ford"}) == {"model": ["Mustang", "F150"]}


def test_a_constraint_without_a_usable_where_narrows_nothing():
    for where in (None, [], "make"):
        properties = {"model": {"constraint": {"table": "Vehicles", "column": "model", "where": where}}}

        assert options(properties, {"make": "Ford"}) == {"model": ["Mustang", "F150", "Camry"]}
    malformed_condition = {"model": constraint("model", make="Ford")}
    assert options(malformed_condition, {"make": "Ford"}) == {"model": ["Mustang", "F150", "Camry"]}


def test_fixed_values_compare_as_the_column_reads_them():
    properties = {
        "engine": constraint("engine", year={"key": "", "values": ["02021", "2020.0"]}),
        "model": constraint("model", year={"values": [2021]}),
    }

    # "02021" reads as the int 2021; "2020.0" is no int, so it matches no row of the int column
    assert options(properties, {}) == {"engine": ["3.5", "2.5"], "model": ["F150", "Camry"]}


def test_fixed_values_and_the_data_must_both_hold():
    properties = {"model": constraint("model", make={"key": "make", "values": ["Ford", "Toyota"]})}

    assert options(properties, {"make": "Toyota"}) == {"model": ["Camry"]}
    assert options(properties, {"make": ["Toyota", "Honda"]}) == {"model": ["Camry"]}


def test_a_condition_without_a_key_reads_no_field():
    fields = constrained_fields({"model": constraint("model", make={"values": ["Toyota"]})})

    assert fields[0].where[0].key == ""
    assert dependencies(fields, {"": "01JSTATIC"})["model"]["where"]["make"] == {
        "staticLocator": "01JSTATIC",
        "fieldName": "",
        "values": ["Toyota"],
    }
    assert allowed_options(fields, {"XXXX": "Ford", "make": "Ford"}, TABLES) == {"model": ["Camry"]}


def test_the_field_a_deeply_nested_key_reads_is_its_last_segment():
    fields = constrained_fields({"model": constraint("model", make={"key": "policy.vehicle.make"})})

    assert dependencies(fields, {"policy.vehicle.make": "01JMAKE"})["model"]["where"]["make"] == {
        "staticLocator": "01JMAKE",
        "fieldName": "make",
        "values": [],
    }
    assert allowed_options(fields, {"policy": {"vehicle": {"make": "Toyota"}}}, TABLES) == {"model": ["Camry"]}


@pytest.mark.parametrize(
    "key, expected",
    [
        ("vehicle.make.", "Ford"),  # dots at either end are ignored
        (".vehicle.make", "Ford"),
        ("dimensions.X", 4),  # ...and only dots
        ("Xdimensions.X", None),
        ("vehicle. make", None),  # spaces are part of a name
        ("vehicle.make.model", None),
    ],
)
def test_a_dotted_key_walks_nested_objects(key, expected):
    data = {"vehicle": {"make": "Ford"}, "dimensions": {"X": 4}, "vehicle ": {"make": "Toyota"}}

    assert data_value(data, key) == expected


def test_a_missing_column_is_named_in_the_409_message():
    properties = {
        "trim": {
            "constraint": {
                "table": "Vehicles",
                "column": "trim",
                "where": {"make": {"key": "make"}, "colour": {"key": "colour"}},
            }
        }
    }

    with pytest.raises(InvalidState) as refused:
        options(properties, {})

    assert refused.value.code == "constraintTable.column_unknown"
    assert refused.value.message == (
        "The constraint of field 'trim' names column(s) trim, colour, which constraint table Vehicles does not have"
    )
