"""The data engine: configured data validated and normalised, element trees checked."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.configuration import datamodel
from chalicelib.configuration.datamodel import (
    Quantified,
    TypeSpec,
    constraint_errors,
    element_types,
    option_keys,
    parse_quantified,
    parse_type,
    validate_data,
    validate_element_tree,
    validation_result,
)
from chalicelib.configuration.resolve import resolve
from chalicelib.configuration.validator import validate
from tests.unit.configuration.zips import fixture_model

NO_TYPES: dict = {}


def check(props: dict, data: dict, model: dict | None = None) -> tuple[dict, list[str]]:
    normalised, errors = validate_data(model or NO_TYPES, props, data)
    return normalised, [f"{e['path']}: {e['message']}" for e in errors]


def errors_of(props: dict, data: dict, model: dict | None = None) -> list[str]:
    return check(props, data, model)[1]


# --- type grammar --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, spec",
    [
        ("string", TypeSpec("string", "")),
        ("int?", TypeSpec("int", "?")),
        ("Driver*", TypeSpec("Driver", "*")),
        ("string+", TypeSpec("string", "+")),
        ("Address!", TypeSpec("Address", "!")),
    ],
)
def test_parse_type(text, spec):
    assert parse_type(text) == spec


def test_a_type_of_only_a_quantifier_names_nothing():
    with pytest.raises(ValueError):
        parse_type("?")


def test_list_and_builtin_flags():
    assert parse_type("Driver*").is_list and parse_type("string+").is_list
    assert not parse_type("int?").is_list and not parse_type("Address!").is_list
    assert parse_type("guid").is_builtin and not parse_type("Address").is_builtin


@pytest.mark.parametrize(
    "entry, minimum, maximum, auto",
    [
        ("Vehicle", 1, 1, False),
        ("Vehicle!", 1, 1, True),
        ("Vehicle?", 0, 1, False),
        ("Vehicle*", 0, None, False),
        ("Vehicle+", 1, None, False),
    ],
)
def test_contents_quantifiers(entry, minimum, maximum, auto):
    parsed = parse_quantified(entry)
    assert parsed.name == "Vehicle"
    assert (parsed.minimum, parsed.maximum, parsed.auto_create) == (minimum, maximum, auto)


# --- required, optional, unknown ------------------------------------------------------------------


def test_a_field_without_quantifier_is_required_and_null_counts_as_absent():
    props = {"name": {"type": "string"}, "nick": {"type": "string?"}}
    assert errors_of(props, {}) == ["data.name: is required"]
    assert errors_of(props, {"name": None}) == ["data.name: is required"]
    assert check(props, {"name": "Ada", "nick": None}) == ({"name": "Ada"}, [])


def test_a_missing_type_means_string():
    assert errors_of({"name": {}}, {"name": 5}) == ["data.name: must be a string"]


def test_unknown_fields_are_reported_and_kept_as_given():
    normalised, errors = check({"name": {"type": "string"}}, {"name": "Ada", "shoeSize": 42})
    assert errors == ["data.shoeSize: is not a configured field"]
    assert normalised == {"name": "Ada", "shoeSize": 42}


def test_data_that_is_not_an_object():
    assert validate_data(NO_TYPES, {"a": {"type": "string?"}}, [1, 2]) == (
        {},
        [{"path": "data", "message": "must be an object"}],
    )


def test_none_data_is_empty_data():
    assert validate_data(NO_TYPES, {"a": {"type": "string?"}}, None) == ({}, [])


def test_the_error_path_prefix_is_the_callers():
    _, errors = validate_data(NO_TYPES, {"a": {"type": "int"}}, {"a": "x"}, path="static")
    assert errors == [{"path": "static.a", "message": "must be a whole number"}]


# --- defaults --------------------------------------------------------------------------------------


def test_absent_fields_take_their_default_value_converted_to_the_type():
    props = {
        "flag": {"type": "boolean", "defaultValue": "true"},
        "days": {"type": "int?", "defaultValue": "0"},
        "rate": {"type": "decimal", "defaultValue": "1.5", "precision": 2},
        "name": {"type": "string?"},
    }
    assert check(props, {}) == ({"flag": True, "days": 0, "rate": Decimal("1.50")}, [])
    assert check(props, {"flag": False, "days": 7}) == ({"flag": False, "days": 7, "rate": Decimal("1.50")}, [])


def test_a_default_that_does_not_fit_is_reported():
    assert errors_of({"days": {"type": "int", "defaultValue": "soon"}}, {}) == ["data.days: must be a whole number"]


# --- strings ---------------------------------------------------------------------------------------


def test_string_lengths():
    props = {"code": {"type": "string", "minLength": 2, "maxLength": 4}}
    assert errors_of(props, {"code": "A"}) == ["data.code: must be at least 2 characters long"]
    assert errors_of(props, {"code": "ABCDE"}) == ["data.code: must be at most 4 characters long"]
    assert errors_of(props, {"code": "ABCD"}) == []


def test_regex_must_match_the_whole_value():
    props = {"zip": {"type": "string", "regex": "[0-9]{5}"}}
    assert errors_of(props, {"zip": "12345"}) == []
    assert errors_of(props, {"zip": "123456"}) == ["data.zip: must match the pattern [0-9]{5}"]
    assert errors_of(props, {"zip": "x12345"}) == ["data.zip: must match the pattern [0-9]{5}"]


def test_an_invalid_configured_regex_is_reported_not_raised():
    assert errors_of({"a": {"type": "string", "regex": "(unclosed"}}, {"a": "x"}) == [
        "data.a: cannot be checked: the configured regex '(unclosed' is not valid"
    ]


def test_options_restrict_values_and_list_items():
    props = {
        "tier": {"type": "string", "options": ["Gold", "Silver"]},
        "colours": {"type": "string*", "options": ["red", "blue"]},
    }
    assert errors_of(props, {"tier": "Gold", "colours": ["red", "blue"]}) == []
    assert errors_of(props, {"tier": "gold", "colours": ["red", "green"]}) == [
        "data.tier: must be one of: Gold, Silver",
        "data.colours[1]: must be one of: red, blue",
    ]


def test_numeric_options_given_as_strings_match_numbers():
    props = {"days": {"type": "int", "options": ["0", "7", "14"]}}
    assert check(props, {"days": 7}) == ({"days": 7}, [])
    assert errors_of(props, {"days": 8}) == ["data.days: must be one of: 0, 7, 14"]


# --- numbers ---------------------------------------------------------------------------------------


def test_int_and_long_ranges():
    props = {"small": {"type": "int?"}, "big": {"type": "long?"}}
    assert check(props, {"small": 2**31 - 1, "big": 2**63 - 1}) == ({"small": 2**31 - 1, "big": 2**63 - 1}, [])
    assert errors_of(props, {"small": 2**31}) == ["data.small: must be between -2147483648 and 2147483647 (an int)"]
    assert errors_of(props, {"big": -(2**63) - 1}) == [
        "data.big: must be between -9223372036854775808 and 9223372036854775807 (a long)"
    ]


def test_whole_numbers_are_normalised_to_ints_and_numeric_strings_accepted():
    props = {"n": {"type": "int"}}
    assert check(props, {"n": Decimal("4.0")}) == ({"n": 4}, [])
    assert check(props, {"n": "12"}) == ({"n": 12}, [])
    for bad in (4.5, "4.5", "twelve", True, "NaN", [1]):
        assert errors_of(props, {"n": bad}), bad


def test_numeric_min_and_max_accept_string_or_number_bounds():
    props = {"year": {"type": "int", "min": "1900", "max": 2100}, "amount": {"type": "decimal?", "min": "0.5"}}
    assert errors_of(props, {"year": 1899}) == ["data.year: must be at least 1900"]
    assert errors_of(props, {"year": 2101}) == ["data.year: must be at most 2100"]
    assert errors_of(props, {"year": 1900, "amount": Decimal("0.4")}) == ["data.amount: must be at least 0.5"]


@pytest.mark.parametrize(
    "mode, value, expected",
    [
        ("halfUp", "2.345", "2.35"),
        ("halfDown", "2.345", "2.34"),
        ("halfEven", "2.345", "2.34"),
        ("halfEven", "2.355", "2.36"),
        ("up", "2.341", "2.35"),
        ("down", "2.349", "2.34"),
        ("ceiling", "-2.349", "-2.34"),
        ("floor", "-2.341", "-2.35"),
        (None, "2.345", "2.35"),
    ],
)
def test_decimal_precision_rounds_with_the_rounding_mode(mode, value, expected):
    prop = {"type": "decimal", "precision": 2, **({"roundingMode": mode} if mode else {})}
    assert check({"x": prop}, {"x": Decimal(value)}) == ({"x": Decimal(expected)}, [])


def test_decimal_precision_pads_and_strings_are_read():
    assert check({"x": {"type": "decimal", "precision": 3}}, {"x": "7"}) == ({"x": Decimal("7.000")}, [])


def test_decimals_without_precision_keep_their_value():
    assert check({"x": {"type": "decimal"}}, {"x": Decimal("0.1234567")}) == ({"x": Decimal("0.1234567")}, [])


def test_numbers_no_store_could_hold_are_refused():
    props = {"x": {"type": "decimal?"}, "y": {"type": "decimal?", "precision": 2}}
    assert errors_of(props, {"x": Decimal("1E+200")}) == ["data.x: is a number outside the supported range"]
    assert errors_of(props, {"y": Decimal("1E+40")}) == ["data.y: is a number outside the supported range"]
    normalised, errors = check({}, {"junk": Decimal("1E+300"), "ok": "1E+300"})
    assert normalised == {"ok": "1E+300"}
    assert errors == ["data.junk: is not a configured field", "data.ok: is not a configured field"]


# --- dates, datetimes, booleans, guids -----------------------------------------------------------


def test_dates():
    props = {"born": {"type": "date", "min": "1900-01-01", "max": "2025-12-31"}}
    assert check(props, {"born": "1990-02-28"}) == ({"born": "1990-02-28"}, [])
    assert errors_of(props, {"born": "1899-12-31"}) == ["data.born: must be at least 1900-01-01"]
    assert errors_of(props, {"born": "2026-01-01"}) == ["data.born: must be at most 2025-12-31"]
    for bad in ("1990-02-30", "19900228", "1990-02-28T00:00:00Z", 19900228):
        assert errors_of(props, {"born": bad}) == ["data.born: must be a date (YYYY-MM-DD)"], bad


def test_a_bound_that_does_not_parse_as_the_type_is_ignored():
    assert errors_of({"born": {"type": "date", "min": 1900}}, {"born": "1800-01-01"}) == []


def test_datetimes_are_normalised_to_utc():
    props = {"at": {"type": "datetime", "min": "2020-01-01T00:00:00Z"}}
    assert check(props, {"at": "2026-01-15T10:30:00+01:00"}) == ({"at": "2026-01-15T09:30:00.000Z"}, [])
    assert check(props, {"at": "2026-01-15T09:30:00"}) == ({"at": "2026-01-15T09:30:00.000Z"}, [])
    assert errors_of(props, {"at": "2019-12-31T23:00:00-02:00"}) == []
    assert errors_of(props, {"at": "2019-12-31T23:00:00Z"}) == ["data.at: must be at least 2020-01-01T00:00:00Z"]
    assert errors_of(props, {"at": "yesterday"}) == ["data.at: must be an ISO-8601 date-time"]


def test_booleans_are_json_booleans():
    props = {"b": {"type": "boolean"}}
    assert check(props, {"b": False}) == ({"b": False}, [])
    for bad in ("true", 1, 0):
        assert errors_of(props, {"b": bad}) == ["data.b: must be true or false"]


def test_guids_are_canonicalised():
    props = {"g": {"type": "guid"}}
    assert check(props, {"g": "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"}) == (
        {"g": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
        [],
    )
    assert errors_of(props, {"g": "not-a-guid"}) == ["data.g: must be a GUID"]
    assert errors_of(props, {"g": 5}) == ["data.g: must be a GUID"]


# --- lists ---------------------------------------------------------------------------------------


def test_star_lists_take_zero_or_more_and_plus_lists_one_or_more():
    props = {"tags": {"type": "string*"}, "names": {"type": "string+"}}
    assert errors_of(props, {"names": ["a"]}) == []
    assert errors_of(props, {"tags": [], "names": []}) == ["data.names: needs at least one value"]
    assert errors_of(props, {}) == ["data.names: needs at least one value"]


def test_list_shapes_are_checked():
    props = {"tags": {"type": "string*"}, "one": {"type": "string"}}
    assert errors_of(props, {"tags": "a", "one": ["a"]}) == [
        "data.tags: must be a list",
        "data.one: must be a single value, not a list",
    ]
    assert errors_of(props, {"tags": ["a", 2, None], "one": "a"}) == [
        "data.tags[1]: must be a string",
        "data.tags[2]: must not be null",
    ]


# --- data types ----------------------------------------------------------------------------------

DATA_TYPES = {
    "dataTypes": {
        "Address": {"data": {"city": {"type": "string"}, "zip": {"type": "string?", "regex": "[0-9]{5}"}}},
        "Driver": {"data": {"name": {"type": "string"}, "address": {"type": "Address?"}}},
        "Person": {"data": {"name": {"type": "string"}, "partner": {"type": "Person?"}}},
    }
}


def test_data_types_are_validated_recursively_with_paths():
    props = {"drivers": {"type": "Driver+"}, "home": {"type": "Address"}}
    data = {"home": {"city": "Oslo"}, "drivers": [{"name": "A", "address": {"zip": "12"}}, {"name": "B", "x": 1}]}
    normalised, errors = check(props, data, DATA_TYPES)
    assert errors == [
        "data.drivers[0].address.city: is required",
        "data.drivers[0].address.zip: must match the pattern [0-9]{5}",
        "data.drivers[1].x: is not a configured field",
    ]
    assert normalised == data


def test_a_data_type_value_must_be_an_object():
    assert errors_of({"home": {"type": "Address"}}, {"home": "Oslo"}, DATA_TYPES) == ["data.home: must be an object"]


def test_a_bang_data_type_is_created_when_absent():
    normalised, errors = check({"home": {"type": "Address!"}}, {}, DATA_TYPES)
    assert normalised == {"home": {}}
    assert errors == ["data.home.city: is required"]


def test_recursive_data_types_stop_at_the_depth_limit():
    deep: dict = {"name": "x"}
    for _ in range(datamodel.MAX_DEPTH + 2):
        deep = {"name": "x", "partner": deep}
    _, errors = check({"p": {"type": "Person"}}, {"p": deep}, DATA_TYPES)
    assert len(errors) == 1 and errors[0].endswith(f"is nested more than {datamodel.MAX_DEPTH} levels deep")


def test_data_types_inherit_through_the_resolved_model():
    model = resolve(
        {
            "dataTypes": {
                "Base": {"abstract": True, "data": {"id": {"type": "int"}}},
                "Car": {"extend": "Base", "data": {"vin": {"type": "string"}}},
            }
        }
    )
    assert errors_of({"car": {"type": "Car"}}, {"car": {"vin": "V"}}, model) == ["data.car.id: is required"]


# --- constraint tables --------------------------------------------------------------------------


def test_constraint_errors_compare_with_the_allowed_values():
    props = {
        "make": {"type": "string", "constraint": {"table": "Cars", "column": "make", "where": {}}},
        "model": {"type": "string", "constraint": {"table": "Cars", "column": "model", "where": {}}},
        "colour": {"type": "string"},
    }
    data = {"make": "Volvo", "model": "Golf", "colour": "red"}
    allowed = {"make": ["Volvo", "VW"], "model": ["XC60", "V70"], "colour": []}
    assert constraint_errors(props, data, allowed) == [
        {"path": "data.model", "message": "'Golf' is not allowed by constraint table Cars (allowed: XC60, V70)"}
    ]


def test_constrained_numbers_compare_by_value():
    props = {"seats": {"type": "decimal", "constraint": {"table": "Cars", "column": "seats", "where": {}}}}
    assert constraint_errors(props, {"seats": Decimal("5.0")}, {"seats": ["5", "7"]}) == []
    assert len(constraint_errors(props, {"seats": Decimal("6")}, {"seats": ["5", "7"]})) == 1


# --- validation results -------------------------------------------------------------------------


def test_validation_result_groups_errors_by_record():
    errors = [
        {"path": "data.a", "message": "is required"},
        {"path": "elements[0].data.b", "message": "bad", "locator": "E1", "elementType": "Car"},
        {"path": "data.c", "message": "worse"},
    ]
    result = validation_result(errors, locator="A1", element_type="Person")
    assert result.model_dump() == {
        "success": False,
        "validationItems": [
            {"locator": "A1", "elementType": "Person", "errors": ["data.a: is required", "data.c: worse"]},
            {"locator": "E1", "elementType": "Car", "errors": ["elements[0].data.b: bad"]},
        ],
    }
    assert validation_result([], locator="A1", element_type="Person").model_dump() == {
        "success": True,
        "validationItems": [],
    }


# --- element trees ------------------------------------------------------------------------------

TREE_MODEL = {
    "products": {
        "Auto": {
            "contents": ["Vehicle+", "Policyholder!", "Discount?"],
            "coverageTerms": ["Term?"],
            "data": {"channel": {"type": "string?", "options": ["web", "phone"]}},
        }
    },
    "exposures": {
        "Vehicle": {"contents": ["Collision", "Glass*"], "data": {"vin": {"type": "string"}}},
        "Policyholder": {},
    },
    "coverages": {"Collision": {"coverageTerms": ["Deductible!", "Limit", "Extra?"]}, "Glass": {}, "Discount": {}},
    "coverageTerms": {
        "Deductible": {"type": "deductible", "options": {"*d500": {"value": 500}, "d1000": {"value": 1000}}},
        "Limit": {"type": "limit", "options": {"l10k": {"value": 10000}, "*l20k": {"value": 20000}}},
        "Extra": {"type": "limit", "options": {"e1": {"value": 1}}},
        "Term": {"type": "limit", "value": {"type": "int", "min": 1}},
    },
}


def vehicle(locator: str = "V1", **fields) -> dict:
    return {
        "type": "Vehicle",
        "locator": locator,
        "data": {"vin": "VIN1"},
        "elements": [{"type": "Collision", "locator": f"{locator}C"}],
        **fields,
    }


def tree(*children, **fields) -> dict:
    return {
        "type": "Auto",
        "locator": "Q1",
        "data": {},
        "elements": [*children, {"type": "Policyholder", "locator": "PH"}],
        **fields,
    }


def tree_errors(element: dict) -> list[tuple[str, str, str]]:
    _, errors = validate_element_tree(TREE_MODEL, element)
    return [(e["locator"], e["elementType"], f"{e['path']}: {e['message']}") for e in errors]


def test_element_types_of_every_element_collection():
    types = element_types(TREE_MODEL)
    assert {name: t.category for name, t in types.items()} == {
        "Vehicle": "exposure",
        "Policyholder": "exposure",
        "Collision": "coverage",
        "Glass": "coverage",
        "Discount": "coverage",
    }
    assert types["Vehicle"].contents == [Quantified("Collision", ""), Quantified("Glass", "*")]
    assert types["Collision"].coverage_terms[0] == Quantified("Deductible", "!")


def test_a_valid_tree_is_normalised_with_default_coverage_terms():
    normalised, errors = validate_element_tree(TREE_MODEL, tree(vehicle()))
    assert errors == []
    collision = normalised["elements"][0]["elements"][0]
    assert collision["coverageTerms"] == {"Deductible": "d500", "Limit": "l20k"}
    assert normalised["elements"][0]["data"] == {"vin": "VIN1"}


def test_quantifier_counts_are_checked_on_the_parent():
    assert tree_errors({"type": "Auto", "locator": "Q1", "elements": []}) == [
        ("Q1", "Auto", "elements: needs at least 1 Vehicle (Vehicle+), has 0"),
        ("Q1", "Auto", "elements: needs at least 1 Policyholder (Policyholder!), has 0"),
    ]
    two_discounts = tree(vehicle(), {"type": "Discount"}, {"type": "Discount"})
    assert tree_errors(two_discounts) == [("Q1", "Auto", "elements: allows at most 1 Discount (Discount?), has 2")]
    no_collision = tree(vehicle(elements=[{"type": "Glass"}, {"type": "Glass"}]))
    assert tree_errors(no_collision) == [
        ("V1", "Vehicle", "elements[0].elements: needs at least 1 Collision (Collision), has 0")
    ]


def test_an_element_type_not_in_the_parents_contents_is_refused():
    assert tree_errors(tree(vehicle(), {"type": "Glass", "locator": "G"})) == [
        (
            "Q1",
            "Auto",
            "elements[1].type: 'Glass' is not allowed in Auto (contents: Vehicle+, Policyholder!, Discount?)",
        )
    ]
    assert tree_errors(tree(vehicle(), {"type": "Nope"}))[0][2].startswith("elements[1].type: 'Nope' is not allowed")


def test_element_data_is_validated_with_the_elements_locator():
    assert tree_errors(tree(vehicle(data={"vin": 5}), data={"channel": "fax"})) == [
        ("Q1", "Auto", "data.channel: must be one of: web, phone"),
        ("V1", "Vehicle", "elements[0].data.vin: must be a string"),
    ]


def test_coverage_term_values_must_be_configured_option_keys():
    collision = {
        "type": "Collision",
        "locator": "C",
        "coverageTerms": {"Deductible": "*d500", "Limit": "l10k", "Extra": "e2", "Bogus": "x"},
    }
    assert tree_errors(tree(vehicle(elements=[collision]))) == [
        ("C", "Collision", "elements[0].elements[0].coverageTerms.Deductible: must be one of the options: d500, d1000"),
        ("C", "Collision", "elements[0].elements[0].coverageTerms.Extra: must be one of the options: e1"),
        ("C", "Collision", "elements[0].elements[0].coverageTerms.Bogus: is not a coverage term of Collision"),
    ]


def test_a_required_coverage_term_without_default_must_be_given():
    model = {
        **TREE_MODEL,
        "coverageTerms": {**TREE_MODEL["coverageTerms"], "Limit": {"type": "limit", "options": {"l10k": {"value": 1}}}},
    }
    _, errors = validate_element_tree(model, tree(vehicle()))
    assert [e["message"] for e in errors] == ["is required (the term has no default option)"]


def test_a_coverage_term_with_a_value_property_takes_values_of_that_type():
    assert tree_errors(tree(vehicle(), coverageTerms={"Term": 0})) == [
        ("Q1", "Auto", "coverageTerms.Term: must be at least 1")
    ]
    normalised, _ = validate_element_tree(TREE_MODEL, tree(vehicle(), coverageTerms={"Term": "3"}))
    assert normalised["coverageTerms"] == {"Term": 3}


def test_an_unknown_root_type_is_one_error():
    assert tree_errors({"type": "Boat"}) == [("", "Boat", "type: 'Boat' is not a configured product or element type")]


def test_option_keys_strip_the_default_mark():
    assert option_keys(TREE_MODEL["coverageTerms"]["Deductible"]) == (["d500", "d1000"], "d500")
    assert option_keys(TREE_MODEL["coverageTerms"]["Term"]) == ([], None)


# --- a real package -----------------------------------------------------------------------------


def test_the_iag_member_account_and_a_personal_auto_tree():
    outcome = validate(fixture_model("iag-motor-demo"))
    assert outcome.is_success, outcome.errors
    model = resolve(outcome.model)
    account = model["accounts"]["MemberAccount"]["data"]
    assert set(account) == {"tier", "firstName", "middleName", "lastName", "email"}
    good = {"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com", "tier": "Gold"}
    assert validate_data(model, account, good) == (good, [])
    assert errors_of(account, {"firstName": "Ada", "lastName": "L", "email": "nope", "tier": "Platinum"}, model) == [
        "data.tier: must be one of: Gold, Silver, Bronze",
        "data.lastName: must be at least 2 characters long",
        "data.email: must match the pattern ^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+.[a-zA-Z]{2,}$",
    ]
    product = datamodel.product_type(model, "PersonalAuto")
    assert product is not None and [q.name for q in product.contents] == ["PersonalVehicle"]
    _, errors = validate_element_tree(model, {"type": "PersonalAuto", "locator": "Q", "elements": []})
    assert ("Q", "PersonalAuto", "elements: needs at least 1 PersonalVehicle (PersonalVehicle+), has 0") in [
        (e["locator"], e["elementType"], f"{e['path']}: {e['message']}") for e in errors
    ]
