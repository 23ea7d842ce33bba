"""Charges from rating answers: the stored PolicyChargeResponse fields, and what a plugin may add."""

from __future__ import annotations

from decimal import Decimal
from itertools import count
from typing import get_args

import pytest

from chalicelib.configuration.schema import SCHEMAS
from chalicelib.plugins.models import Charge as Rated
from chalicelib.plugins.models import PluginFailure
from chalicelib.priceable import rating
from chalicelib.priceable.evaluation import _extras
from chalicelib.priceable.models import Charge

CHARGE_TYPES = {
    "premium": {"category": "premium", "handling": "normal", "invoicing": "scheduled"},
    "fee": {"category": "Fee", "handling": "flat", "invoicing": "next"},
}


def locators():
    numbers = count(1)
    return lambda: f"C{next(numbers)}"


def test_rated_charges_keep_their_rate_and_take_the_configured_category_handling_and_invoicing():
    rated = [
        Rated("E1", "S1", "premium", "premium", Decimal("600.00"), Decimal(100)),
        Rated("E2", None, "fee", "Fee", Decimal("30.00"), None),
    ]
    answer = {
        "items": [
            {"elementLocator": "E1", "chargeType": "premium", "rate": 100, "referenceRate": 90, "tag": "base"},
            {"elementLocator": "E2", "chargeType": "fee", "amount": 30},
        ]
    }

    charges = rating.charges(rated, _extras(answer, "rate"), CHARGE_TYPES, Decimal(6), locators())

    assert [
        (
            c.locator,
            c.elementLocator,
            c.elementStaticLocator,
            c.chargeCategory,
            c.rate,
            c.amount,
            c.referenceRate,
            c.tag,
            c.handling,
            c.invoicing,
        )
        for c in charges
    ] == [
        ("C1", "E1", "S1", "premium", 100, Decimal("600.00"), 90, "base", "normal", "scheduled"),
        ("C2", "E2", "E2", "fee", 5, Decimal("30.00"), 5, None, "flat", "next"),
    ]


def test_an_amount_over_no_duration_is_its_own_rate():
    rated = [Rated("E1", "S1", "fee", "fee", Decimal("30.00"), None)]
    [charge] = rating.charges(rated, {}, CHARGE_TYPES, Decimal(0), locators())
    assert charge.rate == charge.referenceRate == Decimal("30.00")


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"referenceRate": "90"}, "items[0]: referenceRate must be a number, not '90'"),
        ({"referenceRate": True}, "items[0]: referenceRate must be a number, not True"),
        ({"tag": 7}, "items[0]: tag must be a string of at most 200 characters, not 7"),
        ({"tag": "x" * 201}, f"items[0]: tag must be a string of at most 200 characters, not {'x' * 201!r}"[:200]),
    ],
)
def test_a_reference_rate_or_tag_of_the_wrong_type_is_a_plugin_failure(extra, message):
    answer = {"items": [{"elementLocator": "E1", "chargeType": "premium", "rate": 1, **extra}]}
    with pytest.raises(PluginFailure) as raised:
        _extras(answer, "rate_Auto")
    assert (raised.value.reason, raised.value.detail) == ("malformed", message)


@pytest.mark.parametrize(
    "configured, category",
    [("premium", "premium"), ("Premium", "premium"), ("invoicefee", "invoiceFee"), (None, "none"), ("bonus", "none")],
)
def test_categories_take_the_enums_casing(configured, category):
    assert rating.category(configured) == category


def test_a_rated_charge_keeps_the_plugins_rate_not_the_rounded_amount_over_the_duration():
    # 3 months at 33.3333: the amount is rounded to the cent, the stored rate stays the plugin's
    rated = [Rated("E1", "S1", "premium", "premium", Decimal("100.00"), Decimal("33.3333"))]
    [charge] = rating.charges(rated, {}, CHARGE_TYPES, Decimal(3), locators())
    assert (charge.rate, charge.amount, charge.referenceRate) == (
        Decimal("33.3333"),
        Decimal("100.00"),
        Decimal("33.3333"),
    )


@pytest.mark.parametrize(
    "charge_types",
    [{"surcharge": {"category": "surcharge"}}, {}],
    ids=["configured without handling or invoicing", "not configured"],
)
def test_handling_and_invoicing_default_to_normal_and_scheduled(charge_types):
    rated = [Rated("E1", "S1", "surcharge", "surcharge", Decimal("12.00"), Decimal(2))]
    [charge] = rating.charges(rated, {}, charge_types, Decimal(6), locators())
    assert (charge.handling, charge.invoicing) == ("normal", "scheduled")


def test_a_charge_answers_exactly_the_categories_handling_and_invoicing_a_configuration_may_give():
    charge_ref = SCHEMAS["ChargeRef"].fields
    assert {
        field: set(get_args(Charge.model_fields[field].annotation))
        for field in ("chargeCategory", "handling", "invoicing")
    } == {
        "chargeCategory": set(charge_ref["category"].values),
        "handling": set(charge_ref["handling"].values),
        "invoicing": set(charge_ref["invoicing"].values),
    }
