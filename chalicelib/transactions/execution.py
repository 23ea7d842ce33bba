"""Checking, rating and carrying out one transaction on its policy: the runner's Evaluator for
transactions, and the execution of what issuing it does (sequence.execute), in or out of sequence.

A transaction's tree is checked, rated and underwritten as a quote's is (priceable Evaluation), but a
cancellation (a gap) and a reinstatement that restores the cancelled coverage are neither checked nor
rated. Its price is what issuing it now adds: its own rated charges and the adjustments of the
policy's other charges (deltas.settle through sequence.Ledger). Out of sequence (sequence.plan: issued
transactions after it in processing order), issuing it reverses those (latest first), issues it, and
reapplies them: each reapplication's tree is the coverage held at its effective time with its
original's change instructions applied, rated through the plugin for its new segment (`Reapplier`, the
Maker sequence.execute calls).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core.ids import new_locator
from chalicelib.policies.models import IssuedStack, Transaction, TransactionCategory
from chalicelib.priceable import evaluation
from chalicelib.priceable.evaluation import Evaluation
from chalicelib.priceable.models import Charge, Element, Flag
from chalicelib.priceable.runner import Underwritten
from chalicelib.priceable.subject import ScheduleOwner, Subject
from chalicelib.transactions import changes, coverage, sequence, timeline
from chalicelib.transactions.models import instruction_of
from chalicelib.transactions.records import Found
from chalicelib.transactions.timeline import Plan

NOT_RATED = frozenset({TransactionCategory.CANCELLATION, TransactionCategory.REVERSAL})


def unrated(transaction: Transaction) -> bool:
    """A cancellation, a reversal, or a reinstatement that gives back what a cancellation removed."""
    return transaction.transactionCategory in NOT_RATED or (
        bool(transaction.segments) and transaction.segments[-1].restores is not None
    )


def subject(
    stack: IssuedStack,
    transaction: Transaction,
    account: Callable[[], Any],
    *,
    span: coverage.Effect | None = None,
    element: Element | None = None,
) -> Subject:
    """What the checks and plugins see of `transaction`: its policy, and the segment it makes (`span`,
    default: its own) with `element` (default: its own tree)."""
    policy = stack.policy
    if span is not None:
        start, end = span.start, span.end
    elif transaction.segments:
        start, end = transaction.segments[-1].startTime, transaction.segments[-1].endTime
    else:  # a reversal makes no segment of its own
        start, end = transaction.effectiveTime, policy.endTime
    term_start = (
        span.term.start
        if span
        else next((t.startTime for t in stack.terms if t.locator == transaction.termLocator), start)
    )
    tree = (
        element
        or transaction.element
        or Element(locator=transaction.locator, staticLocator=transaction.locator, type=policy.productName)
    )
    return Subject(
        kind="transaction",
        locator=transaction.locator,
        product=policy.productName,
        start=policy.startTime,
        end=end,
        currency=policy.currency,
        timezone=policy.timezone,
        basis=policy.durationBasis,
        element=tree,
        static=policy.static,
        jurisdiction=policy.jurisdiction,
        config_version=transaction.configVersion,
        account=account,
        category=str(transaction.transactionCategory),
        term_start=term_start,
        effective=transaction.effectiveTime,
        segment_start=start,
        segment_end=end,
        schedule_owners=_schedule_owners(stack, transaction),
    )


def _schedule_owners(stack: IssuedStack, transaction: Transaction) -> tuple[ScheduleOwner, ...]:
    """The transaction, its base, its base's base, ..., down to the issuance and its quote: where its
    schedules' items come from until it writes its own (schedules/service.py)."""
    by_locator = {t.locator: t for t in stack.transactions}
    owners: list[ScheduleOwner] = []
    current: Transaction | None = transaction
    while current is not None and len(owners) <= len(by_locator):
        owners.append(ScheduleOwner("transaction", current.locator, str(current.transactionCategory)))
        if current.transactionCategory == TransactionCategory.ISSUANCE and current.quoteLocator:
            owners.append(ScheduleOwner("quote", current.quoteLocator))
            break
        current = by_locator.get(current.baseTransactionLocator or "")
    return tuple(owners)


class TransactionEvaluation:
    """The runner's Evaluator for one transaction (as read: its steps change neither its instructions
    nor its span, so `plan` holds throughout). `last` is the execution its last price worked out."""

    def __init__(
        self, evaluation: Evaluation, found: Found, plan: Plan | None, model: dict[str, Any], account: Callable[[], Any]
    ):
        self.evaluation, self.found, self.plan, self.model, self.account = evaluation, found, plan, model, account
        self.last: Execution | None = None

    def validate(self, subject: Subject) -> tuple[Element, ValidationResult]:
        if unrated(self.found.transaction):
            return subject.element, ValidationResult(success=True)
        return self.evaluation.validate(subject)

    def price(self, subject: Subject) -> list[Charge]:
        working = self.found.transaction.model_copy(update={"element": subject.element})
        if self.plan is None:
            self.last = execute_reversal(self.evaluation, self.found, working, self.model, self.account)
            return [charge for step in self.last.outcome.steps if step.action == "reverse" for charge in step.charges]
        rated = [] if unrated(self.found.transaction) else self.evaluation.price(subject)
        self.last = execute(self.evaluation, self.found, self.plan, working, rated, self.model, self.account)
        return list(self.last.new.charges)

    def underwrite(self, subject: Subject, flags: list[Flag], *, already_rejected: bool) -> Underwritten:
        return self.evaluation.underwrite(subject, flags, already_rejected=already_rejected)


class Execution:
    """What issuing a transaction does: sequence.execute's outcome, and the trees of the segments it
    makes by segment locator."""

    def __init__(self, outcome: sequence.Outcome, trees: dict[str, Element]):
        self.outcome, self.trees = outcome, trees

    @property
    def new(self) -> sequence.Step:
        return next(step for step in self.outcome.steps if step.action == "issue")

    @property
    def in_sequence(self) -> bool:
        return all(step.action == "issue" for step in self.outcome.steps)


def execute(
    evaluation_: Evaluation,
    found: Found,
    plan: Plan,
    transaction: Transaction,
    rated: list[Charge],
    model: dict[str, Any],
    account: Callable[[], Any],
) -> Execution:
    """Issuing `transaction` (rated `rated` for its planned segment) on the policy as `found` read it."""
    stack = found.stack
    entries = [timeline.entry_of(t) for t in timeline.local_stack(stack)]
    new = timeline.entry_of(transaction)
    maker = Reapplier(evaluation_, stack, plan, transaction, rated, model, account)
    ledger = timeline.ledger_of(stack, list(plan.spans), transaction.termDuration)
    outcome = sequence.execute(ledger, entries, sequence.plan(entries, new), maker, new_locator, new)
    return Execution(outcome, maker.trees)


def execute_reversal(
    evaluation_: Evaluation, found: Found, transaction: Transaction, model: dict[str, Any], account: Callable[[], Any]
) -> Execution:
    """Issuing the reversal transaction `transaction`: its targets and everything after the earliest of
    them reversed, the later ones it does not target reapplied."""
    stack = found.stack
    entries = [timeline.entry_of(t) for t in timeline.local_stack(stack)]
    planned = sequence.reversal_plan(entries, transaction.reversedTransactionLocators)
    maker = Reapplier(evaluation_, stack, None, transaction, [], model, account)
    outcome = sequence.execute(timeline.ledger_of(stack), entries, planned, maker, new_locator)
    return Execution(outcome, maker.trees)


class Reapplier:
    """sequence.execute's Maker: the segment of the transaction being issued (its own tree and rating,
    re-rated should the span differ from the one it was priced for) and of each reapplication (the
    coverage held at its effective time with its original's change instructions, rated anew)."""

    def __init__(
        self,
        evaluation_: Evaluation,
        stack: IssuedStack,
        plan: Plan | None,
        transaction: Transaction,
        rated: list[Charge],
        model: dict[str, Any],
        account: Callable[[], Any],
    ):
        self.evaluation, self.stack, self.plan, self.transaction = evaluation_, stack, plan, transaction
        self.rated, self.model, self.account = rated, model, account
        self.catalog = evaluation.catalog(model)
        self.trees: dict[str, Element] = {locator: segment.element for locator, segment in stack.segments.items()}
        self.originals = {t.locator: t for t in stack.transactions}

    def __call__(
        self,
        entry: sequence.Entry,
        done: coverage.Effect,
        ledger: sequence.Ledger,
        reapplication_of: sequence.Entry | None,
    ) -> sequence.Made:
        if reapplication_of is None:
            return self._new(done)
        original = self.originals[reapplication_of.locator]
        segment_locator = new_locator()
        category = str(original.transactionCategory)
        base = self.trees[timeline.base_segment(category, done.start, ledger.held())]
        instructions = [instruction_of(stored) for stored in original.changeInstructions]
        tree = changes.applied(self.catalog, base, instructions, done.start, new_locator)
        reapplied = original.model_copy(
            update={"locator": entry.locator, "segments": [], "configVersion": self.transaction.configVersion}
        )
        seen = subject(self.stack, reapplied, self.account, span=done, element=tree)
        tree = evaluation.normalised(self.model, seen)[0].model_copy(update={"parentLocator": segment_locator})
        self.trees[segment_locator] = tree
        if original.transactionCategory in NOT_RATED or done.restores is not None:
            return sequence.Made(segment_locator)
        charges = self.evaluation.price(subject(self.stack, reapplied, self.account, span=done, element=tree))
        return sequence.Made(segment_locator, tuple(charges))

    def _new(self, done: coverage.Effect) -> sequence.Made:
        summary = self.transaction.segments[-1]
        planned = self.plan.tree if self.plan is not None else None
        tree = self.transaction.element or planned
        if tree is None:
            raise ValueError(f"transaction {self.transaction.locator} has no tree to issue")
        tree = tree.model_copy(update={"parentLocator": summary.locator})
        self.trees[summary.locator] = tree
        if unrated(self.transaction) or done.restores is not None:
            return sequence.Made(summary.locator)
        if (done.start, done.end) == (summary.startTime, summary.endTime):
            return sequence.Made(summary.locator, tuple(self.rated))
        charges = self.evaluation.price(subject(self.stack, self.transaction, self.account, span=done, element=tree))
        return sequence.Made(summary.locator, tuple(charges))
