"""Out of sequence, reversals, branches and rebasing (socotra-semantics.md §1.4; DECISIONS.md, "Policy
transactions and charges"). Pure: the kernel, priceable.models and the other pure transaction modules.

The local stack: the issued transactions that put coverage on the timeline (issuance, changes,
cancellations, reinstatements, renewals, reapplications), neither reversed nor reapplied, as `Entry`s
in processing order: by effective time, then creation time (equal effective times: the earlier created
first), then static locator. A reapplication keeps its original's static locator, effective and
creation times, so it keeps its place. Reversal and aggregate records are no entries.

- `plan(issued, new)`: issuing `new` is in sequence when nothing in the stack comes after it in
  processing order; otherwise it is an aggregate: the later entries are reversed (latest first), `new`
  is issued, and they are reapplied (earliest first) as new transactions keeping their static locator.
  A renewal is always in sequence (it takes effect at the last term's end).
- `reversal_plan(issued, targets)`: a reversal transaction reverses `targets` and everything after the
  earliest of them (latest first), then reapplies the entries after it that are not targets.
- `execute(ledger, issued, plan, make, new_locator, new)`: carries a plan out on a `Ledger` (the
  policy's coverage and charges) step by step and says what each step adds (`Step`s, the stack after,
  the ledger after). Issuing `new` or a reapplication needs its segment rated through the plugin:
  `make(entry, effect, ledger, reapplication_of)` does that (the domain builds the element tree of the
  coverage `ledger.held()` holds at the effective time, applies the change instructions of the
  transaction, or of the original it reapplies, and rates the segment [effect.start, effect.end)) and
  names the segment. A reapplication gets a transaction locator from `new_locator` and keeps its
  original's static locator, effective and creation times, hence its place in the order. A
  reapplication the coverage no longer allows (coverage.effect refuses it: a renewal or a change after
  a cancellation the new transaction put before it, a reinstatement of a policy no longer cancelled,
  an effective time beyond a policy end moved earlier, a renewal whose term end a new policy end
  moved) is dropped: it stays reversed. A refused `new` raises coverage.effect's error and leaves the
  given ledger untouched.
- `invalidated(pending, issuing)`: issuing one transaction invalidates every pending (unissued and not
  terminal: the caller filters by state) transaction that does not descend from it through its base
  chain: the other branches.
- `affected(plan, invalidated)`: what issuing will reverse or invalidate (GET affectedTransactions).
- `rebase(base, head, auto_rebase=)`: the base a transaction is issued on: its own when it is the head
  of the local stack, the head when `autoRebase` asks for it (the caller then rebuilds its segment on the
  head: `execute` does, through `make`), else 409 `transaction.stale_base`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Literal, Protocol

from chalicelib.core import codes
from chalicelib.core.errors import DomainError
from chalicelib.priceable.models import Charge
from chalicelib.transactions.coverage import Category, Effect, Piece, SegmentSpan, TermSpan, effect, held, terms
from chalicelib.transactions.deltas import Proration, Rated, settle

Action = Literal["reversed", "invalidated"]


@dataclass(frozen=True)
class Entry:
    """An issued (or about to be issued) transaction of the local stack. `new_end`: the new policy end a
    change sets."""

    locator: str
    static_locator: str
    category: Category
    effective: datetime
    created: datetime
    new_end: datetime | None = None

    @property
    def order(self) -> tuple[datetime, datetime, str]:
        return self.effective, self.created, self.static_locator


@dataclass(frozen=True)
class Plan:
    """`reversed` latest first, `reapplied` earliest first; in sequence when nothing is reversed."""

    reversed: tuple[Entry, ...] = ()
    reapplied: tuple[Entry, ...] = ()

    @property
    def in_sequence(self) -> bool:
        return not self.reversed


@dataclass(frozen=True)
class Affected:
    locator: str
    action: Action


@dataclass(frozen=True)
class Pending:
    """An unissued transaction that could still be issued, and the transaction it is based on."""

    locator: str
    base_locator: str | None


def plan(issued: Sequence[Entry], new: Entry) -> Plan:
    later = sorted((entry for entry in issued if entry.order > new.order), key=lambda entry: entry.order)
    return Plan(tuple(reversed(later)), tuple(later))


def reversal_plan(issued: Sequence[Entry], targets: Collection[str]) -> Plan:
    """400 `transaction.nothing_to_reverse` without targets, 409 `transaction.not_reversible` for a
    target that is not in the local stack, 409 `transaction.issuance_not_reversible` for the issuance."""
    if not targets:
        raise codes.TRANSACTION_NOTHING_TO_REVERSE("Name at least one transaction to reverse")
    stack = sorted(issued, key=lambda entry: entry.order)
    positions = {entry.locator: position for position, entry in enumerate(stack)}
    unknown = sorted(set(targets) - positions.keys())
    if unknown:
        raise codes.TRANSACTION_NOT_REVERSIBLE(
            f"Only issued transactions of the policy's stack can be reversed, not {', '.join(unknown)}"
        )
    if any(stack[positions[target]].category == "issuance" for target in targets):
        raise codes.TRANSACTION_ISSUANCE_NOT_REVERSIBLE("The issuance cannot be reversed")
    later = stack[min(positions[target] for target in targets) :]
    return Plan(tuple(reversed(later)), tuple(entry for entry in later if entry.locator not in targets))


def invalidated(pending: Sequence[Pending], issuing: str) -> list[str]:
    """The pending transactions issuing `issuing` invalidates, in the order given."""
    bases = {each.locator: each.base_locator for each in pending}

    def descends(locator: str) -> bool:
        seen: set[str] = set()
        base = bases.get(locator)
        while base is not None and base not in seen:
            if base == issuing:
                return True
            seen.add(base)
            base = bases.get(base)
        return False

    return [each.locator for each in pending if each.locator != issuing and not descends(each.locator)]


def affected(planned: Plan, invalidating: Sequence[str]) -> list[Affected]:
    """What issuing reverses (latest first), then what it invalidates."""
    return [
        *(Affected(entry.locator, "reversed") for entry in planned.reversed),
        *(Affected(locator, "invalidated") for locator in invalidating),
    ]


def rebase(base: str | None, head: str, *, auto_rebase: bool) -> str:
    if base == head:
        return head
    if auto_rebase:
        return head
    raise codes.TRANSACTION_STALE_BASE(
        f"The transaction is based on {base}, which is no longer the head of the policy ({head}); "
        "issue it with autoRebase=true or create it again"
    )


@dataclass
class Ledger:
    """One policy's issued coverage and charges, in memory: the spans of the local stack in processing
    order, every rated charge its issued transactions carry (reversed ones included) with its segment,
    and every adjustment (coverage.py, deltas.py). `term_duration`: the policy's, in `proration.basis`
    units (None: a renewal repeats the last term's length)."""

    proration: Proration
    term_duration: Decimal | None = None
    spans: list[SegmentSpan] = field(default_factory=list)
    rated: list[Rated] = field(default_factory=list)
    adjustments: list[Charge] = field(default_factory=list)

    def held(self) -> list[Piece]:
        return held(self.spans)

    def terms(self) -> list[TermSpan]:
        return terms(self.spans)

    def effect(self, entry: Entry) -> Effect:
        """What issuing `entry` now does (coverage.effect)."""
        return effect(
            entry.category,
            entry.effective,
            self.spans,
            basis=self.proration.basis,
            time_zone=self.proration.time_zone,
            new_end=entry.new_end,
            term_duration=self.term_duration,
        )

    def issue(
        self,
        transaction_locator: str,
        done: Effect,
        segment_locator: str,
        charges: Sequence[Charge],
        new_locator: Callable[[], str],
    ) -> list[Charge]:
        """Adds the segment `done` makes and its rated `charges`; answers the adjustments that brings."""
        if any(charge.reversalOfLocator is not None for charge in charges):
            raise ValueError("a segment is rated with charges that reverse none")
        if done.restores is not None and charges:
            raise ValueError("a reinstatement at the cancellation time restores charges, it rates none")
        span = done.span(segment_locator, transaction_locator)
        self.spans.append(span)
        self.rated.extend(Rated(segment_locator, span.start, span.end, charge) for charge in charges)
        return self._settle(new_locator)

    def reverse(self, transaction_locator: str, new_locator: Callable[[], str]) -> list[Charge]:
        """Takes the transaction's spans out of the stack; answers the adjustments that brings."""
        remaining = [span for span in self.spans if span.transaction_locator != transaction_locator]
        if len(remaining) == len(self.spans):
            raise ValueError(f"transaction {transaction_locator} holds no span of the stack")
        self.spans = remaining
        return self._settle(new_locator)

    def _settle(self, new_locator: Callable[[], str]) -> list[Charge]:
        settled = settle(self.rated, self.adjustments, self.spans, self.proration, new_locator)
        self.adjustments.extend(settled)
        return settled


@dataclass(frozen=True)
class Made:
    """What `make` made for a transaction being issued: its segment's locator and the charges the plugin
    rated that segment with (none for a cancellation or a reinstatement at the cancellation time)."""

    segment_locator: str
    charges: tuple[Charge, ...] = ()


class Maker(Protocol):
    def __call__(self, entry: Entry, done: Effect, ledger: Ledger, reapplication_of: Entry | None) -> Made: ...


@dataclass(frozen=True)
class Step:
    """One step of an issue. `reverse`: `entry` leaves the stack. `issue`: the new transaction. `reapply`:
    `entry` is the reapplication (its new locator, the original's static locator and creation time),
    `reapplication_of` the original. `drop`: `entry`, reversed, cannot be reapplied. `charges`: what
    the step adds (rated, then adjustments)."""

    action: Literal["reverse", "issue", "reapply", "drop"]
    entry: Entry
    charges: tuple[Charge, ...] = ()
    effect: Effect | None = None
    segment_locator: str | None = None
    reapplication_of: Entry | None = None


@dataclass(frozen=True)
class Outcome:
    steps: tuple[Step, ...]
    issued: tuple[Entry, ...]
    """The local stack afterwards, in processing order."""
    ledger: Ledger


def execute(
    ledger: Ledger,
    issued: Sequence[Entry],
    planned: Plan,
    make: Maker,
    new_locator: Callable[[], str],
    new: Entry | None = None,
) -> Outcome:
    """Carries out `planned` (with `new` issued between the reversals and the reapplications; None for a
    reversal transaction) on a copy of `ledger`. A reapplication gets a transaction locator from
    `new_locator`, as every segment and adjustment does."""
    ledger = copy.deepcopy(ledger)
    stack = {entry.locator: entry for entry in issued}
    steps: list[Step] = []
    for entry in planned.reversed:
        steps.append(Step("reverse", entry, tuple(ledger.reverse(entry.locator, new_locator))))
        del stack[entry.locator]
    if new is not None:
        steps.append(_issue(ledger, new, ledger.effect(new), make, new_locator, None))
        stack[new.locator] = steps[-1].entry
    for original in planned.reapplied:
        try:
            done = ledger.effect(original)
        except DomainError:
            steps.append(Step("drop", original))
            continue
        reapplication = replace(original, locator=new_locator())
        steps.append(_issue(ledger, reapplication, done, make, new_locator, original))
        stack[reapplication.locator] = reapplication
    return Outcome(tuple(steps), tuple(sorted(stack.values(), key=lambda entry: entry.order)), ledger)


def _issue(
    ledger: Ledger, entry: Entry, done: Effect, make: Maker, new_locator: Callable[[], str], original: Entry | None
) -> Step:
    made = make(entry, done, ledger, original)
    adjustments = ledger.issue(entry.locator, done, made.segment_locator, made.charges, new_locator)
    return Step(
        "issue" if original is None else "reapply",
        entry,
        (*made.charges, *adjustments),
        done,
        made.segment_locator,
        original,
    )
