"""Charges from rated items (DECISIONS.md, "Plugins" and "Identifiers, time, money"). Pure.

plugins/contract.apply_rating checks a rating answer and computes each amount: a `rate` times the
segment's duration in its durationBasis (core/durations.py), rounded half-up to the currency's minor
unit, or the `amount` the plugin gave; zero charges are dropped. Here each becomes a stored Charge: a
locator, the element's static locator, the configured category, handling and invoicing, the rate
(for an amount: the amount per duration unit, or the amount itself for a span of no duration), and
what the plugin may add per item (`Extras`): `referenceRate` (default: the rate) and `tag`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any, Protocol, get_args

from chalicelib.priceable.models import Charge, ChargeCategory

CATEGORIES: tuple[ChargeCategory, ...] = get_args(ChargeCategory)
Extras = Mapping[tuple[str, str], tuple[Decimal | None, str | None]]
"""(referenceRate, tag) by (elementLocator, chargeType)."""


class Rated(Protocol):
    """A rated item (plugins.models.Charge), read-only."""

    @property
    def element_locator(self) -> str: ...

    @property
    def element_static_locator(self) -> str | None: ...

    @property
    def charge_type(self) -> str: ...

    @property
    def charge_category(self) -> str | None: ...

    @property
    def amount(self) -> Decimal: ...

    @property
    def rate(self) -> Decimal | None: ...


def charges(
    rated: Iterable[Rated],
    extras: Extras,
    charge_types: Mapping[str, Mapping[str, Any]],
    duration: Decimal,
    new_locator: Callable[[], str],
) -> list[Charge]:
    stored = []
    for charge in rated:
        configured = charge_types.get(charge.charge_type) or {}
        rate = charge.rate if charge.rate is not None else _rate_of(charge.amount, duration)
        reference, tag = extras.get((charge.element_locator, charge.charge_type), (None, None))
        stored.append(
            Charge(
                locator=new_locator(),
                elementLocator=charge.element_locator,
                elementStaticLocator=charge.element_static_locator or charge.element_locator,
                chargeType=charge.charge_type,
                chargeCategory=category(charge.charge_category),
                rate=rate,
                amount=charge.amount,
                referenceRate=reference,
                tag=tag,
                handling=str(configured.get("handling") or "normal"),
                invoicing=str(configured.get("invoicing") or "scheduled"),
            )
        )
    return stored


def category(configured: str | None) -> ChargeCategory:
    """The response's chargeCategory: the configured one in the enum's casing ("Premium" -> premium)."""
    if not configured:
        return "none"
    return next((known for known in CATEGORIES if known.lower() == configured.lower()), "none")


def _rate_of(amount: Decimal, duration: Decimal) -> Decimal:
    return amount / duration if duration else amount
