"""What a transaction is worked out from: the policy's timeline of issued segments (coverage.py's
spans), the unissued transactions it is based on, and the element tree it starts from. Pure: reads a
policy's stack (policies.models.IssuedStack), stores nothing.

- `issued_spans`: the local stack's spans in processing order (issued transactions that are neither
  reversed nor reapplied; reversal and aggregate records make none).
- `Plan`: what a transaction does, by its category, effective time and change instructions: the span
  of its segment (coverage.effect, which refuses an effective time outside the terms, a reinstatement
  of a policy that is not cancelled, a renewal of a cancelled one, ...), its term, the tree of the
  coverage it starts from and the tree it makes (changes.py).
- A transaction based on an unissued one (a chain) sees the timeline as if that one were issued.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from chalicelib.core import codes
from chalicelib.core.clock import utc
from chalicelib.core.errors import FieldError
from chalicelib.policies.models import (
    LIVE_UNISSUED,
    IssuedStack,
    Segment,
    SegmentSummary,
    Term,
    Transaction,
    TransactionCategory,
    TransactionState,
)
from chalicelib.priceable.elements import Catalog
from chalicelib.priceable.models import Charge, Element, SegmentType
from chalicelib.transactions import changes, coverage, deltas, sequence
from chalicelib.transactions.models import (
    AddInstruction,
    DeleteInstruction,
    Instruction,
    ModifyInstruction,
    instruction_of,
)

CREATED: dict[str, coverage.Category] = {
    "change": "change",
    "cancellation": "cancellation",
    "reinstatement": "reinstatement",
    "renewal": "renewal",
}
"""The categories a client creates transactions of (issuance comes from a quote; reversal has its route)."""
ON_TIMELINE: dict[str, coverage.Category] = {**CREATED, "issuance": "issuance"}
NO_SPAN = frozenset({TransactionCategory.REVERSAL, TransactionCategory.AGGREGATE})
ELEMENT_ACTIONS = (AddInstruction, ModifyInstruction, DeleteInstruction)


def ledger_of(
    stack: IssuedStack, spans: list[coverage.SegmentSpan] | None = None, term_duration: Decimal | None = None
) -> sequence.Ledger:
    """The policy's coverage (`spans`, default: the issued ones) and every charge its issued transactions
    carry (reversed ones' included): rated charges with their segment's span, and the adjustments. A
    renewal's term lasts `term_duration`, else the policy's term."""
    policy = stack.policy
    if stack.complete:
        carried = [
            t for t in stack.transactions if t.transactionState in (TransactionState.ISSUED, TransactionState.REVERSED)
        ]
    else:  # a head: the last transaction's charges alone, each at its net (see `head_suffices`)
        carried = local_stack(stack)
    rated = [
        deltas.Rated(t.segments[-1].locator, t.segments[-1].startTime, t.segments[-1].endTime, charge)
        for t in carried
        if t.segments
        for charge in t.charges
        if charge.reversalOfLocator is None
    ]
    adjustments = (
        [charge for t in carried for charge in t.charges if charge.reversalOfLocator is not None]
        if stack.complete
        else []
    )
    return sequence.Ledger(
        deltas.Proration(policy.durationBasis, policy.timezone, policy.currency),
        _term_duration(term_duration or policy.termDuration),
        issued_spans(stack) if spans is None else spans,
        rated,
        adjustments,
    )


def term_numbers(stack: IssuedStack) -> dict[str, int]:
    return {term.locator: term.number for term in stack.terms}


def local_stack(stack: IssuedStack) -> list[Transaction]:
    """The issued transactions that put coverage on the timeline, neither reversed nor reapplied, in
    processing order (sequence.py: effective time, creation time, static locator)."""
    issued = [t for t in stack.issued() if t.transactionCategory not in NO_SPAN]
    return sorted(issued, key=lambda t: entry_of(t).order)


def entry_of(transaction: Transaction) -> sequence.Entry:
    category = _category(str(transaction.transactionCategory), ON_TIMELINE)
    return sequence.Entry(
        transaction.locator,
        transaction.staticLocator,
        category,
        transaction.effectiveTime,
        transaction.createdAt,
        transaction.newPolicyEndTime,
    )


def issued_spans(stack: IssuedStack) -> list[coverage.SegmentSpan]:
    """The local stack's spans in processing order; of a head (`head_suffices`), each term's span as its
    term item keeps it (`anchors`), then the last transaction's."""
    numbers = term_numbers(stack)
    return [
        *([] if stack.complete else anchors(stack)),
        *(
            span
            for transaction in local_stack(stack)
            for span in spans_of(transaction, numbers[transaction.termLocator])
        ),
    ]


ANCHOR = "#term"
"""What an anchor's locators end with (no segment's or transaction's do)."""


def anchors(stack: IssuedStack) -> list[coverage.SegmentSpan]:
    """A head's stand-in for the history it leaves out: a span per term from its start to its end, as the
    term items hold them (every issue keeps them at coverage.terms of the issued spans). Followed by the
    last transaction's spans, they give the same terms (coverage.terms: a term's start is its first span's,
    its end its last span's) and the same pieces from the last transaction's effective time on (each
    span cuts what comes before it), which is all an issue in sequence after it looks at."""
    return [
        coverage.SegmentSpan(
            f"{term.locator}{ANCHOR}", f"{term.locator}{ANCHOR}", term.startTime, term.endTime, term.number
        )
        for term in sorted(stack.terms, key=lambda term: term.number)
    ]


def head_suffices(stack: IssuedStack, transaction: Transaction, schedules: bool) -> bool:
    """Whether `stack` (a head, policies.repository.head) holds all that working out and issuing
    `transaction` needs, so that every answer is what the whole stack gives: `transaction` is live, a
    change, cancellation or renewal based on the latest issued transaction (no unissued chain, no
    rebase), with a params instruction (a renewal: or its default effective time, the last term's end)
    that puts it after the last transaction of the local stack in processing order; that last one made
    the latest segment, alone, and restores nothing, so it is held whole: no piece of an earlier segment
    reaches past its effective time, an issue after it adjusts only its charges, and each of those is at
    its amount (`settle` left every charge at what it earns, and a segment held whole earns its amount),
    so its adjustments need not be read. `schedules`: the configuration names schedules, whose owners
    are the whole base chain (execution.subject): not from a head. Always True for a whole stack."""
    if stack.complete:
        return True
    if (
        schedules
        or transaction.transactionState not in LIVE_UNISSUED
        or transaction.transactionCategory not in HEAD_CATEGORIES
        or transaction.baseTransactionLocator != stack.policy.issuedTransactionLocator
    ):
        return False
    local = local_stack(stack)
    segment = stack.segments.get(stack.policy.latestSegmentLocator)
    if (
        len(local) != 1
        or segment is None
        or [s.locator for s in local[0].segments] != [segment.locator]
        or local[0].segments[0].restores is not None
        or local[0].termLocator not in term_numbers(stack)
    ):
        return False
    params = changes.params_of([instruction_of(stored) for stored in transaction.changeInstructions])
    if params is not None:
        effective = utc(params.effectiveTime)
    elif transaction.transactionCategory == TransactionCategory.RENEWAL and stack.terms:
        effective = max(stack.terms, key=lambda term: term.number).endTime
    else:
        return False
    last = entry_of(local[0]).order
    planned = [transaction.effectiveTime] if transaction.segments else []  # as execution orders it
    return all((moment, transaction.createdAt, transaction.staticLocator) > last for moment in [effective, *planned])


HEAD_CATEGORIES = frozenset({TransactionCategory.CHANGE, TransactionCategory.CANCELLATION, TransactionCategory.RENEWAL})


def spans_of(transaction: Transaction, term: int) -> list[coverage.SegmentSpan]:
    return [
        coverage.SegmentSpan(
            s.locator, transaction.locator, s.startTime, s.endTime, term, s.segmentType == SegmentType.GAP, s.restores
        )
        for s in transaction.segments
    ]


def chain(stack: IssuedStack, transaction: Transaction) -> list[Transaction]:
    """The unissued transactions `transaction` is based on, the oldest first."""
    by_locator = {t.locator: t for t in stack.transactions}
    found: list[Transaction] = []
    base = by_locator.get(transaction.baseTransactionLocator or "")
    while base is not None and base.transactionState in LIVE_UNISSUED and base not in found:
        found.insert(0, base)
        base = by_locator.get(base.baseTransactionLocator or "")
    return found


@dataclass(frozen=True)
class Plan:
    effect: coverage.Effect
    spans: list[coverage.SegmentSpan]
    """The timeline the transaction is applied to (issued spans, then those of the unissued chain)."""
    base_tree: Element
    tree: Element
    term_number: int

    @property
    def segment_type(self) -> SegmentType:
        return SegmentType.GAP if self.effect.gap else SegmentType.COVERAGE

    def summary(self, locator: str) -> SegmentSummary:
        return SegmentSummary(
            locator=locator,
            segmentType=self.segment_type,
            startTime=self.effect.start,
            endTime=self.effect.end,
            restores=self.effect.restores,
        )

    def spans_after(self, segment_locator: str, transaction_locator: str) -> list[coverage.SegmentSpan]:
        return [*self.spans, self.effect.span(segment_locator, transaction_locator)]


@dataclass(frozen=True)
class Planner:
    """Works out plans on one stack: `catalog` builds added elements, `new_locator` names them;
    `basis`, `time_zone` and `term_duration` are the policy's."""

    stack: IssuedStack
    catalog: Catalog
    new_locator: Callable[[], str]

    def plan(self, transaction: Transaction) -> Plan:
        spans = issued_spans(self.stack)
        trees = {s.locator: s.element for s in self.stack.segments.values()}
        for base in chain(self.stack, transaction):
            based = self._plan(base, spans, trees)
            spans = based.spans_after(base.segments[-1].locator, base.locator)
            trees[base.segments[-1].locator] = base.element or based.tree
        return self._plan(transaction, spans, trees)

    def _plan(self, transaction: Transaction, spans: list[coverage.SegmentSpan], trees: dict[str, Element]) -> Plan:
        instructions = [instruction_of(stored) for stored in transaction.changeInstructions]
        category = str(transaction.transactionCategory)
        params = changes.params_of(instructions)
        if category in ("cancellation", "reinstatement"):
            _check_no_element_changes(instructions, category)
        policy = self.stack.policy
        pieces = coverage.held(spans)
        effective = utc(params.effectiveTime) if params is not None else _default_effective(category, spans, pieces)
        new_end = utc(params.newPolicyEndTime) if params is not None and params.newPolicyEndTime else None
        effect = coverage.effect(
            _category(category),
            effective,
            spans,
            basis=policy.durationBasis,
            time_zone=policy.timezone,
            new_end=new_end,
            term_duration=_term_duration(transaction.termDuration or policy.termDuration),
        )
        base_tree = trees[base_segment(category, effective, pieces)]
        tree = changes.applied(self.catalog, base_tree, instructions, effective, self.new_locator)
        return Plan(effect, spans, base_tree, tree, effect.term.number)


def _default_effective(category: str, spans: Sequence[coverage.SegmentSpan], pieces: list[coverage.Piece]) -> datetime:
    """A renewal takes effect at the end of the last term, a reinstatement at the cancellation; a change
    or a cancellation must say when (a params instruction)."""
    if category == "renewal":
        return coverage.terms(spans)[-1].end
    cancelled = coverage.cancellation(pieces)
    if category == "reinstatement":
        if cancelled is None:
            raise codes.TRANSACTION_POLICY_NOT_CANCELLED("The policy is not cancelled")
        return cancelled.start
    raise codes.TRANSACTION_EFFECTIVE_TIME_REQUIRED(
        f"A {category} needs a params instruction with its effectiveTime",
        field_errors=[FieldError("changeInstructions", "no params instruction")],
    )


def base_segment(category: str, effective: datetime, pieces: list[coverage.Piece]) -> str:
    """The segment whose tree the transaction starts from: the one holding the effective time; for a
    renewal the last one; for a reinstatement the gap, which keeps the tree it cancelled."""
    if category == "renewal":
        return pieces[-1].segment_locator
    if category == "reinstatement":
        cancelled = coverage.cancellation(pieces)
        if cancelled is not None:
            return cancelled.segment_locator
    at = coverage.piece_at(pieces, effective)
    if category not in ("renewal", "reinstatement") and at is not None:
        return at.segment_locator
    raise codes.TRANSACTION_NO_COVERAGE(f"The policy holds no coverage at {effective.isoformat()}")


def _check_no_element_changes(instructions: Sequence[Instruction], category: str) -> None:
    problems = [
        FieldError(f"changeInstructions[{i}].action", f"a {category} does not change elements")
        for i, instruction in enumerate(instructions)
        if isinstance(instruction, ELEMENT_ACTIONS)
    ]
    if problems:
        raise codes.TRANSACTION_INVALID_INSTRUCTION(f"A {category} takes no element changes", field_errors=problems)


def _category(name: str, known_ones: dict[str, coverage.Category] = CREATED) -> coverage.Category:
    known = known_ones.get(name)
    if known is None:
        raise codes.TRANSACTION_UNKNOWN_TYPE(f"A {name} transaction cannot be created")
    return known


def _term_duration(value: Decimal | None) -> Decimal | None:
    return value if value is not None and value > 0 else None


def history_adjustments(
    basis: str,
    time_zone: str,
    currency: str,
    terms: Sequence[Term],
    history: Sequence[tuple[Transaction, Segment]],
    adjustment_locator: Callable[[Transaction, int], str],
) -> list[list[Charge]]:
    """The adjustments (deltas.py) each transaction of an issued history brought from elsewhere (a migration)
    would have carried had it been issued here, in the history's order: the charges of the earlier coverage it
    cuts, or for a reinstatement at its cancellation's time gives back. Each transaction's own charges are its
    segment's rated ones; `adjustment_locator(transaction, n)` names its n-th adjustment. ValueError, naming
    the transaction, for a history no policy issues (a reinstatement at the cancellation time that rates charges
    of its own, a restoring span naming nothing before it)."""
    numbers = {term.locator: coverage.TermSpan(term.number, term.startTime, term.endTime) for term in terms}
    ledger = sequence.Ledger(deltas.Proration(basis, time_zone, currency))
    cancellation: Transaction | None = None
    adjusted: list[list[Charge]] = []
    for index, (transaction, segment) in enumerate(history):
        category = ON_TIMELINE.get(str(transaction.transactionCategory))
        if category is None:
            raise ValueError(f"transaction {index}: a {transaction.transactionCategory} puts nothing on the timeline")
        restores = None
        if category == "reinstatement" and cancellation and cancellation.effectiveTime == transaction.effectiveTime:
            restores = cancellation.locator
        done = coverage.Effect(
            category,
            segment.startTime,
            segment.endTime,
            numbers[transaction.termLocator],
            gap=segment.segmentType == SegmentType.GAP,
            restores=restores,
        )
        counter = iter(range(len(ledger.rated) + len(transaction.charges)))
        try:
            adjusted.append(
                ledger.issue(
                    transaction.locator,
                    done,
                    segment.locator,
                    transaction.charges,
                    lambda: adjustment_locator(transaction, next(counter)),  # noqa: B023 - called within this turn
                )
            )
        except ValueError as error:
            raise ValueError(f"transaction {index} ({category}) does not follow the ones before it: {error}") from None
        if category == "cancellation":
            cancellation = transaction
    return adjusted
