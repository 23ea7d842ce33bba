"""Currency minor units and half-up rounding (DECISIONS.md, "Identifiers, time, money")."""
from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.core.money import minor_units, round_money


@pytest.mark.parametrize("currency, digits", [("USD", 2), ("EUR", 2), ("AUD", 2), ("JPY", 0), ("KWD", 3),
                                              ("jpy", 0), ("CLF", 4), ("XYZ", 2)])
def test_minor_units_follow_iso_4217_with_two_by_default(currency, digits):
    assert minor_units(currency) == digits


@pytest.mark.parametrize("amount, currency, rounded", [
    ("10.005", "USD", "10.01"),
    ("10.004999", "USD", "10.00"),
    ("-10.005", "USD", "-10.01"),
    ("2.5", "JPY", "3"),
    ("1.0005", "KWD", "1.001"),
    ("7", "USD", "7.00"),
    ("0.004", "USD", "0.00"),
])
def test_round_money_rounds_half_up_to_the_minor_unit(amount, currency, rounded):
    result = round_money(Decimal(amount), currency)

    assert str(result) == rounded


def test_round_money_refuses_what_is_not_an_amount():
    with pytest.raises(ValueError):
        round_money(Decimal("NaN"), "USD")
