"""Half-up rounding to the currency's minor unit and allocation over weights, stated as properties, and the limits
of an amount."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.core.money import MAX_AMOUNT, allocate, minor_units, round_money

currencies = st.sampled_from(["USD", "EUR", "JPY", "KWD", "CLF", "xts"])
amounts = st.decimals(min_value=-(10**12), max_value=10**12, allow_nan=False, allow_infinity=False, places=6)


@settings(max_examples=200, deadline=None)
@given(amount=amounts, currency=currencies)
def test_a_rounded_amount_has_the_minor_unit_and_is_the_nearest_one(amount, currency):
    unit = Decimal(1).scaleb(-minor_units(currency))
    rounded = round_money(amount, currency)

    assert rounded.as_tuple().exponent == -minor_units(currency)
    assert abs(rounded - amount) <= unit / 2
    assert round_money(rounded, currency) == rounded
    assert round_money(-amount, currency) == -rounded  # symmetric: a tie goes away from zero either way


@settings(max_examples=100, deadline=None)
@given(units=st.integers(min_value=-(10**9), max_value=10**9), currency=currencies)
def test_a_tie_rounds_away_from_zero(units, currency):
    unit = Decimal(1).scaleb(-minor_units(currency))
    tie = (units + Decimal("0.5")) * unit

    assert round_money(tie, currency) == (units + (1 if units >= 0 else 0)) * unit


def test_amounts_just_below_the_limit_round_exactly():
    # 33 significant digits: more than Decimal's default context keeps
    assert str(round_money(Decimal("999999999999999999999999999999.994"), "USD")) == "999999999999999999999999999999.99"
    assert (
        str(round_money(Decimal("-999999999999999999999999999999.994"), "USD")) == "-999999999999999999999999999999.99"
    )
    assert (
        str(round_money(Decimal("123456789012345678901234567890.1234"), "CLF")) == "123456789012345678901234567890.1234"
    )


@pytest.mark.parametrize(
    "amount, reason",
    [
        (MAX_AMOUNT, "1.000000E+30 is too large an amount of money (the limit is 1E+30)"),
        (-MAX_AMOUNT, "-1.000000E+30 is too large an amount of money (the limit is 1E+30)"),
        (Decimal("1e40"), "1.000000E+40 is too large an amount of money (the limit is 1E+30)"),
        (Decimal("NaN"), "NaN is not an amount of money"),
        (Decimal("-Infinity"), "-Infinity is not an amount of money"),
    ],
)
def test_what_is_no_amount_of_money_is_refused_with_the_reason(amount, reason):
    with pytest.raises(ValueError) as refused:
        round_money(amount, "USD")

    assert str(refused.value) == reason


weights_lists = st.lists(
    st.decimals(min_value=0, max_value=1000, places=3, allow_nan=False, allow_infinity=False), min_size=1, max_size=24
).filter(lambda weights: any(weights))
allocated_amounts = st.integers(min_value=-(10**15), max_value=10**15)
"""In minor units: allocate takes whole numbers of them."""


def _amount(units: int, currency: str) -> Decimal:
    return Decimal(units).scaleb(-minor_units(currency))


@settings(max_examples=300, deadline=None)
@given(units=allocated_amounts, weights=weights_lists, currency=currencies)
def test_allocated_parts_add_up_to_the_amount_each_in_the_minor_unit_and_close_to_its_share(units, weights, currency):
    amount, unit = _amount(units, currency), Decimal(1).scaleb(-minor_units(currency))
    parts = allocate(amount, weights, currency)

    assert len(parts) == len(weights)
    assert sum(Fraction(part) for part in parts) == Fraction(amount)
    assert all(part.as_tuple().exponent == -minor_units(currency) for part in parts)
    last = max(index for index, weight in enumerate(weights) if weight > 0)
    total = sum(Fraction(weight) for weight in weights)
    for index, (part, weight) in enumerate(zip(parts, weights)):
        exact = Fraction(amount) * Fraction(weight) / total
        if weight == 0:
            assert part == 0
        elif index != last:
            assert abs(Fraction(part) - exact) <= Fraction(unit) / 2
    # the last takes what the rounding of the others left: at most half a unit each
    others = sum(1 for index, weight in enumerate(weights) if weight > 0 and index != last)
    exact_last = Fraction(amount) * Fraction(weights[last]) / total
    assert abs(Fraction(parts[last]) - exact_last) <= Fraction(unit) * others / 2


@settings(max_examples=200, deadline=None)
@given(units=allocated_amounts, weights=weights_lists, currency=currencies)
def test_a_refund_is_allocated_as_the_mirror_of_the_charge(units, weights, currency):
    amount = _amount(units, currency)

    assert allocate(-amount, weights, currency) == [-part for part in allocate(amount, weights, currency)]


@settings(max_examples=200, deadline=None)
@given(
    units=allocated_amounts,
    weights=weights_lists,
    factor=st.integers(min_value=1, max_value=10**6),
    currency=currencies,
)
def test_only_the_proportions_of_the_weights_matter(units, weights, factor, currency):
    amount = _amount(units, currency)

    assert allocate(amount, [weight * factor for weight in weights], currency) == allocate(amount, weights, currency)


@settings(max_examples=100, deadline=None)
@given(units=allocated_amounts, currency=currencies, count=st.integers(min_value=1, max_value=30))
def test_an_amount_of_whole_units_spread_evenly_differs_by_the_remainder_on_the_last_only(units, currency, count):
    amount, unit = _amount(units, currency), Decimal(1).scaleb(-minor_units(currency))
    parts = allocate(amount, [Decimal(1)] * count, currency)

    assert len(set(parts[:-1])) <= 1
    assert abs(parts[-1] - parts[0]) <= unit * count / 2
