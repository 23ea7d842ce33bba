"""Reversal charges, negations and the cost of held coverage, with exact amounts (DECISIONS.md, "Policy
transactions and charges")."""

from __future__ import annotations

import itertools
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from chalicelib.priceable.models import Charge
from chalicelib.transactions.coverage import SegmentSpan
from chalicelib.transactions.deltas import (
    Proration,
    Rated,
    earned,
    held_cost,
    kept,
    negations,
    settle,
    totals,
)

UTC = timezone.utc
USD = Proration("months", "UTC", "USD")


def at(month: int, day: int = 1, year: int = 2026, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


def charge(
    locator: str, rate: str, amount: str, *, element: str = "E1", kind: str = "premium", handling: str = "normal"
) -> Charge:
    return Charge(
        locator=locator,
        elementLocator=f"{element}-v",
        elementStaticLocator=element,
        chargeType=kind,
        chargeCategory="premium",
        rate=Decimal(rate),
        amount=Decimal(amount),
        handling=handling,
    )


def amount_charge(locator: str, amount: str, months: int) -> Charge:
    """As priceable.rating stores a plugin's amount: the rate is the amount per month of the segment."""
    return charge(locator, str(Decimal(amount) / months), amount)


def locators():
    counter = itertools.count(1)
    return lambda: f"A{next(counter)}"


YEAR = (at(1), at(1, year=2027))


def rated(segment: str, span: tuple[datetime, datetime], *charges: Charge) -> list[Rated]:
    return [Rated(segment, span[0], span[1], each) for each in charges]


@pytest.mark.parametrize(
    "cut, expected",
    [
        (at(4), "300.00"),  # 3 whole months
        (at(4, 16), "350.00"),  # 3 + 15/30 months
        (at(2, 15), "150.00"),  # 1 + 14/28 months
        (at(1, 11, hour=12), "33.87"),  # 10.5/31 of a month: 33.870967... rounds down
        (at(1), "0.00"),
        (YEAR[1], "1200.00"),
    ],
)
def test_a_rate_charge_keeps_the_rate_times_the_held_duration_rounded(cut, expected):
    premium = Rated("S0", *YEAR, charge("C1", "100", "1200.00"))

    assert kept(premium, cut, USD) == Decimal(expected)


def test_rounding_is_half_up_to_the_minor_unit():
    # 33.33 x 1.5 months = 49.995
    premium = Rated("S0", *YEAR, charge("C1", "33.33", "399.96"))

    assert kept(premium, at(2, 15), USD) == Decimal("50.00")


def test_an_amount_charge_keeps_its_share_of_the_segments_duration():
    # 1000 over 12 months, held 3.5: 291.666... (the rate 83.33 would keep 291.655 -> 291.66)
    premium = Rated("S0", *YEAR, amount_charge("C1", "1000.00", 12))
    assert kept(premium, at(4, 16), USD) == Decimal("291.67")
    # a tie the stored rate (100.03 / 3 = 33.343333... rounded down at 28 digits) would round the other way:
    # 100.03 x 1.5 / 3 = 50.015 -> 50.02
    quarter = Rated("S0", at(1), at(4), amount_charge("C2", "100.03", 3))
    assert kept(quarter, at(2, 15), USD) == Decimal("50.02")


def test_months_are_counted_on_the_wall_clock_of_the_policys_zone_across_a_dst_switch():
    new_york = Proration("months", "America/New_York", "USD")
    # Jan 1 -> Mar 15 local: 2 months + 14/31 (Mar 1 -> Apr 1 has 31 wall-clock days, though the clocks go
    # forward on Mar 8): 310 x (2 + 14/31) = 760.00 exactly; elapsed hours (335 of 743) would give 759.77
    segment = Rated(
        "S0", datetime(2026, 1, 1, 5, tzinfo=UTC), datetime(2027, 1, 1, 5, tzinfo=UTC), charge("C1", "310", "3720.00")
    )
    cut = datetime(2026, 3, 15, 4, tzinfo=UTC)  # midnight EDT
    assert kept(segment, cut, new_york) == Decimal("760.00")
    # in days, midnight to midnight across the switch is whole: 73 days x 10
    days = Proration("days", "America/New_York", "USD")
    assert kept(Rated("S0", segment.start, segment.end, charge("C2", "10", "3650.00")), cut, days) == Decimal("730.00")


def test_jpy_has_no_minor_unit():
    # 1000 yen a month, held 10/31 of January: 322.58... -> 323
    premium = Rated("S0", *YEAR, charge("C1", "1000", "12000"))
    jpy = Proration("months", "UTC", "JPY")

    assert kept(premium, at(1, 11), jpy) == Decimal("323")
    [reversal] = settle(
        [premium],
        [],
        [SegmentSpan("S0", "X0", *YEAR, 0), SegmentSpan("S1", "X1", at(1, 11), YEAR[1], 0)],
        jpy,
        locators(),
    )
    assert reversal.amount == Decimal("-11677")


def test_a_change_reverses_what_the_replaced_coverage_would_have_earned_after_its_effective_time():
    issuance = SegmentSpan("S0", "X0", *YEAR, 0)
    change = SegmentSpan("S1", "X1", at(4, 16), YEAR[1], 0)
    old = rated(
        "S0",
        YEAR,
        charge("C1", "100", "1200.00"),
        charge("C2", "7.5", "90.00", kind="tax"),
        amount_charge("C3", "1000.00", 12),
        charge("C4", "0", "25.00", kind="fee", handling="flat"),
    )
    new = rated("S1", (change.start, change.end), charge("C5", "120", "1020.00"))

    reversals = settle([*old, *new], [], [issuance, change], USD, locators())

    assert [(r.reversalOfLocator, r.amount, r.rate, r.chargeType) for r in reversals] == [
        ("C1", Decimal("-850.00"), Decimal("-100"), "premium"),  # kept 350.00
        ("C2", Decimal("-63.75"), Decimal("-7.5"), "tax"),  # kept 26.25
        ("C3", Decimal("-708.33"), -old[2].charge.rate, "premium"),  # kept 291.67
    ]  # the flat fee is never reversed by a change
    first = reversals[0]
    assert (first.locator, first.elementStaticLocator, first.elementLocator, first.referenceRate) == (
        "A1",
        "E1",
        "E1-v",
        Decimal("-100"),
    )
    charges = [r.charge for r in [*old, *new]] + reversals
    assert (
        totals(charges)
        == held_cost([*old, *new], [issuance, change], USD)
        == {
            ("E1", "premium"): Decimal("350.00") + Decimal("1020.00") + Decimal("291.67"),
            ("E1", "tax"): Decimal("26.25"),
            ("E1", "fee"): Decimal("25.00"),
        }
    )


def test_settled_charges_are_settled_again_to_nothing():
    issuance = SegmentSpan("S0", "X0", *YEAR, 0)
    old = rated("S0", YEAR, charge("C1", "100", "1200.00"))
    spans = [issuance, SegmentSpan("S1", "X1", at(4), YEAR[1], 0)]
    reversals = settle(old, [], spans, USD, locators())

    assert settle(old, reversals, spans, USD, locators()) == []
    with pytest.raises(ValueError, match="charge C1 is rated, not an adjustment"):
        settle(old, [old[0].charge], spans, USD, locators())


def test_cancellation_reinstatement_and_reversal_charges():
    issuance = SegmentSpan("S0", "X0", *YEAR, 0)
    charges = rated("S0", YEAR, charge("C1", "100", "1200.00"), charge("C2", "0", "25.00", kind="fee", handling="flat"))
    cancel = SegmentSpan("S1", "X1", at(7), YEAR[1], 0, gap=True)
    new = locators()

    cancelled = settle(charges, [], [issuance, cancel], USD, new)
    assert [(c.reversalOfLocator, c.amount) for c in cancelled] == [("C1", Decimal("-600.00"))]

    # at the cancellation time: exactly the negation of the cancellation's reversals
    restore = SegmentSpan("S2", "X2", at(7), YEAR[1], 0, restores="X1")
    reinstated = settle(charges, cancelled, [issuance, cancel, restore], USD, new)
    assert _amounts(reinstated) == _amounts(negations(cancelled, new)) == [("C1", Decimal("600.00"))]
    assert reinstated[0].rate == Decimal("100")

    # reversing the reinstatement, then the cancellation: the negation of each one's charges, latest first
    undo_reinstatement = settle(charges, cancelled + reinstated, [issuance, cancel], USD, new)
    assert _amounts(undo_reinstatement) == _amounts(negations(reinstated, new)) == [("C1", Decimal("-600.00"))]
    undo_cancellation = settle(charges, cancelled + reinstated + undo_reinstatement, [issuance], USD, new)
    assert _amounts(undo_cancellation) == [("C1", Decimal("600.00"))]

    # reversing the issuance itself takes back every charge, flat ones included
    everything = cancelled + reinstated + undo_reinstatement + undo_cancellation
    gone = settle(charges, everything, [], USD, new)
    assert (
        _amounts(gone)
        == _amounts(negations([c.charge for c in charges], new))
        == [("C1", Decimal("-1200.00")), ("C2", Decimal("-25.00"))]
    )
    assert totals([c.charge for c in charges] + everything + gone) == {} == held_cost(charges, [], USD)


def test_a_reinstatement_after_the_cancellation_time_rates_a_new_segment_and_reverses_nothing():
    issuance = SegmentSpan("S0", "X0", *YEAR, 0)
    cancel = SegmentSpan("S1", "X1", at(7), YEAR[1], 0, gap=True)
    reinstate = SegmentSpan("S2", "X2", at(9), YEAR[1], 0)
    old = rated("S0", YEAR, charge("C1", "100", "1200.00"))
    new = rated("S2", (at(9), YEAR[1]), charge("C2", "100", "400.00"))
    cancelled = settle(old, [], [issuance, cancel], USD, locators())

    assert settle([*old, *new], cancelled, [issuance, cancel, reinstate], USD, locators()) == []
    assert held_cost([*old, *new], [issuance, cancel, reinstate], USD) == {("E1", "premium"): Decimal("1000.00")}


def test_earned_follows_the_held_prefix_and_the_transactions_place_in_the_stack():
    premium = Rated("S0", *YEAR, charge("C1", "100", "1200.00"))
    fee = Rated("S0", *YEAR, charge("C2", "0", "25.00", handling="flat"))

    assert earned(premium, at(4), True, USD) == Decimal("300.00")
    assert earned(premium, None, True, USD) == 0
    assert earned(premium, YEAR[1], False, USD) == 0
    assert earned(fee, None, True, USD) == Decimal("25.00")  # its segment replaced, the fee stays
    assert earned(fee, YEAR[1], False, USD) == 0  # its transaction reversed


def test_a_negation_of_an_adjustment_adjusts_the_same_rated_charge():
    reversal = charge("R1", "-100", "-850.00").model_copy(update={"reversalOfLocator": "C1", "referenceRate": None})

    [negated] = negations([reversal, charge("Z", "5", "0.00")], locators())

    assert (negated.amount, negated.rate, negated.reversalOfLocator) == (Decimal("850.00"), Decimal("100"), "C1")


def _amounts(charges: list[Charge]) -> list[tuple[str | None, Decimal]]:
    return [(c.reversalOfLocator, c.amount) for c in charges]
