"""Out of sequence, reversals, branches and rebasing: plans, and plans carried out with exact amounts."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from chalicelib.core.errors import InvalidRequest, InvalidState
from chalicelib.priceable.models import Charge
from chalicelib.transactions.coverage import Category, Effect, TermSpan
from chalicelib.transactions.deltas import Proration, held_cost, totals
from chalicelib.transactions.sequence import (
    Affected,
    Entry,
    Ledger,
    Made,
    Pending,
    Plan,
    affected,
    execute,
    invalidated,
    plan,
    rebase,
    reversal_plan,
)

UTC = timezone.utc
USD = Proration("months", "UTC", "USD")


def at(month: int, day: int = 1, year: int = 2026) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def created(second: int) -> datetime:
    return at(1) + timedelta(seconds=second)


START, END = at(1), at(1, year=2027)
ISSUANCE = Entry("X0", "X0", "issuance", START, created(0))


def entry(name: str, category: Category, effective: datetime, second: int, **options) -> Entry:
    return Entry(name, name, category, effective, created(second), **options)


def names(entries) -> list[str]:
    return [e.locator for e in entries]


def test_a_transaction_effective_after_everything_issued_is_in_sequence():
    change = entry("X1", "change", at(7), 1)

    assert plan([ISSUANCE], change) == Plan()
    assert plan([ISSUANCE], change).in_sequence
    assert plan([ISSUANCE, change], entry("X2", "change", at(7), 2)).in_sequence  # same time, created later


def test_one_effective_before_issued_ones_reverses_them_latest_first_and_reapplies_them_in_order():
    stack = [ISSUANCE, entry("X1", "change", at(5), 1), entry("X2", "cancellation", at(9), 2)]

    planned = plan(stack, entry("X3", "change", at(3), 3))

    assert not planned.in_sequence
    assert (names(planned.reversed), names(planned.reapplied)) == (["X2", "X1"], ["X1", "X2"])


def test_at_equal_effective_times_the_earlier_created_goes_first():
    stack = [ISSUANCE, entry("X2", "change", at(5), 2)]

    assert names(plan(stack, entry("X1", "change", at(5), 1)).reversed) == ["X2"]
    assert plan(stack, entry("X3", "change", at(5), 3)).in_sequence


def test_a_reversal_reverses_its_targets_and_reapplies_what_came_after_them():
    stack = [
        ISSUANCE,
        entry("X1", "change", at(3), 1),
        entry("X2", "change", at(5), 2),
        entry("X3", "change", at(7), 3),
    ]

    latest = reversal_plan(stack, ["X3"])
    assert (names(latest.reversed), names(latest.reapplied)) == (["X3"], [])
    middle = reversal_plan(stack, {"X2"})
    assert (names(middle.reversed), names(middle.reapplied)) == (["X3", "X2"], ["X3"])
    assert names(reversal_plan(stack, ["X1", "X3"]).reapplied) == ["X2"]


@pytest.mark.parametrize(
    "targets, error, code",
    [
        ([], InvalidRequest, "transaction.nothing_to_reverse"),
        (["X9"], InvalidState, "transaction.not_reversible"),
        (["X0"], InvalidState, "transaction.issuance_not_reversible"),
    ],
)
def test_what_cannot_be_reversed_is_refused(targets, error, code):
    with pytest.raises(error) as refused:
        reversal_plan([ISSUANCE, entry("X1", "change", at(3), 1)], targets)

    assert refused.value.code == code


def test_issuing_a_head_invalidates_the_other_branches_but_not_its_own_descendants():
    pending = [
        Pending("A1", "X0"),
        Pending("A2", "A1"),
        Pending("A3", "A2"),  # a chain on the stack's head
        Pending("B1", "X0"),
        Pending("B2", "B1"),  # a parallel branch
        Pending("C1", "X9"),
    ]  # on a transaction issued before

    assert invalidated(pending, "A1") == ["B1", "B2", "C1"]
    assert invalidated(pending, "B2") == ["A1", "A2", "A3", "B1", "C1"]
    assert invalidated([Pending("L1", "L2"), Pending("L2", "L1")], "L3") == ["L1", "L2"]  # a loop ends


def test_affected_lists_what_is_reversed_then_what_is_invalidated():
    stack = [ISSUANCE, entry("X1", "change", at(5), 1), entry("X2", "change", at(9), 2)]
    planned = plan(stack, entry("X3", "change", at(6), 3))

    assert affected(planned, ["B1"]) == [Affected("X2", "reversed"), Affected("B1", "invalidated")]


def test_a_stale_base_needs_auto_rebase():
    assert rebase("X2", "X2", auto_rebase=False) == "X2"
    assert rebase("X1", "X2", auto_rebase=True) == "X2"
    with pytest.raises(InvalidState) as refused:
        rebase("X1", "X2", auto_rebase=False)
    assert refused.value.code == "transaction.stale_base"


# --- carrying plans out ------------------------------------------------------------------------------


def locators():
    counter = itertools.count(1)
    return lambda: f"N{next(counter)}"


def premium(locator: str, rate: str, amount: str) -> Charge:
    return Charge(
        locator=locator,
        elementLocator="E-v",
        elementStaticLocator="E",
        chargeType="premium",
        chargeCategory="premium",
        rate=Decimal(rate),
        amount=Decimal(amount),
    )


RATES = {"X1": Decimal(200), "X2": Decimal(150)}
"""The monthly rate each change sets: the plugin of these tests."""


def make(entry: Entry, done: Effect, ledger: Ledger, reapplication_of: Entry | None) -> Made:
    """Rates a change's segment at its rate for its whole months; cancellations and restores rate none."""
    if entry.category != "change":
        return Made(f"S-{entry.locator}")
    rate = RATES[entry.static_locator]
    months = (done.end.year - done.start.year) * 12 + done.end.month - done.start.month
    return Made(f"S-{entry.locator}", (premium(f"C-{entry.locator}", str(rate), f"{rate * months}.00"),))


def issued_policy() -> Ledger:
    ledger = Ledger(USD)
    ledger.issue(
        "X0",
        Effect("issuance", START, END, TermSpan(0, START, END)),
        "S-X0",
        [premium("C-X0", "100", "1200.00")],
        locators(),
    )
    return ledger


def test_an_out_of_sequence_change_is_an_aggregate_equal_to_issuing_in_sequence():
    ledger, new = issued_policy(), locators()
    july = entry("X1", "change", at(7), 1)
    first = execute(ledger, [ISSUANCE], plan([ISSUANCE], july), make, new, july)
    assert [c.amount for c in first.steps[0].charges] == [Decimal("1200.00"), Decimal("-600.00")]

    april = entry("X2", "change", at(4), 2)
    outcome = execute(first.ledger, first.issued, plan(first.issued, april), make, new, april)

    assert [(s.action, s.entry.locator, [str(c.amount) for c in s.charges]) for s in outcome.steps] == [
        ("reverse", "X1", ["600.00", "-1200.00"]),  # the issuance whole again, the July segment taken back
        ("issue", "X2", ["1350.00", "-900.00"]),  # 9 months at 150; the issuance keeps 3 months
        ("reapply", "N5", ["1200.00", "-900.00"]),  # July re-rated on April's coverage, which keeps 3 months
    ]
    reapplied = outcome.steps[2]
    assert (reapplied.entry.static_locator, reapplied.entry.created, reapplied.reapplication_of) == (
        "X1",
        created(1),
        july,
    )
    assert [c.reversalOfLocator for c in reapplied.charges] == [None, "C-X2"]
    assert names(outcome.issued) == ["X0", "X2", "N5"]
    assert names(first.issued) == ["X0", "X1"]  # the input ledger and stack are left as they were
    assert len(first.ledger.spans) == 2

    charges = [c for s in (*first.steps, *outcome.steps) for c in s.charges] + [issued_policy().rated[0].charge]
    assert (
        totals(charges)
        == held_cost(outcome.ledger.rated, outcome.ledger.spans, USD)
        == {("E", "premium"): Decimal("1950.00")}
    )  # 3 months at 100, 3 at 150, 6 at 200

    in_sequence = locators()
    first_april = execute(issued_policy(), [ISSUANCE], Plan(), make, in_sequence, april)
    then_july = execute(first_april.ledger, first_april.issued, Plan(), make, in_sequence, july)
    assert [(p.start, p.end) for p in then_july.ledger.held()] == [(p.start, p.end) for p in outcome.ledger.held()]
    assert totals(c for s in (*first_april.steps, *then_july.steps) for c in s.charges) == {
        ("E", "premium"): Decimal("1950.00") - Decimal("1200.00")
    }  # the issuance's own charge is not a step's


def test_a_reapplication_the_coverage_no_longer_allows_is_dropped():
    ledger, new = issued_policy(), locators()
    renewal = entry("X1", "renewal", END, 1)
    renewed = execute(ledger, [ISSUANCE], Plan(), make, new, renewal)
    assert renewed.steps[0].effect.term == TermSpan(1, END, at(1, year=2028))

    cancellation = entry("X2", "cancellation", at(7), 2)
    outcome = execute(renewed.ledger, renewed.issued, plan(renewed.issued, cancellation), make, new, cancellation)

    assert [(s.action, s.entry.locator) for s in outcome.steps] == [("reverse", "X1"), ("issue", "X2"), ("drop", "X1")]
    assert names(outcome.issued) == ["X0", "X2"]
    assert [str(c.amount) for c in outcome.steps[1].charges] == ["-600.00"]


def test_a_refused_transaction_leaves_the_ledger_as_it_was():
    ledger = issued_policy()
    cancelled = execute(ledger, [ISSUANCE], Plan(), make, locators(), entry("X1", "cancellation", at(7), 1))

    with pytest.raises(InvalidState):
        execute(cancelled.ledger, cancelled.issued, Plan(), make, locators(), entry("X2", "change", at(8), 2))
    assert len(cancelled.ledger.spans) == 2 and len(cancelled.ledger.adjustments) == 1


def test_the_ledger_refuses_what_no_issue_gives():
    ledger = issued_policy()
    restore = Effect("reinstatement", at(7), END, TermSpan(0, START, END), restores="X1")

    with pytest.raises(ValueError, match="reverse none"):
        ledger.issue(
            "X1", restore, "S1", [premium("C1", "1", "1.00").model_copy(update={"reversalOfLocator": "C"})], locators()
        )
    with pytest.raises(ValueError, match="rates none"):
        ledger.issue("X1", restore, "S1", [premium("C1", "1", "1.00")], locators())
    with pytest.raises(ValueError, match="X7 holds no span"):
        ledger.reverse("X7", locators())
