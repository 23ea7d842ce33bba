"""Money: `Decimal` amounts in a currency, rounded half-up to the currency's minor unit (ISO 4217)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Context, Decimal
from fractions import Fraction

DEFAULT_MINOR_UNITS = 2
"""Most ISO 4217 currencies have cents; the exceptions are listed below."""

MINOR_UNITS: dict[str, int] = {
    **dict.fromkeys(
        (
            "BIF",
            "CLP",
            "DJF",
            "GNF",
            "ISK",
            "JPY",
            "KMF",
            "KRW",
            "PYG",
            "RWF",
            "UGX",
            "UYI",
            "VND",
            "VUV",
            "XAF",
            "XOF",
            "XPF",
        ),
        0,
    ),
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


def allocate(amount: Decimal, weights: Sequence[Decimal | int], currency: str) -> list[Decimal]:
    """`amount` spread over `weights`, one part per weight, in proportion to it (DECISIONS.md "Identifiers,
    time, money": splitting an amount over installments).

    Every part is its exact share rounded half-up (away from zero on a tie) to the minor unit of
    `currency`, except the last part whose weight is positive: it takes what is left, so the parts always
    add up to `amount` exactly and a zero weight always gets exactly zero. A negative amount (a refund) is
    spread as its opposite would be, negated part by part: `allocate(-x) == [-p for p in allocate(x)]`.

    ValueError when `amount` is no amount of money (see `round_money`) or not a whole number of minor
    units of `currency`, when `weights` is empty, holds a negative or non-finite weight, or only zeros."""
    digits = minor_units(currency)
    if round_money(amount, currency) != amount:
        raise ValueError(f"{amount} is not a whole number of {currency} minor units (10^-{digits})")
    shares = [_weight(weight) for weight in weights]
    total = sum(shares)
    if total == 0:
        raise ValueError("at least one weight must be positive" if shares else "there is nothing to allocate to")
    units = Fraction(amount) * 10**digits  # a whole number, checked above
    parts = [_round_half_up(units * share / total) for share in shares]
    last = max(index for index, share in enumerate(shares) if share > 0)
    parts[last] = int(units) - sum(part for index, part in enumerate(parts) if index != last)
    return [Decimal(part).scaleb(-digits, context=_ROUNDING) for part in parts]


def _weight(weight: Decimal | int) -> Fraction:
    if isinstance(weight, bool) or not isinstance(weight, Decimal | int):
        raise ValueError(f"a weight is a Decimal or an int, not {type(weight).__name__}")
    if (isinstance(weight, Decimal) and not weight.is_finite()) or weight < 0:
        raise ValueError(f"{weight} is not a weight: weights are finite and not negative")
    return Fraction(weight)


def _round_half_up(value: Fraction) -> int:
    """The integer nearest to `value`, a tie away from zero."""
    nearest = (abs(value) * 2 + 1) // 2
    return int(nearest) if value >= 0 else -int(nearest)
