"""Spreading a transaction's charges over its lattice frames (DECISIONS.md "Billing"). Pure: no I/O.

A `scheduled` charge is spread over the frames in proportion to `weight x coverage in the frame`, the
rounding remainder on the last frame it touches, so the parts add up to the charge to the cent. A
charge invoiced `immediate` or `next`, or of `handling: flat`, falls whole on the first frame. A charge
whose coverage touches no frame (a reversal of coverage before the lattice) falls on the first frame
too: every charge is billed exactly once, whatever its coverage.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal

from chalicelib.billing.installments.lattice import Frame, coverage_seconds
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


def spread(billables: Sequence[Billable], frames: Sequence[Frame], currency: str) -> list[dict[str, Decimal]]:
    """For each frame, in order, the amount of each charge it bills (charge locator -> amount; charges
    with a zero part left out). The parts of a charge add up to its amount exactly."""
    if not frames:
        raise ValueError("a lattice has at least one frame")
    shares: list[dict[str, Decimal]] = [{} for _ in frames]
    for billable in billables:
        weights = [frame.weight * coverage_seconds(frame, billable.coverage_start, billable.coverage_end)
                   for frame in frames] if billable.spread else []
        if not any(weight > 0 for weight in weights):
            weights = [Decimal(1)] + [Decimal(0)] * (len(frames) - 1)
        for index, part in enumerate(money.allocate(billable.amount, weights, currency)):
            if part:
                shares[index][billable.charge_locator] = part
    return shares


def normalized_weights(frames: Sequence[Frame]) -> list[Decimal]:
    """Each frame's share of the lattice, `weight x duration` over the sum (the frames' `normalizedWeight`)."""
    raw = [frame.weight * coverage_seconds(frame, frame.start, frame.end) for frame in frames]
    total = sum(raw, Decimal(0))
    return [(weight / total).quantize(Decimal("0.000001")) if total else Decimal(0) for weight in raw]


def backdated(frames: Sequence[Frame], now: datetime, *, defer_due_date: bool, due_lead_days: int) -> list[Frame]:
    """Frames whose generate time has passed are generated now; with `deferDueDate` a past due time
    moves to `due_lead_days` after now (DECISIONS.md: `defaultBackdatedInstallmentsBilling`)."""
    adjusted = []
    for frame in frames:
        if frame.generate_time < now:
            frame = replace(frame, generate_time=now)
            if defer_due_date and frame.due_time < now:
                due = now + timedelta(days=due_lead_days)
                frame = replace(frame, due_time=due, autopay_time=due)
        adjusted.append(frame)
    return adjusted
