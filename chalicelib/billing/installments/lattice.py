"""The installment lattice of a term: where its installments start and end, and when each is invoiced,
due and paid by autopay (DECISIONS.md "Billing"; socotra-semantics.md §4.2). Pure: no I/O.

Frames are cut at the cadence from an anchor: the term start, or the anchor the preferences name (a
day of the month, a day of the week, the nth weekday of the month, or a moment), every cut counted from
the anchor so that a month's missing day never drifts (Jan 31, Feb 28, Mar 31). When the anchor is not
the term start, the term's first frame is partial and does not count toward `maxInstallmentsPerTerm`;
past the cap, the last frame runs to the term end. `anchorMode` says which moment of an installment is
pinned to the anchor, when there is one: its start (`termStartDay`), its generate time (`generateDay`)
or its due time (`dueDay`). A transaction effective mid-term takes the frames from its effective time on, the first
one partial, with the times of its own start.

generateTime = start of the local day of (frame start - generateLeadDays days); dueTime = frame start -
dueLeadDays days, never before the generate time; autopayTime = dueTime - autopayLeadDays days; days are
local calendar days.

A frame's coverage is measured in the policy's durationBasis (core/durations.py), from the lattice's first
cut: every whole step of the cadence measures the same (a month from Jan 31: Feb 28 to Mar 31 is one), a
partial frame its fraction.
"""

from __future__ import annotations

import calendar
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from functools import lru_cache

from chalicelib.core import durations

CADENCE_MONTHS = {"monthly": 1, "quarterly": 3, "semiannually": 6, "annually": 12}
CADENCE_DAYS = {"weekly": 7, "everyOtherWeek": 14, "thirtyDays": 30}
SINGLE_FRAME = ("none", "fullPay")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WEEKS_OF_MONTH = ("first", "second", "third", "fourth", "fifth", "last")
"""A month without a fifth such weekday takes its last; `none` (the platform allows it) means the first."""


@dataclass(frozen=True)
class Schedule:
    """An installment plan with the preferences of the account, quote or policy applied."""

    cadence: str = "fullPay"
    max_installments: int | None = None
    weights: tuple[Decimal, ...] = ()
    generate_lead_days: int = 0
    due_lead_days: int = 0
    autopay_lead_days: int = 0
    anchor_mode: str = "termStartDay"
    anchor_type: str = "none"
    day_of_month: int | None = None
    day_of_week: str | None = None
    week_of_month: str | None = None
    anchor_time: datetime | None = None
    every_n_days: int | None = None
    autopay: bool = False
    """`autopayLeadDays` is set (by the plan or the preferences): the installments' invoices are autopaid."""


@dataclass(frozen=True)
class Frame:
    """One installment's span of the term; `index` counts the term's frames from 0."""

    index: int
    start: datetime
    end: datetime
    weight: Decimal
    generate_time: datetime
    due_time: datetime
    autopay_time: datetime
    measured_from: datetime
    """Where `coverage` measures the frame from: the lattice's first cut (the term start without an anchor),
    or its own start for the partial frame before an anchor."""


def term_frames(term_start: datetime, term_end: datetime, schedule: Schedule, time_zone: str) -> list[Frame]:
    """The frames of a term [term_start, term_end), in order, covering it without gap or overlap."""
    if term_end <= term_start:
        raise ValueError("a term ends after it starts")
    cuts = [cut for cut in _cuts(term_start, term_end, schedule, time_zone) if term_start < cut < term_end]
    bounds = [term_start, *cuts, term_end]
    partial_first = _anchored(schedule)
    if schedule.max_installments and cuts:
        kept = schedule.max_installments + (1 if partial_first and len(bounds) > 2 else 0)
        if len(bounds) - 1 > kept:
            bounds = [*bounds[:kept], term_end]
    origin = bounds[1] if partial_first and len(bounds) > 2 else term_start
    return [
        _frame(index, start, end, schedule, time_zone, min(start, origin))
        for index, (start, end) in enumerate(zip(bounds, bounds[1:]))
    ]


def from_effective(frames: list[Frame], effective: datetime, schedule: Schedule, time_zone: str) -> list[Frame]:
    """The frames a transaction effective at `effective` is billed over: those ending after it, the
    first one starting at it, with the generate, due and autopay times of that start (DECISIONS.md
    "Billing": a change effective in the future is not due before it applies)."""
    kept = [frame for frame in frames if frame.end > effective]
    if kept and kept[0].start < effective:
        first = kept[0]
        kept[0] = _frame(first.index, effective, first.end, schedule, time_zone, first.measured_from)
    return kept


def _frame(
    index: int, start: datetime, end: datetime, schedule: Schedule, time_zone: str, measured_from: datetime
) -> Frame:
    weight = schedule.weights[index] if index < len(schedule.weights) else Decimal(1)
    generate = _start_of_day(durations.shift(start, -schedule.generate_lead_days, "days", time_zone), time_zone)
    due = max(durations.shift(start, -schedule.due_lead_days, "days", time_zone), generate)
    autopay = durations.shift(due, -schedule.autopay_lead_days, "days", time_zone)
    return Frame(index, start, end, weight, generate, due, autopay, measured_from)


def _cuts(term_start: datetime, term_end: datetime, schedule: Schedule, time_zone: str) -> Iterator[datetime]:
    """Every cut of the cadence from the anchor, in order, until past the term end."""
    if schedule.cadence in SINGLE_FRAME:
        return
    anchor = _anchor(term_start, schedule, time_zone)
    pinned_days = {"generateDay": schedule.generate_lead_days, "dueDay": schedule.due_lead_days}
    shift_days = pinned_days.get(schedule.anchor_mode, 0) if _anchored(schedule) else 0
    step = 0 if _anchored(schedule) else 1  # without an anchor, the term start is the series' first
    while True:
        cut = durations.shift(_step(anchor, step, schedule, time_zone), shift_days, "days", time_zone)
        if cut >= term_end:
            return
        yield cut
        step += 1


def _step(anchor: datetime, count: int, schedule: Schedule, time_zone: str) -> datetime:
    if schedule.cadence in CADENCE_MONTHS:
        months = CADENCE_MONTHS[schedule.cadence] * count
        if schedule.anchor_type == "weekOfMonth":
            return _nth_weekday(durations.shift(anchor, months, "months", time_zone), schedule, time_zone)
        return durations.shift(anchor, months, "months", time_zone)
    if schedule.cadence in CADENCE_DAYS:
        return durations.shift(anchor, CADENCE_DAYS[schedule.cadence] * count, "days", time_zone)
    if schedule.cadence == "everyNDays":
        if not schedule.every_n_days or schedule.every_n_days < 1:
            raise ValueError("everyNDays needs a number of days")
        return durations.shift(anchor, schedule.every_n_days * count, "days", time_zone)
    raise ValueError(f"unknown cadence {schedule.cadence!r}")


def _anchored(schedule: Schedule) -> bool:
    """The schedule has an anchor: an anchor type with its value (a week of the month needs none: its
    weekday defaults to Monday and its week to the first). An anchor type without its value (the
    preferences allow one) is no anchor: the cadence counts from the term start, whose frames all count."""
    return (
        (schedule.anchor_type == "dayOfMonth" and bool(schedule.day_of_month))
        or (schedule.anchor_type == "dayOfWeek" and bool(schedule.day_of_week))
        or schedule.anchor_type == "weekOfMonth"
        or (schedule.anchor_type == "anchorTime" and schedule.anchor_time is not None)
    )


def _anchor(term_start: datetime, schedule: Schedule, time_zone: str) -> datetime:
    """The moment the cadence counts from: the term start, or the first anchor after it."""
    zone = zoneinfo.ZoneInfo(time_zone)
    local = term_start.astimezone(zone)
    if schedule.anchor_type == "dayOfMonth" and schedule.day_of_month:
        candidate = _day_of_month(local, schedule.day_of_month)
        if candidate <= local:
            candidate = _day_of_month(
                durations.shift(candidate, 1, "months", time_zone).astimezone(zone), schedule.day_of_month
            )
        return candidate.astimezone(timezone.utc)
    if schedule.anchor_type == "dayOfWeek" and schedule.day_of_week:
        ahead = (WEEKDAYS.index(schedule.day_of_week) - local.weekday()) % 7 or 7
        return durations.shift(term_start, ahead, "days", time_zone)
    if schedule.anchor_type == "weekOfMonth" and schedule.day_of_week and schedule.week_of_month:
        candidate = _nth_weekday(term_start, schedule, time_zone)
        if candidate <= term_start:
            candidate = _nth_weekday(durations.shift(term_start, 1, "months", time_zone), schedule, time_zone)
        return candidate
    if schedule.anchor_type == "anchorTime" and schedule.anchor_time is not None:
        return _first_after(schedule.anchor_time, term_start, schedule, time_zone)
    return term_start


def _first_after(anchor: datetime, term_start: datetime, schedule: Schedule, time_zone: str) -> datetime:
    """The first moment of `anchor`'s cadence series (which runs both ways) after the term start."""
    count = 0
    while _step(anchor, count - 1, schedule, time_zone) > term_start:
        count -= 1
    while _step(anchor, count, schedule, time_zone) <= term_start:
        count += 1
    return _step(anchor, count, schedule, time_zone)


def _day_of_month(local: datetime, day: int) -> datetime:
    """`local`'s month on `day` (its last day when the month is shorter), at `local`'s time of day."""
    last = calendar.monthrange(local.year, local.month)[1]
    return local.replace(day=min(day, last))


def _nth_weekday(moment: datetime, schedule: Schedule, time_zone: str) -> datetime:
    """The week_of_month's day_of_week of `moment`'s month (the last one for `last`), at its time of day."""
    zone = zoneinfo.ZoneInfo(time_zone)
    local = moment.astimezone(zone)
    weekday = WEEKDAYS.index(schedule.day_of_week or "monday")
    days = [
        day
        for day in range(1, calendar.monthrange(local.year, local.month)[1] + 1)
        if calendar.weekday(local.year, local.month, day) == weekday
    ]
    week = schedule.week_of_month if schedule.week_of_month in WEEKS_OF_MONTH else "first"
    day = days[-1] if week == "last" else days[min(WEEKS_OF_MONTH.index(week), len(days) - 1)]
    return local.replace(day=day).astimezone(timezone.utc)


def _start_of_day(moment: datetime, time_zone: str) -> datetime:
    zone = zoneinfo.ZoneInfo(time_zone)
    local = moment.astimezone(zone)
    return datetime(local.year, local.month, local.day, tzinfo=zone).astimezone(timezone.utc)


def coverage(frame: Frame, start: datetime, end: datetime, basis: str, time_zone: str) -> Decimal:
    """How much of [start, end) lies in the frame, in `basis` units measured from the frame's
    `measured_from` (the weight of a charge's share)."""
    low, high = max(frame.start, start), min(frame.end, end)
    if high <= low:
        return Decimal(0)
    unit, per = _COUNTED_IN.get(basis, (basis, 1))
    measured = _since(frame.measured_from, high, unit, time_zone) - _since(frame.measured_from, low, unit, time_zone)
    return max(measured, Decimal(0)) / per


_COUNTED_IN = {"years": ("months", 12), "weeks": ("days", 7)}
"""Years are months / 12 and weeks days / 7 (core/durations.py): counted in months and days, whole frames of
equal length measure exactly alike."""


@lru_cache(maxsize=4096)
def _since(origin: datetime, moment: datetime, unit: str, time_zone: str) -> Decimal:
    """The duration from a lattice's origin to one of its bounds (each bound ends one frame and starts the
    next, and the spread and the weights measure the same frames: computed once)."""
    return durations.duration(origin, moment, unit, time_zone)
