"""Random policy histories (hypothesis) of changes, cancellations, reinstatements, renewals, reversals and
out-of-sequence transactions, on several elements and charge types with rate, amount and flat charges.

After every issue: the charges of each element and charge type sum to what the held coverage costs, to
the minor unit (costed here from the pieces held, independently of deltas.py); every step's charges are
DECISIONS.md's (a cut: -(amount - kept) of whole pieces; a reinstatement at the cancellation time: the
negation of the cancellation's; a reversal: the negation of the reversed transaction's); the policy
holds what issuing the same transactions in sequence holds, with the same totals; and the last span in
processing order (the policy's latest segment, transactions/issuing.py) is the one a snapshot, which
walks the issued segments in issuing order (policies/stack.py), shows at the policy's last moment.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Context, Decimal
from typing import Any

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from chalicelib.core.durations import duration
from chalicelib.core.errors import DomainError
from chalicelib.core.money import round_money
from chalicelib.policies.models import SegmentSummary, Transaction
from chalicelib.policies.stack import segment_at
from chalicelib.priceable.models import Charge, SegmentType
from chalicelib.transactions.coverage import (
    Category,
    Effect,
    Piece,
    SegmentSpan,
    TermSpan,
    cancellation,
    held,
    piece_at,
)
from chalicelib.transactions.deltas import Proration, held_cost, totals
from chalicelib.transactions.sequence import Entry, Ledger, Made, Outcome, execute, plan, reversal_plan

UTC = timezone.utc
ZONE = "America/New_York"
START = datetime(2026, 1, 1, 5, tzinfo=UTC)  # midnight in New York
END = datetime(2027, 1, 1, 5, tzinfo=UTC)
ELEMENTS = ("E1", "E2", "E3")
TYPES = ("premium", "tax", "fee")
WIDE = Context(prec=60)
Key = tuple[str, str]
Spec = tuple[str, Decimal]
"""("rate", a rate per basis unit) | ("amount", an amount for the segment) | ("flat", a flat amount)."""


@dataclass(frozen=True)
class Request:
    """A transaction as a client asked for it: its category, time and the charges it sets or removes."""

    category: Category
    effective: datetime
    created: datetime
    changes: tuple[tuple[Key, Spec | None], ...] = ()
    new_end: datetime | None = None


@dataclass
class Policy:
    """One policy issued through sequence.execute, with a fake plugin rating each segment's state."""

    proration: Proration
    initial: dict[Key, Spec]
    requests: dict[str, Request] = field(default_factory=dict)
    states: dict[str, dict[Key, Spec]] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)
    charges: list[Charge] = field(default_factory=list)
    by_transaction: dict[str, list[Charge]] = field(default_factory=dict)
    counter: Any = field(default_factory=lambda: itertools.count(1))
    issuing_order: list[SegmentSpan] = field(default_factory=list)
    """The spans of the transactions neither reversed nor reapplied, in the order they were issued."""

    def __post_init__(self) -> None:
        self.ledger = Ledger(self.proration)
        self.requests["X0"] = Request("issuance", START, START)
        self.issued = [Entry("X0", "X0", "issuance", START, START)]
        self.states["S0"] = dict(self.initial)
        rated = self.rate(self.initial, START, END)
        self.ledger.issue("X0", Effect("issuance", START, END, TermSpan(0, START, END)), "S0", rated, self.new_locator)
        self.issuing_order = list(self.ledger.spans)
        self.charges.extend(rated)
        self.by_transaction["X0"] = list(rated)

    def new_locator(self) -> str:
        return f"L{next(self.counter):04d}"

    # --- the fake plugin -------------------------------------------------------------------------------

    def rate(self, state: dict[Key, Spec], start: datetime, end: datetime) -> list[Charge]:
        length = duration(start, end, self.proration.basis, self.proration.time_zone)
        rated = []
        for (element, charge_type), (kind, value) in sorted(state.items()):
            if kind == "rate":
                rate, amount = value, round_money(value * length, self.proration.currency)
            else:  # as priceable.rating stores an amount: the rate is the amount per unit of the segment
                amount = round_money(value, self.proration.currency)
                rate = amount / length if length else amount
            if not amount:
                continue
            locator = self.new_locator()
            self.kinds[locator] = kind
            rated.append(
                Charge(
                    locator=locator,
                    elementLocator=f"{element}-{locator}",
                    elementStaticLocator=element,
                    chargeType=charge_type,
                    chargeCategory="premium",
                    rate=rate,
                    amount=amount,
                    handling="flat" if kind == "flat" else "normal",
                )
            )
        return rated

    def make(self, entry: Entry, done: Effect, ledger: Ledger, reapplication_of: Entry | None) -> Made:
        request = self.requests[entry.static_locator]
        pieces = ledger.held()
        if entry.category == "renewal":
            base: Piece | None = pieces[-1]
        elif entry.category == "reinstatement":
            base = cancellation(pieces)  # a gap keeps the state it cancelled
        else:
            base = piece_at(pieces, done.start)
        assert base is not None
        state = dict(self.states[base.segment_locator])
        for key, spec in request.changes:
            if spec is None:
                state.pop(key, None)
            else:
                state[key] = spec
        segment = self.new_locator()
        self.states[segment] = state
        if entry.category == "cancellation" or done.restores is not None:
            return Made(segment)
        return Made(segment, tuple(self.rate(state, done.start, done.end)))

    # --- issuing ---------------------------------------------------------------------------------------

    def issue(self, request: Request) -> Outcome | None:
        static = self.new_locator()
        self.requests[static] = request
        entry = Entry(static, static, request.category, request.effective, request.created, request.new_end)
        try:
            outcome = execute(self.ledger, self.issued, plan(self.issued, entry), self.make, self.new_locator, entry)
        except DomainError:
            return None
        self.absorb(outcome)
        return outcome

    def reverse(self, targets: list[str]) -> Outcome | None:
        try:
            planned = reversal_plan(self.issued, targets)
        except DomainError:
            return None
        outcome = execute(self.ledger, self.issued, planned, self.make, self.new_locator)
        self.absorb(outcome)
        return outcome

    def absorb(self, outcome: Outcome) -> None:
        spans = list(self.ledger.spans)
        for step in outcome.steps:
            check_step(self, step, spans, outcome.ledger)
            if step.action == "reverse":
                spans = [span for span in spans if span.transaction_locator != step.entry.locator]
                self.issuing_order = [s for s in self.issuing_order if s.transaction_locator != step.entry.locator]
            elif step.action in ("issue", "reapply"):
                assert step.effect is not None and step.segment_locator is not None
                spans.append(step.effect.span(step.segment_locator, step.entry.locator))
                self.issuing_order.append(spans[-1])
                self.by_transaction[step.entry.locator] = list(step.charges)
            self.charges.extend(step.charges)
        assert spans == outcome.ledger.spans
        self.ledger, self.issued = outcome.ledger, list(outcome.issued)

    def held_shape(self) -> list[tuple[Any, ...]]:
        return [
            (p.start, p.end, p.segment_start, p.segment_end, p.gap, sorted(self.states[p.segment_locator].items()))
            for p in self.ledger.held()
        ]


# --- the checks ------------------------------------------------------------------------------------------


def kept(policy: Policy, charge: Charge, start: datetime, end: datetime, cut: datetime) -> Decimal:
    """DECISIONS.md's kept part, knowing how the fake plugin rated the charge."""
    kind = policy.kinds[charge.locator]
    if kind == "flat" or cut >= end:
        return charge.amount
    basis, zone, currency = policy.proration.basis, policy.proration.time_zone, policy.proration.currency
    part = duration(start, max(cut, start), basis, zone)
    if kind == "rate":
        return round_money(WIDE.multiply(charge.rate, part), currency)
    return round_money(WIDE.divide(WIDE.multiply(charge.amount, part), duration(start, end, basis, zone)), currency)


def cost_of_held_coverage(policy: Policy) -> dict[Key, Decimal]:
    ledger = policy.ledger
    holding = {piece.segment_locator: piece for piece in ledger.held()}
    live = {span.locator for span in ledger.spans}
    cost: dict[Key, Decimal] = defaultdict(Decimal)
    for rated in ledger.rated:
        key = (rated.charge.elementStaticLocator, rated.charge.chargeType)
        piece = holding.get(rated.segment_locator)
        if piece is not None:
            cost[key] += kept(policy, rated.charge, rated.start, rated.end, piece.end)
        elif rated.segment_locator in live and rated.charge.handling == "flat":
            cost[key] += rated.charge.amount
    return {key: amount for key, amount in cost.items() if amount}


def by_root(charges: list[Charge]) -> dict[str, Decimal]:
    net: dict[str, Decimal] = defaultdict(Decimal)
    for charge in charges:
        net[charge.reversalOfLocator or charge.locator] += charge.amount
    return {root: amount for root, amount in net.items() if amount}


def negated(amounts: dict[str, Decimal]) -> dict[str, Decimal]:
    return {root: -amount for root, amount in amounts.items()}


def check_step(policy: Policy, step: Any, spans: list[SegmentSpan], ledger: Ledger) -> None:
    adjustments = [c for c in step.charges if c.reversalOfLocator is not None]
    if step.action == "reverse":
        assert by_root(list(step.charges)) == negated(by_root(policy.by_transaction[step.entry.locator]))
        return
    if step.action == "drop":
        assert not step.charges
        return
    done: Effect = step.effect
    if done.restores is not None:
        cancelled = [c for c in policy.by_transaction[done.restores] if c.reversalOfLocator]
        assert by_root(adjustments) == negated(by_root(cancelled))
        return
    if step.entry.category in ("renewal", "reinstatement"):
        assert adjustments == []
        return
    cut = done.start
    expected: dict[str, Decimal] = {}
    for piece in held(spans):
        if piece.end <= cut:
            continue
        assert piece.whole  # issued in sequence, a transaction only ever cuts whole segments
        for rated in ledger.rated:
            if rated.segment_locator == piece.segment_locator and rated.charge.handling != "flat":
                reversal = -(rated.charge.amount - kept(policy, rated.charge, rated.start, rated.end, cut))
                if reversal:
                    expected[rated.charge.locator] = reversal
    assert by_root(adjustments) == expected


def check_invariant(policy: Policy) -> None:
    assert (
        totals(policy.charges)
        == cost_of_held_coverage(policy)
        == held_cost(policy.ledger.rated, policy.ledger.spans, policy.proration)
    )


def check_shown_last(policy: Policy) -> None:
    """The policy's latest segment (the last span in processing order) is what a snapshot shows just before
    the policy's end, from the issued transactions in issuing order."""
    issued = [
        Transaction(
            locator=span.transaction_locator,
            staticLocator=span.transaction_locator,
            policyLocator="P",
            termLocator=f"T{span.term}",
            effectiveTime=span.start,
            transactionState="issued",
            transactionCategory="change",
            transactionType="change",
            createdAt=START,
            createdBy="U",
            issuedTime=START,
            configVersion="C",
            segments=[
                SegmentSummary(
                    locator=span.locator,
                    startTime=span.start,
                    endTime=span.end,
                    segmentType=SegmentType.GAP if span.gap else SegmentType.COVERAGE,
                )
            ],
        )
        for span in policy.issuing_order
    ]
    shown = segment_at(issued, policy.ledger.terms()[-1].end - timedelta(microseconds=1))
    assert shown is not None
    assert shown[1].locator == policy.ledger.spans[-1].locator


def check_in_sequence(policy: Policy) -> None:
    replay = Policy(policy.proration, policy.initial)
    for entry in policy.issued[1:]:
        asked = policy.requests[entry.static_locator]
        replayed = Entry(
            entry.static_locator, entry.static_locator, entry.category, entry.effective, entry.created, entry.new_end
        )
        replay.requests[entry.static_locator] = asked
        assert plan(replay.issued, replayed).in_sequence
        replay.absorb(
            execute(
                replay.ledger, replay.issued, plan(replay.issued, replayed), replay.make, replay.new_locator, replayed
            )
        )
    assert replay.held_shape() == policy.held_shape()
    assert totals(replay.charges) == totals(policy.charges)


# --- the histories ---------------------------------------------------------------------------------------

money = st.decimals(min_value=0, max_value=3000, places=2)
specs = st.one_of(
    st.tuples(st.just("rate"), st.decimals(min_value=0, max_value=400, places=4)),
    st.tuples(st.just("amount"), money),
    st.tuples(st.just("flat"), st.decimals(0, 80, places=2)),
)
keys = st.tuples(st.sampled_from(ELEMENTS), st.sampled_from(TYPES))
moments = st.one_of(st.tuples(st.just("at"), st.integers(0, 999_999)), st.tuples(st.just("same"), st.integers(0, 9)))
stale = st.one_of(st.none(), st.none(), st.integers(1, 9))
operations = st.one_of(
    st.tuples(
        st.just("change"),
        moments,
        st.dictionaries(keys, st.none() | specs, min_size=1, max_size=3),
        stale,
        st.one_of(st.none(), st.none(), st.none(), st.integers(1, 500)),
    ),
    st.tuples(st.just("cancellation"), moments, stale),
    st.tuples(st.just("reinstatement"), st.booleans(), st.integers(0, 999_999)),
    st.tuples(st.just("renewal")),
    st.tuples(st.just("reversal"), st.integers(1, 2), st.booleans()),
)


def moment(policy: Policy, chosen: tuple[str, int]) -> datetime:
    how, value = chosen
    if how == "same":
        return policy.issued[value % len(policy.issued)].effective
    terms = policy.ledger.terms()
    return within(terms[0].start, terms[-1].end, value)


def within(start: datetime, end: datetime, millionths: int) -> datetime:
    moment = start + timedelta(microseconds=(end - start) // timedelta(microseconds=1) * millionths // 1_000_000)
    return max(moment.replace(second=0, microsecond=0), start)


def created(policy: Policy, stale_choice: int | None, clock: list[datetime]) -> datetime:
    """A new transaction's creation time: now, or (a draft created earlier) just before an issued one's."""
    clock[0] += timedelta(minutes=1)
    later = policy.issued[1:]
    if stale_choice is None or not later:
        return clock[0]
    return later[stale_choice % len(later)].created - timedelta(microseconds=1)


def run(policy: Policy, operation: tuple[Any, ...], clock: list[datetime]) -> Outcome | None:
    kind = operation[0]
    if kind == "change":
        _, when, changes, stale_choice, new_end_days = operation
        effective = moment(policy, when)
        new_end = effective + timedelta(days=new_end_days) if new_end_days else None
        return policy.issue(
            Request("change", effective, created(policy, stale_choice, clock), tuple(sorted(changes.items())), new_end)
        )
    if kind == "cancellation":
        _, when, stale_choice = operation
        return policy.issue(Request("cancellation", moment(policy, when), created(policy, stale_choice, clock)))
    if kind == "reinstatement":
        _, at_cancellation, millionths = operation
        gap = cancellation(policy.ledger.held())
        if gap is None:
            effective = within(START, END, millionths)
        else:
            effective = gap.start if at_cancellation else within(gap.start, gap.end, millionths)
        return policy.issue(Request("reinstatement", effective, created(policy, None, clock)))
    if kind == "renewal":
        return policy.issue(Request("renewal", policy.ledger.terms()[-1].end, created(policy, None, clock)))
    _, count, middle = operation
    later = [entry.locator for entry in policy.issued[1:]]
    if not later:
        return None
    targets = [later[-1 - count % len(later)]] if middle else later[-count:]
    return policy.reverse(targets)


def describe(operation: tuple[Any, ...], outcome: Outcome | None) -> str:
    """What an operation did, for --hypothesis-show-statistics."""
    if outcome is None:
        return f"{operation[0]} refused"
    actions = {step.action for step in outcome.steps}
    restored = any(step.effect is not None and step.effect.restores for step in outcome.steps)
    return " ".join([operation[0], *sorted(actions - {"issue"}), *(["restore"] if restored else [])])


OOS_BEFORE_A_REINSTATEMENT = [
    ("change", ("at", 300_000), {("E1", "premium"): ("rate", Decimal("10.5"))}, None, None),
    ("cancellation", ("at", 600_000), None),
    ("reinstatement", True, 0),
    ("change", ("at", 100_000), {("E2", "tax"): ("amount", Decimal("99.99"))}, None, None),
    ("reversal", 1, True),
]
RENEWAL_THEN_CANCELLED_BEFORE_IT = [
    ("renewal",),
    ("change", ("at", 700_000), {("E1", "fee"): ("flat", Decimal("12.5"))}, None, 30),
    ("cancellation", ("at", 200_000), None),
    ("reinstatement", False, 500_000),
]
SAME_TIME_CREATED_EARLIER = [
    ("change", ("at", 400_000), {("E3", "premium"): ("rate", Decimal("3.3333"))}, None, None),
    ("change", ("same", 1), {("E3", "premium"): ("rate", Decimal("7"))}, 1, None),
    ("reversal", 2, False),
]


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@example(
    initial={("E1", "premium"): ("rate", Decimal(100)), ("E2", "tax"): ("amount", Decimal("100.03"))},
    basis="months",
    currency="USD",
    history=OOS_BEFORE_A_REINSTATEMENT,
)
@example(
    initial={("E1", "premium"): ("rate", Decimal("33.33")), ("E1", "fee"): ("flat", Decimal(25))},
    basis="months",
    currency="JPY",
    history=RENEWAL_THEN_CANCELLED_BEFORE_IT,
)
@example(
    initial={("E3", "premium"): ("amount", Decimal(1000))},
    basis="days",
    currency="USD",
    history=SAME_TIME_CREATED_EARLIER,
)
@given(
    initial=st.dictionaries(keys, specs, min_size=1, max_size=6),
    basis=st.sampled_from(["months", "months", "days", "years"]),
    currency=st.sampled_from(["USD", "JPY"]),
    history=st.lists(operations, min_size=1, max_size=8),
)
def test_charges_always_sum_to_the_cost_of_the_held_coverage_and_equal_in_sequence_issuance(
    initial, basis, currency, history
):
    policy = Policy(Proration(basis, ZONE, currency), initial)
    clock = [START + timedelta(days=1)]
    check_invariant(policy)
    for operation in history:
        before = (list(policy.ledger.spans), len(policy.charges))
        outcome = run(policy, operation, clock)
        event(describe(operation, outcome))
        if outcome is None:
            assert (policy.ledger.spans, len(policy.charges)) == before  # a refused transaction changes nothing
            continue
        check_invariant(policy)
        check_in_sequence(policy)
        check_shown_last(policy)
