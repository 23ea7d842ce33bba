"""The constraint engine on its own: options of constrained fields, and the dependency map."""

from __future__ import annotations

from decimal import Decimal

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

VEHICLES_SCHEMA = TableSchema.of_definition(
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
VEHICLES = ConstraintTable(
    VEHICLES_SCHEMA,
    [
        row.values
        for row in parse_csv(
            b"make,model,year,engine\nFord,Mustang,2020,5.0\nFord,Mustang,2021,2.3\nFord,F150,2021,3.5\n"
            b"Toyota,Camry,2020,2.5\nToyota,Camry,2021,2.5\nToyota,Camry,2022,2.50\n",
            VEHICLES_SCHEMA,
            "Vehicles",
        )
    ],
)

PROPERTIES = {
    "make": {"type": "string", "constraint": {"table": "Vehicles", "column": "make", "where": {}}},
    "model": {
        "type": "string",
        "constraint": {"table": "Vehicles", "column": "model", "where": {"make": {"key": "make", "values": []}}},
    },
    "year": {
        "type": "int",
        "constraint": {
            "table": "Vehicles",
            "column": "year",
            "where": {"make": {"key": "make", "values": []}, "model": {"key": "model", "values": []}},
        },
    },
    "engine": {
        "type": "decimal",
        "constraint": {"table": "Vehicles", "column": "engine", "where": {"year": {"key": "year", "values": []}}},
    },
    "colour": {"type": "string"},
}


def options(data, properties=PROPERTIES):
    return allowed_options(constrained_fields(properties), data, {"Vehicles": VEHICLES})


def test_with_nothing_chosen_every_value_of_each_column_is_an_option():
    assert options({}) == {
        "make": ["Ford", "Toyota"],
        "model": ["Mustang", "F150", "Camry"],
        "year": ["2020", "2021", "2022"],
        "engine": ["5", "2.3", "3.5", "2.5"],
    }


def test_each_choice_narrows_the_fields_that_depend_on_it():
    assert options({"make": "Ford"}) == {
        "make": ["Ford", "Toyota"],
        "model": ["Mustang", "F150"],
        "year": ["2020", "2021"],
        "engine": ["5", "2.3", "3.5", "2.5"],
    }
    assert options({"make": "Ford", "model": "F150"})["year"] == ["2021"]
    assert options({"make": "Toyota", "model": "F150"})["year"] == []


def test_values_compare_as_the_column_reads_them():
    assert options({"year": "02021"})["engine"] == ["2.3", "3.5", "2.5"]
    assert options({"year": Decimal("2022")})["engine"] == ["2.5"]


def test_a_list_value_matches_any_of_its_items_and_empty_values_narrow_nothing():
    assert options({"make": ["Ford", "Toyota"], "model": ["Camry", "F150"]})["year"] == ["2021", "2020", "2022"]
    assert options({"make": "", "model": []})["model"] == ["Mustang", "F150", "Camry"]


def test_fixed_values_restrict_whatever_the_data_holds():
    properties = {
        "model": {
            "constraint": {
                "table": "Vehicles",
                "column": "model",
                "where": {"make": {"key": "make", "values": ["Toyota"]}},
            }
        }
    }

    assert options({}, properties) == {"model": ["Camry"]}
    assert options({"make": "Ford"}, properties) == {"model": []}


def test_a_key_may_be_a_dotted_path_into_nested_data():
    properties = {
        "model": {
            "constraint": {
                "table": "Vehicles",
                "column": "model",
                "where": {"make": {"key": "vehicle.make", "values": []}},
            }
        }
    }

    assert options({"vehicle": {"make": "Toyota"}}, properties) == {"model": ["Camry"]}
    assert data_value({"vehicle.make": "Ford", "vehicle": {"make": "Toyota"}}, "vehicle.make") == "Ford"
    assert data_value({}, "..vehicle.make") is None


def test_a_constraint_naming_a_column_its_table_lacks_is_refused():
    properties = {"trim": {"constraint": {"table": "Vehicles", "column": "trim", "where": {}}}}

    with pytest.raises(InvalidState) as raised:
        options({}, properties)
    assert raised.value.code == "constraintTable.column_unknown"


def test_the_dependency_map_names_the_fields_each_condition_reads():
    fields = constrained_fields(PROPERTIES)

    assert [f.field for f in fields] == ["make", "model", "year", "engine"]
    assert dependencies(fields, {"make": "01JSTATICMAKE00000000000000"}) == {
        "make": {"column": "make", "table": "Vehicles", "where": {}},
        "model": {
            "column": "model",
            "table": "Vehicles",
            "where": {"make": {"staticLocator": "01JSTATICMAKE00000000000000", "fieldName": "make", "values": []}},
        },
        "year": {
            "column": "year",
            "table": "Vehicles",
            "where": {
                "make": {"staticLocator": "01JSTATICMAKE00000000000000", "fieldName": "make", "values": []},
                "model": {"staticLocator": "", "fieldName": "model", "values": []},
            },
        },
        "engine": {
            "column": "engine",
            "table": "Vehicles",
            "where": {"year": {"staticLocator": "", "fieldName": "year", "values": []}},
        },
    }
    nested = constrained_fields(
        {
            "model": {
                "constraint": {
                    "table": "Vehicles",
                    "column": "model",
                    "where": {"make": {"key": "vehicle.make", "values": ["Ford"]}},
                }
            }
        }
    )
    assert dependencies(nested, {})["model"]["where"]["make"] == {
        "staticLocator": "",
        "fieldName": "make",
        "values": ["Ford"],
    }
