"""Spreading a transaction's charges over its lattice frames (DECISIONS.md "Billing"). Pure: no I/O.

A `scheduled` charge is spread over the frames in proportion to `weight x coverage in the frame`, the
coverage measured in the policy's durationBasis (lattice.coverage: every whole month of a months-basis
policy on a monthly plan carries the same amount), the rounding remainder on the last frame it touches,
so the parts add up to the charge to the cent. A charge invoiced `immediate` or `next`, or of `handling:
flat`, falls whole on the first frame. A charge whose coverage touches no frame (a reversal of coverage
before the lattice) falls on the first frame too: every charge is billed exactly once, whatever its
coverage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal

from chalicelib.billing.installments.lattice import Frame, coverage
from chalicelib.core import money


@dataclass(frozen=True)
class Billable:
    """One charge of a transaction, with the span of coverage it pays for."""

    charge_locator: str
    amount: Decimal
    coverage_start: datetime
    coverage_end: datetime
    spread: bool
    """False for charges billed whole on the first frame (immediate, next, flat)."""


def spread(
    billables: Sequence[Billable], frames: Sequence[Frame], currency: str, *, basis: str, time_zone: str
) -> list[dict[str, Decimal]]:
    """For each frame, in order, the amount of each charge it bills (charge locator -> amount; charges
    with a zero part left out), coverage measured in `basis` on the clock of `time_zone`. The parts of a
    charge add up to its amount exactly."""
    if not frames:
        raise ValueError("a lattice has at least one frame")
    shares: list[dict[str, Decimal]] = [{} for _ in frames]
    measured: dict[tuple[datetime, datetime], list[Decimal]] = {}  # charges mostly share one span
    for billable in billables:
        span = (billable.coverage_start, billable.coverage_end)
        if billable.spread and span not in measured:
            measured[span] = [frame.weight * coverage(frame, *span, basis, time_zone) for frame in frames]
        weights = measured[span] if billable.spread else []
        if not any(weight > 0 for weight in weights):
            weights = [Decimal(1)] + [Decimal(0)] * (len(frames) - 1)
        for index, part in enumerate(money.allocate(billable.amount, weights, currency)):
            if part:
                shares[index][billable.charge_locator] = part
    return shares


def normalized_weights(frames: Sequence[Frame], *, basis: str, time_zone: str) -> list[Decimal]:
    """Each frame's share of the lattice, `weight x duration` over the sum, the duration in `basis` as
    `spread` measures it (the frames' `normalizedWeight`)."""
    raw = [frame.weight * coverage(frame, frame.start, frame.end, basis, time_zone) for frame in frames]
    total = sum(raw, Decimal(0))
    return [(weight / total).quantize(Decimal("0.000001")) if total else Decimal(0) for weight in raw]


def backdated(frames: Sequence[Frame], now: datetime, *, defer_due_date: bool, due_lead_days: int) -> list[Frame]:
    """Frames whose generate time has passed are generated now; with `deferDueDate` a past due time
    moves to `due_lead_days` after now (DECISIONS.md: `defaultBackdatedInstallmentsBilling`). Only a frame
    already past (started before now) keeps a due time before now: one that starts now or later is due
    when it is generated at the earliest, never overdue when invoiced."""
    adjusted = []
    for frame in frames:
        if frame.generate_time < now:
            frame = replace(frame, generate_time=now)
            due = frame.due_time
            if defer_due_date and due < now:
                due = now + timedelta(days=due_lead_days)
            elif frame.start >= now and due < now:
                due = now
            if due != frame.due_time:
                frame = replace(frame, due_time=due, autopay_time=due)
        adjusted.append(frame)
    return adjusted
