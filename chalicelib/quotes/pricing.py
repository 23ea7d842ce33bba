"""Charges from a rating plugin's answer (DECISIONS.md, "Plugins" and "Identifiers, time, money"). Pure.

plugins/contract.apply_rating checks the answer and computes each amount: a `rate` times the quote's
duration in its durationBasis (core/durations.py), rounded half-up to the currency's minor unit, or
the `amount` the plugin gave; zero charges are dropped. Here each charge becomes a stored
PolicyChargeResponse: a locator, the element's static locator, the configured category, handling and
invoicing, the rate (for an amount: the amount per duration unit, or the amount itself for a span of
no duration), and what the plugin may add per item: `referenceRate` (a number; default the rate) and
`tag` (a string).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from chalicelib.plugins.models import Charge as RatedCharge
from chalicelib.plugins.models import PluginFailure
from chalicelib.priceable.models import Charge

CATEGORIES = frozenset({"none", "premium", "tax", "fee", "credit", "invoiceFee", "cededPremium", "nonFinancial",
                        "surcharge"})


def charges(rated: list[RatedCharge], answer: Mapping[str, Any], charge_types: Mapping[str, Mapping[str, Any]],
            duration: Decimal, new_locator: Callable[[], str], *, function: str) -> list[Charge]:
    extras = _extras(answer, function)
    stored = []
    for charge in rated:
        configured = charge_types.get(charge.charge_type) or {}
        rate = charge.rate if charge.rate is not None else _rate_of(charge.amount, duration)
        reference, tag = extras.get((charge.element_locator, charge.charge_type), (None, None))
        stored.append(Charge(
            locator=new_locator(), elementLocator=charge.element_locator,
            elementStaticLocator=charge.element_static_locator or charge.element_locator,
            chargeType=charge.charge_type, chargeCategory=category(charge.charge_category), rate=rate,
            amount=charge.amount, referenceRate=reference if reference is not None else rate, tag=tag,
            handling=str(configured.get("handling") or "normal"),
            invoicing=str(configured.get("invoicing") or "scheduled")))
    return stored


def category(configured: str | None) -> str:
    """The response's chargeCategory: the configured one in the enum's casing ("Premium" -> premium)."""
    if not configured:
        return "none"
    return next((known for known in CATEGORIES if known.lower() == configured.lower()), "none")


def _rate_of(amount: Decimal, duration: Decimal) -> Decimal:
    return amount / duration if duration else amount


def _extras(answer: Mapping[str, Any], function: str) -> dict[tuple[str, str], tuple[Decimal | None, str | None]]:
    """(referenceRate, tag) by (elementLocator, chargeType) from the answer's items (already checked
    by apply_rating, apart from these two optional fields)."""
    found = {}
    for position, item in enumerate(answer.get("items") or []):
        reference, tag = item.get("referenceRate"), item.get("tag")
        if reference is not None and (isinstance(reference, bool) or not isinstance(reference, (int, Decimal))
                                      or not Decimal(reference).is_finite()):
            raise PluginFailure(function, "malformed", f"items[{position}]: referenceRate must be a number, "
                                                       f"not {reference!r}"[:200])
        if tag is not None and not isinstance(tag, str):
            raise PluginFailure(function, "malformed", f"items[{position}]: tag must be a string, not {tag!r}"[:200])
        found[(item["elementLocator"], item["chargeType"])] = (
            Decimal(reference) if reference is not None else None, tag)
    return found
