"""Money: `Decimal` amounts in a currency, rounded half-up to the currency's minor unit (ISO 4217)."""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

DEFAULT_MINOR_UNITS = 2
"""Most ISO 4217 currencies have cents; the exceptions are listed below."""

MINOR_UNITS: dict[str, int] = {
    **dict.fromkeys(("BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI",
                     "VND", "VUV", "XAF", "XOF", "XPF"), 0),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
    **dict.fromkeys(("CLF", "UYW"), 4),
}


def minor_units(currency: str) -> int:
    """Digits after the decimal point of `currency` (2 for USD/EUR/AUD, 0 for JPY, 3 for KWD)."""
    return MINOR_UNITS.get(currency.upper(), DEFAULT_MINOR_UNITS)


def round_money(amount: Decimal, currency: str) -> Decimal:
    """`amount` rounded half-up (away from zero on a tie) to the minor unit of `currency`."""
    if not amount.is_finite():
        raise ValueError(f"{amount} is not an amount of money")
    return amount.quantize(Decimal(1).scaleb(-minor_units(currency)), rounding=ROUND_HALF_UP)
