"""The data model's answer (answer.py) against the platform's definition of ConfigurationRef: every field it
requires is required of the package, defaulted or answered, with a value of its type."""

import json
from decimal import Decimal
from typing import Any

from chalicelib.configuration.answer import datamodel_answer
from chalicelib.configuration.resolve import resolve
from chalicelib.configuration.schema import SCHEMAS, Schema
from chalicelib.configuration.validator import validate
from tests.support.platform_client import PLATFORM_DEFINITION

PLATFORM_SCHEMAS = json.loads(PLATFORM_DEFINITION.read_text())["components"]["schemas"]
NOT_CHECKED = {"MoratoriumRef"}
"""Moratoriums are not validated yet: a package's moratorium is kept as the package writes it."""
REQUIRED_BY_VALIDATION = {
    ("ConfigurationRef", "accounts"),
    ("ConfigurationRef", "products"),
    ("ConfigurationRef", "charges"),
}
"""validate() refuses a model without an account type, a product and a premium charge."""
PYTHON_TYPES = {"string": str, "boolean": bool, "integer": int, "number": (int, Decimal), "array": list, "object": dict}


def platform_fields(name: str) -> tuple[set[str], dict[str, Any]]:
    """(required fields, properties) of a platform schema, its allOf parts merged."""
    schema = PLATFORM_SCHEMAS[name]
    required, properties = set(schema.get("required", [])), dict(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        if "$ref" in part:
            part_required, part_properties = platform_fields(part["$ref"].rsplit("/", 1)[1])
        else:
            part_required, part_properties = set(part.get("required", [])), part.get("properties", {})
        required |= part_required
        properties.update(part_properties)
    return required, properties


def answer_of(model: dict[str, Any]) -> dict[str, Any]:
    return datamodel_answer(model, resolve(model))


def always_there(schema: Schema) -> set[str]:
    """The fields every answered object of `schema` has: required of the package (or inherited), answered,
    or defaulted (an entity that extends another gets no defaults of its own)."""
    defaulted = set() if "extend" in schema.fields else set(schema.defaults)
    return set(schema.required) | set(schema.answered) | defaulted


def test_every_field_the_platform_answers_is_required_of_a_package_defaulted_or_answered():
    checked = {name: schema for name, schema in SCHEMAS.items() if name in PLATFORM_SCHEMAS and name not in NOT_CHECKED}
    left_out = {
        (name, field) for name, schema in checked.items() for field in platform_fields(name)[0] - always_there(schema)
    }

    assert left_out == REQUIRED_BY_VALIDATION
    assert validate({}).errors == [
        "accounts: at least one account type is required",
        "products: at least one product is required",
        "charges: at least one charge with category 'premium' is required",
    ]


def test_each_answered_value_has_the_type_the_platform_gives_the_field():
    for name, schema in SCHEMAS.items():
        properties = platform_fields(name)[1] if schema.answered else {}
        for field, value in schema.answered.items():
            kind = "object" if "$ref" in properties[field] else properties[field]["type"]
            assert isinstance(value, PYTHON_TYPES[kind]), (name, field, value)


def test_a_payment_type_is_answered_with_no_parent_no_numbering_plan_and_concrete():
    model = validate({"payments": {"Standard": {"displayName": "Standard"}}}).model

    assert answer_of(model)["payments"]["Standard"] == {
        "displayName": "Standard",
        "defaultSearchable": False,
        "numberingTrigger": "validation",
        "abstract": False,
        "extend": "",
        "numberingPlan": "",
    }
    assert model["payments"]["Standard"].keys() == {"displayName", "defaultSearchable", "numberingTrigger"}


def test_a_field_an_entity_leaves_to_its_parent_is_answered_as_it_inherits_it_also_unresolved():
    model = validate(
        {
            "numberingPlans": {"Payments": {"format": "P-#####"}},
            "payments": {
                "Base": {"abstract": True, "numberingPlan": "Payments", "numberingTrigger": "creation"},
                "Card": {"extend": "Base", "displayName": "Card"},
            },
        }
    ).model

    answer = answer_of(model)["payments"]

    assert answer["Base"] == {
        "abstract": True,
        "numberingPlan": "Payments",
        "numberingTrigger": "creation",
        "defaultSearchable": False,
        "extend": "",
    }
    assert answer["Card"] == {
        "extend": "Base",
        "displayName": "Card",
        "numberingPlan": "Payments",
        "numberingTrigger": "creation",
        "defaultSearchable": False,
        "abstract": False,
    }
    assert model["payments"]["Card"] == {"extend": "Base", "displayName": "Card"}
    assert datamodel_answer(resolve(model), resolve(model))["payments"]["Card"] == answer["Card"]


def test_bounds_defaults_and_options_written_as_numbers_or_booleans_are_answered_as_their_text():
    model = validate(
        {
            "accounts": {
                "Person": {
                    "data": {
                        "dependents": {"type": "int?", "min": 0, "max": 20, "options": [1, 2, "3"]},
                        "income": {"type": "decimal?", "min": Decimal("0.50")},
                        "smoker": {"type": "boolean", "defaultValue": False},
                        "nickname": {"type": "string?", "defaultValue": "Ada"},
                    }
                }
            }
        }
    ).model

    data = answer_of(model)["accounts"]["Person"]["data"]

    assert (data["dependents"]["min"], data["dependents"]["max"], data["dependents"]["options"]) == (
        "0",
        "20",
        ["1", "2", "3"],
    )
    assert (data["income"]["min"], data["smoker"]["defaultValue"], data["nickname"]["defaultValue"]) == (
        "0.50",
        "false",
        "Ada",
    )
    assert model["accounts"]["Person"]["data"]["dependents"]["min"] == 0
