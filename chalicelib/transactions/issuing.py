"""What issuing a transaction writes, worked out from the policy's stack. Pure.

In sequence (the transaction is based on the policy's latest issued transaction and takes effect no
earlier than what the local stack holds after it): the transaction becomes `issued`; it adds its
segment (coverage or gap; a reinstatement's keeps the tree the cancellation removed), a renewal its
term; a change with a new policy end moves its term's end; the policy root follows: its end (the last
term's), its latest issued transaction, segment and term, and one branch head, the issued transaction.
Every other unissued transaction of the policy that is not based on the issued one (a parallel branch)
is `invalidated`. policies.service.issue_transaction writes all of it in the caller's unit of work, the
root on condition that it is still at the version the stack was read at.
"""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from chalicelib.core import durations
from chalicelib.policies.models import (
    IssuedStack,
    Policy,
    Segment,
    Term,
    Transaction,
    TransactionIssue,
    TransactionState,
)
from chalicelib.priceable.models import Element
from chalicelib.transactions import coverage
from chalicelib.transactions.models import ProducersInstruction, instruction_of
from chalicelib.transactions.timeline import LIVE_UNISSUED, Plan


def in_sequence(stack: IssuedStack, transaction: Transaction, plan: Plan, now: datetime) -> TransactionIssue:
    """The issue of `transaction` (advanced to `issued` already, its charges priced on `stack`)."""
    summary = transaction.segments[-1]
    policy = stack.policy
    segment = Segment(
        locator=summary.locator, transactionLocator=transaction.locator, policyLocator=policy.locator,
        termLocator=transaction.termLocator, segmentType=summary.segmentType, startTime=summary.startTime,
        endTime=summary.endTime,
        duration=durations.duration(summary.startTime, summary.endTime, policy.durationBasis, policy.timezone),
        element=_rooted(transaction.element or plan.tree, summary.locator),
        basedOn=_based_on(plan), producerInfo=None)
    spans = plan.spans_after(summary.locator, transaction.locator)
    terms_after = coverage.terms(spans)
    new_terms, changed_terms = _terms(stack, transaction, terms_after)
    every_term = {t.number: t for t in [*stack.terms, *new_terms, *changed_terms]}
    last = every_term[terms_after[-1].number]
    root = _producers(policy, transaction).model_copy(update={
        "endTime": terms_after[-1].end, "issuedTransactionLocator": transaction.locator,
        "latestSegmentLocator": segment.locator, "latestTermLocator": last.locator,
        "branchHeadTransactionLocators": [transaction.locator], "configVersion": transaction.configVersion,
        "updatedAt": now, "updatedBy": transaction.updatedBy or policy.updatedBy})
    return TransactionIssue(transaction=transaction, segments=[segment], terms=new_terms, changed_terms=changed_terms,
                            changed=invalidated(stack, transaction, now), policy=root)


def invalidated(stack: IssuedStack, issued: Transaction, now: datetime) -> list[Transaction]:
    """The unissued transactions of the policy on other branches than `issued`'s, invalidated."""
    by_locator = {t.locator: t for t in stack.transactions}

    def based_on_issued(transaction: Transaction) -> bool:
        seen: set[str] = set()
        current: Transaction | None = transaction
        while current is not None and current.locator not in seen:
            if current.baseTransactionLocator == issued.locator:
                return True
            seen.add(current.locator)
            current = by_locator.get(current.baseTransactionLocator or "")
        return False

    return [t.model_copy(update={"transactionState": TransactionState.INVALIDATED, "updatedAt": now})
            for t in stack.transactions
            if t.transactionState in LIVE_UNISSUED and t.locator != issued.locator and not based_on_issued(t)]


def _terms(stack: IssuedStack, transaction: Transaction,
           after: list[coverage.TermSpan]) -> tuple[list[Term], list[Term]]:
    """The terms the issue adds (a renewal's) and those whose span it changes (a new policy end)."""
    known: Mapping[int, Term] = {term.number: term for term in stack.terms}
    added, changed = [], []
    for span in after:
        term = known.get(span.number)
        if term is None:
            previous = known.get(span.number - 1)
            added.append(Term(locator=transaction.termLocator, staticLocator=transaction.termLocator,
                              policyLocator=stack.policy.locator, number=span.number, startTime=span.start,
                              endTime=span.end, previousTermLocator=previous.locator if previous else None))
        elif (term.startTime, term.endTime) != (span.start, span.end):
            changed.append(term.model_copy(update={"startTime": span.start, "endTime": span.end}))
    return added, changed


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
