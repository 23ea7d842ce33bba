"""The money side of policy transactions (DECISIONS.md, "Policy transactions and charges"). Pure.

Charges come in two kinds. A *rated* charge is what the plugin gave for one segment (`Rated`: the charge
with its segment's span); it has no `reversalOfLocator`. An *adjustment* is every other charge a
transaction carries: it has `reversalOfLocator` = the rated charge it adjusts (always a rated charge,
never another adjustment), and the same element, charge type, category, tag, handling and invoicing.

What a rated charge earns (`earned`), given how much of its segment the policy holds (coverage.held):
- the whole segment: its `amount`;
- a prefix [segment start, T): `kept`, rounded half-up to the currency's minor unit,
  `round(rate x duration(start, T))` for a rate charge, `round(amount x duration(start, T) /
  duration(segment))` for an amount charge. Durations are the policy's basis and time zone
  (core.durations; month fractions are not additive, so a prefix is never summed from smaller spans).
  An amount charge is recognised as priceable.rating stores one: its rate is amount / duration(segment)
  in Decimal's default 28-digit context (a rate charge whose rate happens to equal that quotient earns
  the same either way, as both formulas then agree);
- nothing held: 0;
- `handling: flat`: never prorated, so its `amount` for as long as its transaction is in the local stack,
  0 once that transaction is reversed (a reversal undoes it, and a reapplication rates it again).

`settle` brings every rated charge's net (its amount plus its adjustments) to what it earns now, one
adjustment per charge that changes. Issued in sequence this is exactly DECISIONS' rule: a change or a
cancellation effective at T adds `reversal = -(amount - kept)` for each charge of the coverage it cuts
(-amount for coverage starting at or after T); a reinstatement at the cancellation time adds exactly
the negation of the cancellation's reversals; reversing the latest transaction adds exactly the
negation of its charges (`negations`). Hence the invariant (`held_cost` == `totals` of every charge
issued), by element static locator and charge type, to the minor unit.

An adjustment's `rate` (and `referenceRate`) is the rated charge's, negated when the adjustment takes
money back; `rateDifference` is left unset.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Context, Decimal

from chalicelib.core import durations
from chalicelib.core.money import round_money
from chalicelib.priceable.models import Charge
from chalicelib.transactions.coverage import SegmentSpan, held

FLAT = "flat"
Key = tuple[str, str]
"""(elementStaticLocator, chargeType): what the invariant sums by."""

_RATING = Context(prec=28, rounding=ROUND_HALF_EVEN)
"""The context priceable.rating derives an amount charge's rate in (Decimal's default)."""
_EXACT = Context(prec=80, rounding=ROUND_HALF_EVEN)
"""Wide enough that a product of an amount and a duration is exact before it is rounded to money."""


@dataclass(frozen=True)
class Proration:
    """The policy's arithmetic: durationBasis, IANA time zone, ISO 4217 currency."""

    basis: str
    time_zone: str
    currency: str


@dataclass(frozen=True)
class Rated:
    """A rated charge and the span [start, end) of the segment it was rated for."""

    segment_locator: str
    start: datetime
    end: datetime
    charge: Charge


def kept(rated: Rated, cut: datetime, proration: Proration) -> Decimal:
    """What `rated` earns while its segment is held up to `cut` (whole from its end on)."""
    charge = rated.charge
    if charge.handling == FLAT or cut >= rated.end:
        return charge.amount
    if cut <= rated.start:
        return round_money(Decimal(0), proration.currency)
    part = durations.duration(rated.start, cut, proration.basis, proration.time_zone)
    whole = durations.duration(rated.start, rated.end, proration.basis, proration.time_zone)
    if not whole:  # a segment too short to count in the basis (within a repeated hour) earns nothing cut
        return round_money(Decimal(0), proration.currency)
    if charge.rate == _RATING.divide(charge.amount, whole):
        exact = _EXACT.divide(_EXACT.multiply(charge.amount, part), whole)
    else:
        exact = _EXACT.multiply(charge.rate, part)
    return round_money(exact, proration.currency)


def earned(rated: Rated, held_until: datetime | None, live: bool, proration: Proration) -> Decimal:
    """What `rated` earns: its segment held up to `held_until` (None: not held), `live` while the
    transaction that rated it is in the local stack."""
    if not live:
        return Decimal(0)
    if rated.charge.handling == FLAT:
        return rated.charge.amount
    if held_until is None:
        return Decimal(0)
    return kept(rated, held_until, proration)


def settle(
    rated: Sequence[Rated],
    adjustments: Iterable[Charge],
    spans: Sequence[SegmentSpan],
    proration: Proration,
    new_locator: Callable[[], str],
) -> list[Charge]:
    """The adjustments that make every rated charge's net equal what it earns under `spans` (the local
    stack after the transaction being issued, coverage.held's input). `rated`: every rated charge the
    policy's issued transactions carry, reversed ones included; `adjustments`: every adjustment issued so
    far. In the order of `rated`; none for a charge already at what it earns."""
    pieces = {piece.segment_locator: piece.end for piece in held(spans)}
    live = {span.locator for span in spans}
    net = _nets(adjustments)
    settled = []
    for each in rated:
        target = earned(each, pieces.get(each.segment_locator), each.segment_locator in live, proration)
        delta = target - each.charge.amount - net[each.charge.locator]
        if delta:
            settled.append(adjustment(each.charge, delta, new_locator()))
    return settled


def negations(charges: Iterable[Charge], new_locator: Callable[[], str]) -> list[Charge]:
    """Charges that cancel `charges` (a reversal transaction's, a reinstatement's at the cancellation
    time), each an adjustment of the same rated charge: of the charge itself when it is rated, of the
    charge it adjusts otherwise."""
    return [_negation(charge, new_locator()) for charge in charges if charge.amount]


def _negation(charge: Charge, locator: str) -> Charge:
    negated = adjustment(charge, -charge.amount, locator)
    if charge.reversalOfLocator is None:
        return negated
    return negated.model_copy(
        update={
            "reversalOfLocator": charge.reversalOfLocator,
            "rate": -charge.rate,
            "referenceRate": -(charge.referenceRate or charge.rate),
        }
    )


def adjustment(of: Charge, amount: Decimal, locator: str) -> Charge:
    """An adjustment of the rated charge `of` by `amount`."""
    sign = -1 if amount < 0 else 1
    reference = of.referenceRate if of.referenceRate is not None else of.rate
    return Charge(
        locator=locator,
        elementLocator=of.elementLocator,
        elementStaticLocator=of.elementStaticLocator,
        chargeType=of.chargeType,
        chargeCategory=of.chargeCategory,
        rate=sign * of.rate,
        amount=amount,
        referenceRate=sign * reference,
        tag=of.tag,
        handling=of.handling,
        invoicing=of.invoicing,
        reversalOfLocator=of.locator,
    )


def held_cost(rated: Sequence[Rated], spans: Sequence[SegmentSpan], proration: Proration) -> dict[Key, Decimal]:
    """The invariant's right-hand side: what the coverage `spans` hold costs, by element static locator
    and charge type (keys whose cost is 0 left out)."""
    pieces = {piece.segment_locator: piece.end for piece in held(spans)}
    live = {span.locator for span in spans}
    cost: dict[Key, Decimal] = defaultdict(Decimal)
    for each in rated:
        cost[_key(each.charge)] += earned(
            each, pieces.get(each.segment_locator), each.segment_locator in live, proration
        )
    return {key: amount for key, amount in cost.items() if amount}


def totals(charges: Iterable[Charge]) -> dict[Key, Decimal]:
    """The invariant's left-hand side: the sum of `charges` by element static locator and charge type
    (keys summing to 0 left out)."""
    total: dict[Key, Decimal] = defaultdict(Decimal)
    for charge in charges:
        total[_key(charge)] += charge.amount
    return {key: amount for key, amount in total.items() if amount}


def _nets(adjustments: Iterable[Charge]) -> dict[str, Decimal]:
    net: dict[str, Decimal] = defaultdict(Decimal)
    for charge in adjustments:
        if charge.reversalOfLocator is None:
            raise ValueError(f"charge {charge.locator} is rated, not an adjustment")
        net[charge.reversalOfLocator] += charge.amount
    return net


def _key(charge: Charge) -> Key:
    return charge.elementStaticLocator, charge.chargeType
