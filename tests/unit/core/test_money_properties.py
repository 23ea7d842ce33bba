"""Half-up rounding to the currency's minor unit, stated as properties, and the limits of an amount."""
from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.core.money import MAX_AMOUNT, minor_units, round_money

currencies = st.sampled_from(["USD", "EUR", "JPY", "KWD", "CLF", "xts"])
amounts = st.decimals(min_value=-10**12, max_value=10**12, allow_nan=False, allow_infinity=False, places=6)


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
@given(units=st.integers(min_value=-10**9, max_value=10**9), currency=currencies)
def test_a_tie_rounds_away_from_zero(units, currency):
    unit = Decimal(1).scaleb(-minor_units(currency))
    tie = (units + Decimal("0.5")) * unit

    assert round_money(tie, currency) == (units + (1 if units >= 0 else 0)) * unit


def test_amounts_just_below_the_limit_round_exactly():
    # 33 significant digits: more than Decimal's default context keeps
    assert str(round_money(Decimal("999999999999999999999999999999.994"), "USD")) == "999999999999999999999999999999.99"
    assert str(round_money(Decimal("-999999999999999999999999999999.994"), "USD")) == \
        "-999999999999999999999999999999.99"
    assert str(round_money(Decimal("123456789012345678901234567890.1234"), "CLF")) == \
        "123456789012345678901234567890.1234"


@pytest.mark.parametrize("amount, reason", [
    (MAX_AMOUNT, "1.000000E+30 is too large an amount of money (the limit is 1E+30)"),
    (-MAX_AMOUNT, "-1.000000E+30 is too large an amount of money (the limit is 1E+30)"),
    (Decimal("1e40"), "1.000000E+40 is too large an amount of money (the limit is 1E+30)"),
    (Decimal("NaN"), "NaN is not an amount of money"),
    (Decimal("-Infinity"), "-Infinity is not an amount of money"),
])
def test_what_is_no_amount_of_money_is_refused_with_the_reason(amount, reason):
    with pytest.raises(ValueError) as refused:
        round_money(amount, "USD")

    assert str(refused.value) == reason
