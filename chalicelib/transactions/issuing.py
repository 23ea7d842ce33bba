"""What issuing a transaction writes, worked out from the policy's stack. Pure.

The policy root keeps the effective time of the cancellation its coverage ends with, if any (its
statuses `cancelled` and `cancelPending` follow from it).

An issued transaction keeps no tree of its own: its segments hold them.

In sequence (the transaction is based on the policy's latest issued transaction and takes effect no
earlier than what the local stack holds after it): the transaction becomes `issued`; it adds its
segment (coverage or gap; a reinstatement's keeps the tree the cancellation removed), a renewal its
term; a change with a new policy end moves its term's end; the policy root follows: its end (the last
term's), its latest issued transaction, segment and term, and its branch heads (those of the unissued
transactions built on the issued one, else the issued one). Every other unissued transaction of the
policy that is not based on the issued one (a parallel branch) is `invalidated`.
policies.service.issue_transaction writes all of it in the caller's unit of work, the root on condition
that it is still at the version the stack was read at (an aggregate too large for one write has its
added transactions and their segments written first, invisible until that write commits).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from chalicelib.core import durations
from chalicelib.policies.models import (
    LIVE_UNISSUED,
    IssuedStack,
    Policy,
    Segment,
    SegmentSummary,
    Term,
    Transaction,
    TransactionCategory,
    TransactionIssue,
    TransactionState,
    branch_heads,
)
from chalicelib.priceable.models import Element, SegmentType
from chalicelib.transactions import coverage, sequence, timeline
from chalicelib.transactions.models import ProducersInstruction, instruction_of
from chalicelib.transactions.timeline import Plan


def in_sequence(stack: IssuedStack, transaction: Transaction, plan: Plan, now: datetime) -> TransactionIssue:
    """The issue of `transaction` (advanced to `issued` already, its charges priced on `stack`)."""
    summary = transaction.segments[-1]
    policy = stack.policy
    segment = Segment(
        locator=summary.locator,
        transactionLocator=transaction.locator,
        policyLocator=policy.locator,
        termLocator=transaction.termLocator,
        segmentType=summary.segmentType,
        startTime=summary.startTime,
        endTime=summary.endTime,
        duration=durations.duration(summary.startTime, summary.endTime, policy.durationBasis, policy.timezone),
        element=_rooted(transaction.element or plan.tree, summary.locator),
        basedOn=_based_on(plan),
        producerInfo=None,
    )
    spans = plan.spans_after(summary.locator, transaction.locator)
    terms_after = coverage.terms(spans)
    new_terms, changed_terms = _terms(stack, transaction, terms_after)
    every_term = {t.number: t for t in [*stack.terms, *new_terms, *changed_terms]}
    last = every_term[terms_after[-1].number]
    cancelled = coverage.cancellation(coverage.held(spans))
    issued = transaction.model_copy(update={"element": None})
    others = invalidated(stack, transaction, now)
    root = _producers(policy, transaction).model_copy(
        update={
            "cancellationTime": cancelled.start if cancelled else None,
            "endTime": terms_after[-1].end,
            "issuedTransactionLocator": transaction.locator,
            "latestSegmentLocator": segment.locator,
            "latestTermLocator": last.locator,
            "branchHeadTransactionLocators": _branch_heads(stack, transaction.locator, issued, *others),
            "configVersion": transaction.configVersion,
            "updatedAt": now,
            "updatedBy": transaction.updatedBy or policy.updatedBy,
        }
    )
    return TransactionIssue(
        transaction=issued,
        segments=[segment],
        terms=new_terms,
        changed_terms=changed_terms,
        removed_terms=_removed(stack, terms_after),
        invalidated=others,
        policy=root,
    )


def invalidated(stack: IssuedStack, issued: Transaction, now: datetime) -> list[Transaction]:
    """The unissued transactions of the policy on other branches than `issued`'s, invalidated."""
    pending = [t for t in stack.transactions if t.transactionState in LIVE_UNISSUED]
    doomed = set(
        sequence.invalidated([sequence.Pending(t.locator, t.baseTransactionLocator) for t in pending], issued.locator)
    )
    return [
        t.model_copy(update={"transactionState": TransactionState.INVALIDATED, "updatedAt": now})
        for t in pending
        if t.locator in doomed
    ]


def _branch_heads(stack: IssuedStack, head: str, *written: Transaction) -> list[str]:
    """The policy's branch heads once an issue wrote the transactions `written` (rewritten or added),
    `head` its latest issued transaction: the branches built on what it issued, nothing else being live."""
    rewritten = {t.locator: t for t in written}
    after = [rewritten.pop(t.locator, t) for t in stack.transactions]
    return branch_heads([*after, *rewritten.values()], head)


def aggregate(
    stack: IssuedStack,
    transaction: Transaction,
    outcome: sequence.Outcome,
    trees: Mapping[str, Element],
    now: datetime,
    new_locator: Callable[[], str],
) -> TransactionIssue:
    """The issue of `transaction` out of sequence, as sequence.execute carried it out (`trees`: the
    trees of the segments it made): an `aggregate` record naming its parts in order; a `reversal`
    record per transaction it reversed (holding that step's adjustments; the original becomes
    `reversed`); the transaction itself; a reapplication per transaction reapplied (a new transaction
    keeping its original's static locator, effective and creation times and instructions, with its own
    segment and charges). The policy root follows the coverage held afterwards."""
    head = new_locator()
    done = _carried_out(stack, transaction, outcome, trees, now, new_locator, head)
    record = Transaction(
        locator=head,
        staticLocator=head,
        policyLocator=stack.policy.locator,
        termLocator=done.issued.termLocator,
        effectiveTime=done.issued.effectiveTime,
        transactionState=TransactionState.ISSUED,
        transactionCategory=TransactionCategory.AGGREGATE,
        transactionType=TransactionCategory.AGGREGATE.value,
        createdAt=now,
        createdBy=done.issued.updatedBy or done.issued.createdBy,
        issuedTime=now,
        acceptedTime=now,
        baseTransactionLocator=stack.policy.issuedTransactionLocator,
        aggregatedTransactionLocators=[part.locator for part in done.parts],
        reversedTransactionLocators=[t.locator for t in done.reversed],
        inForceSegmentLocator=outcome.ledger.spans[-1].locator,
        configVersion=done.issued.configVersion,
        updatedAt=now,
        updatedBy=done.issued.updatedBy,
    )
    others = [t for t in done.parts if t.locator != done.issued.locator]
    doomed = invalidated(stack, done.issued, now)
    heads = _branch_heads(stack, head, done.issued, *done.reversed, *doomed, record, *others)
    return TransactionIssue(
        transaction=done.issued,
        segments=done.segments,
        terms=done.new_terms,
        changed_terms=done.changed_terms,
        removed_terms=_removed(stack, done.terms_after),
        changed=done.reversed,
        invalidated=doomed,
        added=[record, *others],
        policy=done.root(head, heads),
    )


def reversal(
    stack: IssuedStack,
    transaction: Transaction,
    outcome: sequence.Outcome,
    trees: Mapping[str, Element],
    now: datetime,
    new_locator: Callable[[], str],
) -> TransactionIssue:
    """The issue of a reversal transaction, as sequence.execute carried out its reversal plan: the
    transactions it reverses become `reversed` and it holds their adjustments; the later ones it does
    not target are reapplied (new transactions, as in an aggregate). The policy root follows."""
    done = _carried_out(stack, transaction, outcome, trees, now, new_locator, None)
    issued = transaction.model_copy(
        update={
            "charges": [charge for step in outcome.steps if step.action == "reverse" for charge in step.charges],
            "element": None,
            "inForceSegmentLocator": done.given_back,
            "aggregatedTransactionLocators": [part.locator for part in done.parts],
        }
    )
    doomed = invalidated(stack, issued, now)
    heads = _branch_heads(stack, issued.locator, issued, *done.reversed, *doomed, *done.parts)
    return TransactionIssue(
        transaction=issued,
        segments=done.segments,
        terms=done.new_terms,
        changed_terms=done.changed_terms,
        removed_terms=_removed(stack, done.terms_after),
        changed=done.reversed,
        invalidated=doomed,
        added=done.parts,
        policy=done.root(issued.locator, heads),
    )


class _CarriedOut:
    """The records an executed plan makes (shared by aggregates and reversals)."""

    def __init__(self, stack: IssuedStack, transaction: Transaction, outcome: sequence.Outcome, now: datetime) -> None:
        self.stack, self.transaction, self.outcome, self.now = stack, transaction, outcome, now
        self.issued = transaction
        self.parts: list[Transaction] = []
        self.reversed: list[Transaction] = []
        self.segments: list[Segment] = []
        self.unreversed = timeline.issued_spans(stack)
        """The issued spans, in processing order, that the reversals carried out so far leave."""
        self.given_back: str | None = None
        """The segment in force last after the last reversal carried out (the last span left)."""
        self.terms_after = outcome.ledger.terms()
        self.new_terms, self.changed_terms = _terms(stack, transaction, self.terms_after)
        self.numbers = {term.number: term for term in [*stack.terms, *self.new_terms, *self.changed_terms]}

    def root(self, head: str, branch_heads: list[str]) -> Policy:
        """The policy root after the issue. Its latest segment is that of the last span in processing order,
        which is the issuing order of the local stack (sequence.py): the segment a snapshot shows at the
        policy's last moment, a reinstatement's own where it gives back what a cancellation removed (not
        the restored coverage `held` names)."""
        policy = self.stack.policy
        cancelled = coverage.cancellation(self.outcome.ledger.held())
        return _producers(policy, self.issued).model_copy(
            update={
                "cancellationTime": cancelled.start if cancelled else None,
                "endTime": self.terms_after[-1].end,
                "issuedTransactionLocator": head,
                "latestSegmentLocator": self.outcome.ledger.spans[-1].locator,
                "latestTermLocator": self.numbers[self.terms_after[-1].number].locator,
                "branchHeadTransactionLocators": branch_heads,
                "configVersion": self.issued.configVersion,
                "updatedAt": self.now,
                "updatedBy": self.issued.updatedBy or policy.updatedBy,
            }
        )


def _carried_out(
    stack: IssuedStack,
    transaction: Transaction,
    outcome: sequence.Outcome,
    trees: Mapping[str, Element],
    now: datetime,
    new_locator: Callable[[], str],
    aggregate_locator: str | None,
) -> _CarriedOut:
    """The records of each step: with `aggregate_locator`, a reversal record per reversed transaction."""
    done = _CarriedOut(stack, transaction, outcome, now)
    by_locator = {t.locator: t for t in stack.transactions}
    policy = stack.policy
    for step in outcome.steps:
        if step.action == "reverse":
            original = by_locator[step.entry.locator]
            done.reversed.append(
                original.model_copy(update={"transactionState": TransactionState.REVERSED, "updatedAt": now})
            )
            done.unreversed = [span for span in done.unreversed if span.transaction_locator != original.locator]
            done.given_back = done.unreversed[-1].locator
            if aggregate_locator is None:
                continue
            locator = new_locator()
            done.parts.append(
                Transaction(
                    locator=locator,
                    staticLocator=locator,
                    policyLocator=policy.locator,
                    termLocator=original.termLocator,
                    effectiveTime=original.effectiveTime,
                    transactionState=TransactionState.ISSUED,
                    transactionCategory=TransactionCategory.REVERSAL,
                    transactionType=TransactionCategory.REVERSAL.value,
                    createdAt=now,
                    createdBy=transaction.updatedBy or transaction.createdBy,
                    issuedTime=now,
                    acceptedTime=now,
                    baseTransactionLocator=policy.issuedTransactionLocator,
                    aggregateTransactionLocator=aggregate_locator,
                    charges=list(step.charges),
                    reversedTransactionLocators=[original.locator],
                    inForceSegmentLocator=done.given_back,
                    configVersion=transaction.configVersion,
                    updatedAt=now,
                    updatedBy=transaction.updatedBy,
                )
            )
        elif step.action in ("issue", "reapply") and step.effect is not None and step.segment_locator is not None:
            term = done.numbers[step.effect.term.number]
            segment = _segment(stack, step, term.locator, trees[step.segment_locator])
            done.segments.append(segment)
            summary = SegmentSummary.of(segment, restores=step.effect.restores)
            if step.action == "issue":
                done.issued = transaction.model_copy(
                    update={
                        "segments": [summary],
                        "charges": list(step.charges),
                        "aggregateTransactionLocator": aggregate_locator,
                        "element": None,
                    }
                )
                done.parts.append(done.issued)
            elif step.reapplication_of is not None:
                original = by_locator[step.reapplication_of.locator]
                done.parts.append(
                    original.model_copy(
                        update={
                            "locator": step.entry.locator,
                            "termLocator": term.locator,
                            "segments": [summary],
                            "charges": list(step.charges),
                            "issuedTime": now,
                            "acceptedTime": now,
                            "reapplicationOfLocator": original.locator,
                            "aggregateTransactionLocator": aggregate_locator,
                            "baseTransactionLocator": transaction.locator,
                            "transactionState": TransactionState.ISSUED,
                            "element": None,
                            "flags": [],
                            "updatedAt": now,
                            "updatedBy": transaction.updatedBy,
                            "version": 1,
                        }
                    )
                )
    return done


def _segment(stack: IssuedStack, step: sequence.Step, term_locator: str, tree: Element) -> Segment:
    assert step.effect is not None and step.segment_locator is not None
    policy = stack.policy
    done = step.effect
    return Segment(
        locator=step.segment_locator,
        transactionLocator=step.entry.locator,
        policyLocator=policy.locator,
        termLocator=term_locator,
        segmentType=SegmentType.GAP if done.gap else SegmentType.COVERAGE,
        startTime=done.start,
        endTime=done.end,
        duration=durations.duration(done.start, done.end, policy.durationBasis, policy.timezone),
        element=_rooted(tree, step.segment_locator),
    )


def _terms(
    stack: IssuedStack, transaction: Transaction, after: list[coverage.TermSpan]
) -> tuple[list[Term], list[Term]]:
    """The terms the issue adds (a renewal's) and those whose span it changes (a new policy end)."""
    known: Mapping[int, Term] = {term.number: term for term in stack.terms}
    added, changed = [], []
    for span in after:
        term = known.get(span.number)
        if term is None:
            previous = known.get(span.number - 1)
            added.append(
                Term(
                    locator=transaction.termLocator,
                    staticLocator=transaction.termLocator,
                    policyLocator=stack.policy.locator,
                    number=span.number,
                    startTime=span.start,
                    endTime=span.end,
                    previousTermLocator=previous.locator if previous else None,
                )
            )
        elif (term.startTime, term.endTime) != (span.start, span.end):
            changed.append(term.model_copy(update={"startTime": span.start, "endTime": span.end}))
    return added, changed


def _removed(stack: IssuedStack, after: list[coverage.TermSpan]) -> list[Term]:
    """The terms no coverage is left in: a reversed renewal's, or one a reapplied renewal that no longer
    fits left behind. A later renewal adds the term again, under a new locator."""
    kept = {span.number for span in after}
    return [term for term in stack.terms if term.number not in kept]


def _producers(policy: Policy, transaction: Transaction) -> Policy:
    """The policy with the producer codes the transaction's `producers` instructions set."""
    for stored in transaction.changeInstructions:
        instruction = instruction_of(stored)
        if not isinstance(instruction, ProducersInstruction):
            continue
        if instruction.clearProducerCode:
            policy = policy.model_copy(update={"producerCode": None})
        if instruction.setProducerCode is not None:
            policy = policy.model_copy(update={"producerCode": instruction.setProducerCode})
        if instruction.revertProducerCodeOfRecord:
            policy = policy.model_copy(update={"producerCodeOfRecord": None})
        if instruction.setProducerCodeOfRecord is not None:
            policy = policy.model_copy(update={"producerCodeOfRecord": instruction.setProducerCodeOfRecord})
    return policy


def _based_on(plan: Plan) -> str | None:
    """The segment the new one replaces from its start (the piece holding the effective time)."""
    at = coverage.piece_at(coverage.held(plan.spans), plan.effect.start)
    return at.segment_locator if at is not None else None


def _rooted(tree: Element, segment_locator: str) -> Element:
    return tree.model_copy(update={"parentLocator": segment_locator})
