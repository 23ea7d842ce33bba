"""The plugin contract of DECISIONS.md, "Plugins": the request, and what rate, underwrite and validate
answers become (charges, flags, the underwriting outcome, validation items)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.plugins.contract import (
    apply_rating,
    element_index,
    function_names,
    underwriting_flags,
    underwriting_outcome,
    validation_errors,
)
from chalicelib.plugins.models import Charge, PluginFailure, PluginFlag, UnderwritingOutcome, ValidationItem
from tests.unit.plugins.support import request

CHARGES = {"premium": {"category": "premium"}, "tax": {"category": "tax"}, "fee": {"category": "fee"}}


def test_build_request_has_the_documented_shape_with_empty_collections_filled_in():
    built = request()

    assert built == {
        "tenantLocator": "tenant-1",
        "productName": "Auto",
        "kind": "quote",
        "locator": "Q1",
        "transactionCategory": None,
        "startTime": "2026-01-01T00:00:00.000Z",
        "endTime": "2027-01-01T00:00:00.000Z",
        "currency": "USD",
        "timezone": "America/New_York",
        "durationBasis": "years",
        "account": {"locator": "A1", "type": "Person", "data": {"name": "Ann"}},
        "static": {"channel": "web"},
        "segment": {
            "startTime": "2026-01-01T00:00:00.000Z",
            "endTime": "2026-07-02T12:00:00.000Z",
            "duration": Decimal("0.5"),
            "element": {
                "locator": "P1",
                "staticLocator": "SP1",
                "type": "AutoQuote",
                "data": {"x": 1},
                "coverageTerms": {},
                "elements": [
                    {
                        "locator": "V1",
                        "staticLocator": "SV1",
                        "type": "Vehicle",
                        "data": {},
                        "coverageTerms": {},
                        "elements": [
                            {
                                "locator": "C1",
                                "staticLocator": None,
                                "type": "Collision",
                                "data": {},
                                "coverageTerms": {"Deductible": "d500"},
                                "elements": [],
                            }
                        ],
                    }
                ],
            },
        },
    }
    assert set(element_index(built)) == {"P1", "V1", "C1"}


def test_function_names_prefer_the_products_own_function():
    assert function_names("rate", "Auto") == ("rate_Auto", "rate")


# --- rating --------------------------------------------------------------------------------------


def test_a_rate_is_multiplied_by_the_duration_and_an_amount_taken_as_is_rounded_half_up():
    result = {
        "items": [
            {"elementLocator": "V1", "chargeType": "premium", "rate": Decimal("100.01")},
            {"elementLocator": "V1", "chargeType": "fee", "amount": 25},
            {"elementLocator": "C1", "chargeType": "premium", "amount": Decimal("10.005")},
        ]
    }

    charges = apply_rating(result, request(duration="0.5"), CHARGES)

    assert charges == [
        Charge("V1", "SV1", "premium", "premium", Decimal("50.01"), Decimal("100.01")),
        Charge("V1", "SV1", "fee", "fee", Decimal("25.00"), None),
        Charge("C1", None, "premium", "premium", Decimal("10.01"), None),
    ]


def test_rating_rounds_to_the_currencys_minor_unit():
    result = {"items": [{"elementLocator": "V1", "chargeType": "premium", "rate": Decimal("1001")}]}

    (charge,) = apply_rating(result, request(currency="JPY", duration="0.5"), CHARGES)

    assert charge.amount == Decimal("501")


def test_zero_charges_are_dropped_and_negative_ones_kept():
    result = {
        "items": [
            {"elementLocator": "V1", "chargeType": "premium", "rate": 0},
            {"elementLocator": "V1", "chargeType": "tax", "amount": Decimal("0.004")},
            {"elementLocator": "V1", "chargeType": "fee", "amount": Decimal("-5")},
        ]
    }

    charges = apply_rating(result, request(), CHARGES)

    assert [(charge.charge_type, charge.amount) for charge in charges] == [("fee", Decimal("-5.00"))]


@pytest.mark.parametrize(
    "result, problem",
    [
        (
            {"items": [{"elementLocator": "V1", "chargeType": "surcharge", "rate": 1}]},
            "items[0]: chargeType 'surcharge' is not a configured charge",
        ),
        (
            {"items": [{"elementLocator": "V1", "chargeType": "premium", "rate": "12.5"}]},
            "items[0]: rate must be a number, not '12.5'",
        ),
        (
            {"items": [{"elementLocator": "V1", "chargeType": "premium", "rate": True}]},
            "items[0]: rate must be a number, not True",
        ),
        (
            {"items": [{"elementLocator": "V1", "chargeType": "premium", "amount": Decimal("NaN")}]},
            "items[0]: amount must be a number, not Decimal('NaN')",
        ),
        (
            {"items": [{"elementLocator": "V1", "chargeType": "premium", "rate": 1, "amount": 2}]},
            "items[0]: give either a rate or an amount",
        ),
        ({"items": [{"elementLocator": "V1", "chargeType": "premium"}]}, "items[0]: give either a rate or an amount"),
        (
            {"items": [{"elementLocator": "V9", "chargeType": "premium", "rate": 1}]},
            "items[0]: elementLocator 'V9' is not an element of the request",
        ),
        (
            {
                "items": [
                    {"elementLocator": "V1", "chargeType": "premium", "rate": 1},
                    {"elementLocator": "V1", "chargeType": "premium", "rate": 0},
                ]
            },
            "items[1]: a second 'premium' charge for element V1",
        ),
        ({"items": ["V1"]}, "items[0] must be an object, not 'V1'"),
        ({"charges": []}, "the answer must be {\"items\": [...]}, not {'charges': []}"),
    ],
)
def test_a_rating_answer_of_the_wrong_shape_is_a_plugin_failure_saying_what_is_wrong(result, problem):
    with pytest.raises(PluginFailure) as raised:
        apply_rating(result, request(), CHARGES, function="rate")

    assert raised.value.reason == "malformed"
    assert raised.value.message == f"The plugin function rate failed: {problem}"


# --- underwriting --------------------------------------------------------------------------------


def test_underwriting_flags_default_note_and_tag_and_name_known_elements():
    result = {
        "flags": [
            {"level": "block", "note": "too fast", "elementLocator": "V1"},
            {"level": "info", "tag": "checked", "note": None},
        ]
    }

    assert underwriting_flags(result, request()) == [
        PluginFlag("block", "too fast", "", "V1"),
        PluginFlag("info", "", "checked", None),
    ]


@pytest.mark.parametrize(
    "flag, problem",
    [
        ({"level": "deny"}, "flags[0]: level must be one of approve, block, decline, reject, info, not 'deny'"),
        ({"level": "block", "elementLocator": "X"}, "flags[0]: elementLocator 'X' is not an element of the request"),
        ({"level": "block", "note": 5}, "flags[0]: note must be a string, not 5"),
        ({"level": "block", "note": "x" * 2001}, "flags[0]: note has 2001 characters; at most 2000 are allowed"),
        ({"level": "block", "tag": "x" * 201}, "flags[0]: tag has 201 characters; at most 200 are allowed"),
        ({"level": "block", "elementLocator": []}, "flags[0]: elementLocator [] is not an element of the request"),
    ],
)
def test_an_underwriting_answer_of_the_wrong_shape_is_a_plugin_failure(flag, problem):
    with pytest.raises(PluginFailure) as raised:
        underwriting_flags({"flags": [flag]}, request())

    assert raised.value.detail == problem


@pytest.mark.parametrize(
    "levels, already_rejected, outcome",
    [
        ([], False, UnderwritingOutcome("passed", "info")),
        (["info"], False, UnderwritingOutcome("passed", "info")),
        (["block", "info"], False, UnderwritingOutcome("underwrittenBlocked", "block")),
        (["block", "decline"], False, UnderwritingOutcome("declined", "decline")),
        (["block", "decline", "reject"], False, UnderwritingOutcome("rejected", "reject")),
        (["reject", "approve"], False, UnderwritingOutcome("passed", "approve")),
        (["approve"], True, UnderwritingOutcome("passed", "info")),
        (["approve", "reject"], True, UnderwritingOutcome("rejected", "reject")),
        (["approve", "block"], True, UnderwritingOutcome("underwrittenBlocked", "block")),
    ],
)
def test_underwriting_outcome_follows_the_decisions_rule(levels, already_rejected, outcome):
    assert underwriting_outcome(levels, already_rejected=already_rejected) == outcome


# --- validation ----------------------------------------------------------------------------------


def test_validation_errors_are_grouped_per_element_with_the_request_as_the_default():
    result = {
        "errors": [
            {"locator": "V1", "message": "vin is not a real VIN"},
            {"message": "start date too far ahead"},
            {"locator": "V1", "elementType": "Vehicle", "message": "too old"},
            {"locator": "A1", "elementType": "Person", "message": "no name"},
        ]
    }

    assert validation_errors(result, request()) == [
        ValidationItem("V1", "Vehicle", ("vin is not a real VIN", "too old")),
        ValidationItem("Q1", "Auto", ("start date too far ahead",)),
        ValidationItem("A1", "Person", ("no name",)),
    ]


def test_no_validation_errors_is_an_empty_list():
    assert validation_errors({"errors": []}, request()) == []


@pytest.mark.parametrize(
    "result, problem",
    [
        ({"errors": [{"locator": "V1"}]}, "errors[0]: message must be a non-empty string, not None"),
        (
            {"errors": [{"message": "x", "locator": 5}]},
            "errors[0]: locator must be a string of at most 200 characters, not 5",
        ),
        (
            {"errors": [{"message": "x", "locator": []}]},
            "errors[0]: locator must be a string of at most 200 characters, not []",
        ),
        ({"errors": [{"message": "x" * 2001}]}, "errors[0]: message has 2001 characters; at most 2000 are allowed"),
        ({"errors": [{"message": "x"}] * 1001}, "the answer holds 1001 errors; at most 1000 are allowed"),
        ({"errors": "none"}, "the answer must be {\"errors\": [...]}, not {'errors': 'none'}"),
    ],
)
def test_a_validation_answer_of_the_wrong_shape_is_a_plugin_failure(result, problem):
    with pytest.raises(PluginFailure) as raised:
        validation_errors(result, request())

    assert (raised.value.function, raised.value.detail) == ("validate_Auto", problem)
