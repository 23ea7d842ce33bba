"""Money: `Decimal` amounts in a currency, rounded half-up to the currency's minor unit (ISO 4217)."""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Context, Decimal

DEFAULT_MINOR_UNITS = 2
"""Most ISO 4217 currencies have cents; the exceptions are listed below."""

MINOR_UNITS: dict[str, int] = {
    **dict.fromkeys(("BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI",
                     "VND", "VUV", "XAF", "XOF", "XPF"), 0),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
    **dict.fromkeys(("CLF", "UYW"), 4),
}

MAX_AMOUNT = Decimal(10) ** 30
"""Amounts are below this in absolute value: 30 digits before the point and at most 4 after it leave a
sum of ten thousand amounts within the 38 digits a stored number may have."""

_ROUNDING = Context(prec=40, rounding=ROUND_HALF_UP)
"""Wide enough to round any amount below MAX_AMOUNT exactly (the default context keeps 28 digits)."""


def minor_units(currency: str) -> int:
    """Digits after the decimal point of `currency` (2 for USD/EUR/AUD, 0 for JPY, 3 for KWD)."""
    return MINOR_UNITS.get(currency.upper(), DEFAULT_MINOR_UNITS)


def round_money(amount: Decimal, currency: str) -> Decimal:
    """`amount` rounded half-up (away from zero on a tie) to the minor unit of `currency`.
    ValueError for what is no amount of money: not finite, or not below MAX_AMOUNT."""
    if not amount.is_finite():
        raise ValueError(f"{amount} is not an amount of money")
    if amount.copy_abs() >= MAX_AMOUNT:  # abs() would round to 28 digits first
        raise ValueError(f"{amount:.6E} is too large an amount of money (the limit is {MAX_AMOUNT:.0E})")
    return amount.quantize(Decimal(1).scaleb(-minor_units(currency)), context=_ROUNDING)
