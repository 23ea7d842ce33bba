"""Currency minor units, half-up rounding and allocation over weights (DECISIONS.md, "Identifiers, time, money")."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.core.money import allocate, minor_units, round_money


@pytest.mark.parametrize(
    "currency, digits", [("USD", 2), ("EUR", 2), ("AUD", 2), ("JPY", 0), ("KWD", 3), ("jpy", 0), ("CLF", 4), ("XYZ", 2)]
)
def test_minor_units_follow_iso_4217_with_two_by_default(currency, digits):
    assert minor_units(currency) == digits


@pytest.mark.parametrize(
    "amount, currency, rounded",
    [
        ("10.005", "USD", "10.01"),
        ("10.004999", "USD", "10.00"),
        ("-10.005", "USD", "-10.01"),
        ("2.5", "JPY", "3"),
        ("1.0005", "KWD", "1.001"),
        ("7", "USD", "7.00"),
        ("0.004", "USD", "0.00"),
    ],
)
def test_round_money_rounds_half_up_to_the_minor_unit(amount, currency, rounded):
    result = round_money(Decimal(amount), currency)

    assert str(result) == rounded


def test_round_money_refuses_what_is_not_an_amount():
    with pytest.raises(ValueError):
        round_money(Decimal("NaN"), "USD")


def _allocated(amount, weights, currency="USD"):
    return [str(part) for part in allocate(Decimal(amount), [Decimal(w) for w in weights], currency)]


@pytest.mark.parametrize(
    "amount, weights, currency, parts",
    [
        ("100.00", ["1", "1", "1"], "USD", ["33.33", "33.33", "33.34"]),
        ("100.00", ["3", "2", "1", "1"], "USD", ["42.86", "28.57", "14.29", "14.28"]),
        ("0.05", ["1", "1"], "USD", ["0.03", "0.02"]),  # 0.025 each: the tie goes up, the last takes what is left
        ("100", ["1", "1", "1"], "JPY", ["33", "33", "34"]),
        ("1.000", ["1", "1", "1"], "KWD", ["0.333", "0.333", "0.334"]),
        ("12.34", ["5"], "USD", ["12.34"]),
        ("10", ["1", "1"], "USD", ["5.00", "5.00"]),  # parts carry the minor unit even when the amount does not
        ("0.00", ["1", "2"], "USD", ["0.00", "0.00"]),
        ("0.01", ["1", "1", "1"], "USD", ["0.00", "0.00", "0.01"]),
        ("1.00", ["0.5", "0.25", "0.25"], "USD", ["0.50", "0.25", "0.25"]),
    ],
)
def test_allocate_rounds_each_share_half_up_and_puts_the_remainder_on_the_last(amount, weights, currency, parts):
    assert _allocated(amount, weights, currency) == parts


def test_allocate_puts_the_remainder_on_the_last_part_with_a_positive_weight():
    assert _allocated("100.00", ["1", "1", "1", "0", "0"]) == ["33.33", "33.33", "33.34", "0.00", "0.00"]
    assert _allocated("100.00", ["0", "1", "0"]) == ["0.00", "100.00", "0.00"]


def test_allocate_spreads_a_refund_as_the_mirror_of_the_charge():
    assert _allocated("-100.00", ["1", "1", "1"]) == ["-33.33", "-33.33", "-33.34"]
    assert _allocated("-0.05", ["1", "1"]) == ["-0.03", "-0.02"]


def test_allocate_takes_int_weights():
    assert allocate(Decimal("10.00"), [1, 3], "USD") == [Decimal("2.50"), Decimal("7.50")]


def test_allocate_is_exact_for_amounts_just_below_the_limit():
    # 32 significant digits: more than Decimal's default context keeps
    parts = allocate(Decimal("999999999999999999999999999999.98"), [Decimal(1)] * 3, "USD")

    assert [str(part) for part in parts] == ["333333333333333333333333333333.33"] * 2 + [
        "333333333333333333333333333333.32"
    ]


@pytest.mark.parametrize(
    "amount, weights, reason",
    [
        ("10.00", [], "there is nothing to allocate to"),
        ("10.00", ["0", "0"], "at least one weight must be positive"),
        ("10.00", ["1", "-1"], "-1 is not a weight: weights are finite and not negative"),
        ("10.00", ["1", "NaN"], "NaN is not a weight: weights are finite and not negative"),
        ("10.00", ["Infinity"], "Infinity is not a weight: weights are finite and not negative"),
        ("10.005", ["1"], "10.005 is not a whole number of USD minor units (10^-2)"),
        ("NaN", ["1"], "NaN is not an amount of money"),
    ],
)
def test_allocate_refuses_what_it_cannot_spread(amount, weights, reason):
    with pytest.raises(ValueError) as refused:
        allocate(Decimal(amount), [Decimal(w) for w in weights], "USD")

    assert str(refused.value) == reason


@pytest.mark.parametrize("weight, kind", [(1.5, "float"), (True, "bool"), ("1", "str")])
def test_allocate_refuses_a_weight_that_is_no_decimal(weight, kind):
    with pytest.raises(ValueError) as refused:
        allocate(Decimal("1.00"), [weight], "USD")

    assert str(refused.value) == f"a weight is a Decimal or an int, not {kind}"
