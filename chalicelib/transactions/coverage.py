"""What a policy holds by effective time, and what issuing one more transaction does to it (DECISIONS.md,
"Policy transactions and charges"; socotra-semantics.md §1.4 and §1.5). Pure: the kernel only.

Spans and pieces
- A `SegmentSpan` is what one issued transaction put on the timeline: its segment [start, end) in term
  `term` (terms count from 0), coverage or a `gap`. A reinstatement effective at the cancellation's
  effective time gives a *restoring* span instead: `restores` names the cancellation's transaction, and
  the span [cancellation time, term end) stands for exactly what that cancellation removed.
- `held(spans)` takes the spans of the local stack in processing order: the issued transactions that
  are neither reversed nor replaced by a reapplication (issuance, changes, cancellations,
  reinstatements, renewals, reapplications where their aggregate put them; reversal and aggregate
  records themselves make no span). A span starting at T replaces everything held from T on: a segment
  that started before T is cut to [segment start, T), one starting at or after T is no longer held. A
  restoring span gives back, from its start, what was held just before the first span of the
  transaction it names. So a segment is only ever held whole, as a prefix [segment start, cut), or not
  at all, and a `Piece` is that prefix (`start` is always `segment_start`).
- `terms(spans)`: each term as the spans say: from its first span's start to the end of its last span
  (a change with a new policy end moves it; reversing that change moves it back).

What one more transaction does: `effect(category, effective, spans, ...)` -> `Effect`, checked against
the coverage held now (the spans of the local stack the transaction is applied to):
- change: a coverage segment [T, end of T's term), or [T, new_end) when it sets a new policy end
  (the term then ends there);
- cancellation: a gap segment [T, end of T's term);
- reinstatement at the cancellation's effective time: a restoring span (`restores` = the cancellation's
  transaction locator; no segment of its own to rate: its charges are the negation of the
  cancellation's); later than that: a coverage segment [T, term end) to rate, leaving the gap
  [cancellation time, T);
- renewal: effective exactly at the last term's end; a new term number + 1,
  [previous end, previous end + term duration) (default duration: the last term's, in `basis` units),
  whose first segment is the span.
Refusals, each a stable code: 400 `transaction.effective_time_outside_terms` (T before the first term
or not before the last term's end; a renewal: `transaction.renewal_effective_time` when T is not the
last term's end), 400 `transaction.policy_end_before_effective_time` (new_end <= T),
400 `transaction.policy_end_not_changeable` (a new end on another category), 409
`transaction.policy_cancelled` (a change or a cancellation effective where the policy is cancelled,
a renewal of a cancelled policy), 409 `transaction.policy_not_cancelled` (a reinstatement of a policy
that is not cancelled), 400 `transaction.reinstatement_before_cancellation`. The policy is cancelled
when its last held piece is a gap; a change or cancellation effective before that gap is allowed (it
is out of sequence: sequence.py reverses the cancellation and reapplies it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Literal

from chalicelib.core import codes, durations

Category = Literal["issuance", "change", "cancellation", "reinstatement", "renewal"]
"""The categories that put a span on the timeline (reversal and aggregate do not)."""


@dataclass(frozen=True)
class SegmentSpan:
    """One issued segment on the timeline (see the module docstring for `restores`)."""

    locator: str
    transaction_locator: str
    start: datetime
    end: datetime
    term: int
    gap: bool = False
    restores: str | None = None


@dataclass(frozen=True)
class Piece:
    """The part [start, end) of one issued segment the policy still holds; `start == segment_start`."""

    segment_locator: str
    transaction_locator: str
    start: datetime
    end: datetime
    segment_start: datetime
    segment_end: datetime
    term: int
    gap: bool

    @property
    def whole(self) -> bool:
        return self.end >= self.segment_end

    def spans(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


@dataclass(frozen=True)
class TermSpan:
    number: int
    start: datetime
    end: datetime


@dataclass(frozen=True)
class Effect:
    """What issuing a transaction puts on the timeline: the span [start, end) of its new segment (a gap
    for a cancellation; for a reinstatement at the cancellation time a restoring span with `restores`
    set and nothing to rate) in `term`: the new term of a renewal, for a change with a new policy end
    its term with that end, otherwise the term holding the effective time as it is."""

    category: Category
    start: datetime
    end: datetime
    term: TermSpan
    gap: bool = False
    restores: str | None = None

    def span(self, segment_locator: str, transaction_locator: str) -> SegmentSpan:
        return SegmentSpan(
            segment_locator, transaction_locator, self.start, self.end, self.term.number, self.gap, self.restores
        )


def held(spans: Sequence[SegmentSpan]) -> list[Piece]:
    """The pieces held after issuing `spans` in order, by start. ValueError for spans no stack gives: a
    restoring span naming a transaction not issued before it, or restoring part of a segment whose
    start is no longer held."""
    holding: dict[str, tuple[SegmentSpan, datetime]] = {}
    before: dict[str, dict[str, tuple[SegmentSpan, datetime]]] = {}
    for span in spans:
        if span.transaction_locator not in before:
            before[span.transaction_locator] = dict(holding)
        _cut(holding, span.start)
        if span.restores is None:
            holding[span.locator] = (span, span.end)
        else:
            _restore(holding, before, span)
    pieces = [
        Piece(s.locator, s.transaction_locator, s.start, end, s.start, s.end, s.term, s.gap)
        for s, end in holding.values()
    ]
    return sorted(pieces, key=lambda piece: piece.start)


def _cut(holding: dict[str, tuple[SegmentSpan, datetime]], at: datetime) -> None:
    for locator, (span, end) in list(holding.items()):
        if span.start >= at:
            del holding[locator]
        elif end > at:
            holding[locator] = (span, at)


def _restore(
    holding: dict[str, tuple[SegmentSpan, datetime]],
    before: dict[str, dict[str, tuple[SegmentSpan, datetime]]],
    span: SegmentSpan,
) -> None:
    if span.restores not in before or span.restores == span.transaction_locator:
        raise ValueError(f"span {span.locator} restores {span.restores}, which was not issued before it")
    for locator, (restored, end) in before[span.restores].items():
        if end <= span.start:
            continue
        current = holding.get(locator)
        if restored.start < span.start and (current is None or current[1] != span.start):
            raise ValueError(f"span {span.locator} would restore segment {locator} without its start")
        holding[locator] = (restored, end)


def terms(spans: Sequence[SegmentSpan]) -> list[TermSpan]:
    """Each term the spans lie in, by number."""
    starts: dict[int, datetime] = {}
    ends: dict[int, datetime] = {}
    for span in spans:
        starts[span.term] = min(starts.get(span.term, span.start), span.start)
        ends[span.term] = span.end
    return [TermSpan(number, starts[number], ends[number]) for number in sorted(starts)]


def piece_at(pieces: Sequence[Piece], moment: datetime) -> Piece | None:
    """The piece holding `moment`, None outside every piece."""
    return next((piece for piece in pieces if piece.spans(moment)), None)


def cancellation(pieces: Sequence[Piece]) -> Piece | None:
    """The gap that cancels the policy: its last piece when that is a gap, else None."""
    return pieces[-1] if pieces and pieces[-1].gap else None


def effect(
    category: Category,
    effective: datetime,
    spans: Sequence[SegmentSpan],
    *,
    basis: str,
    time_zone: str,
    new_end: datetime | None = None,
    term_duration: Decimal | None = None,
) -> Effect:
    """What issuing a transaction of `category` effective at `effective` does to the coverage `spans`
    hold (see the module docstring). `basis` and `time_zone` are the policy's; `term_duration` (in
    `basis` units) sizes a renewal's term."""
    known = terms(spans)
    if not known:
        raise ValueError("a policy has at least its first term")
    if new_end is not None and category != "change":
        raise codes.TRANSACTION_POLICY_END_NOT_CHANGEABLE(f"A {category} cannot set a new policy end")
    pieces = held(spans)
    cancelled = cancellation(pieces)
    if category == "renewal":
        return _renewal(effective, known[-1], cancelled, basis, time_zone, term_duration)
    term = _term_of(effective, known)
    if category == "reinstatement":
        return _reinstatement(effective, term, cancelled)
    if category == "issuance":
        raise ValueError("a policy is issued once, from its quote")
    at = piece_at(pieces, effective)
    if at is not None and at.gap:
        raise codes.TRANSACTION_POLICY_CANCELLED(
            f"The policy is cancelled from {at.start.isoformat()}: no {category} can take effect "
            f"at {effective.isoformat()}"
        )
    if category == "cancellation":
        return Effect(category, effective, term.end, term, gap=True)
    if new_end is None:
        return Effect(category, effective, term.end, term)
    if new_end <= effective:
        raise codes.TRANSACTION_POLICY_END_BEFORE_EFFECTIVE_TIME("The new policy end must be after the effective time")
    return Effect(category, effective, new_end, TermSpan(term.number, term.start, new_end))


def _term_of(effective: datetime, known: Sequence[TermSpan]) -> TermSpan:
    term = next((term for term in known if term.start <= effective < term.end), None)
    if term is None:
        raise codes.TRANSACTION_EFFECTIVE_TIME_OUTSIDE_TERMS(
            f"The effective time {effective.isoformat()} is outside the policy's terms "
            f"({known[0].start.isoformat()} to {known[-1].end.isoformat()})"
        )
    return term


def _reinstatement(effective: datetime, term: TermSpan, cancelled: Piece | None) -> Effect:
    if cancelled is None:
        raise codes.TRANSACTION_POLICY_NOT_CANCELLED("The policy is not cancelled")
    if effective < cancelled.start:
        raise codes.TRANSACTION_REINSTATEMENT_BEFORE_CANCELLATION(
            f"A reinstatement cannot take effect before the cancellation ({cancelled.start.isoformat()})"
        )
    if effective == cancelled.start:
        return Effect("reinstatement", effective, cancelled.end, term, restores=cancelled.transaction_locator)
    return Effect("reinstatement", effective, term.end, term)


def _renewal(
    effective: datetime,
    last: TermSpan,
    cancelled: Piece | None,
    basis: str,
    time_zone: str,
    term_duration: Decimal | None,
) -> Effect:
    if effective != last.end:
        raise codes.TRANSACTION_RENEWAL_EFFECTIVE_TIME(
            f"A renewal takes effect at the end of the last term ({last.end.isoformat()})"
        )
    if cancelled is not None:
        raise codes.TRANSACTION_POLICY_CANCELLED("A cancelled policy cannot be renewed")
    length = term_duration if term_duration is not None else durations.duration(last.start, last.end, basis, time_zone)
    end = durations.add(last.end, length, basis, time_zone)
    return Effect("renewal", last.end, end, TermSpan(last.number + 1, last.end, end))
