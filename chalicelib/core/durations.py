"""durationBasis arithmetic (DECISIONS.md, "Identifiers, time, money"): how long a span is in a unit.

- months: the whole calendar months m with start + m months <= end, counted on the wall clock of the
  record's time zone (a day of month the target month lacks becomes its last day, always counted
  from `start`: Jan 31 -> Feb 28 -> Mar 31), plus the remainder as the fraction of the next month,
  (end - (start + m)) / ((start + m + 1) - (start + m)), both differences taken on that wall clock.
  So Jun 13 -> Sep 19 is 3 + 6/30 = 3.2 months.
- years: the months of the span divided by 12 (six months are exactly half a year).
- days and weeks: local calendar days (the wall-clock difference, so midnight to midnight is whole
  across a DST change); a week is 7 of them.
- never negative: in the hour a clock repeats, a later moment may read earlier on the wall clock;
  such a span counts as no time in months, years, weeks and days.
- hours: elapsed hours.

Results are exact Decimals (context precision where a division does not end); charges round.
A span or a moment beyond the years datetime holds (1 to 9999, on the UTC or the local clock) is a
400 (`request.date_out_of_range`).
"""

from __future__ import annotations

import calendar
import zoneinfo
from datetime import MAXYEAR, MINYEAR, datetime, timedelta, timezone
from decimal import Decimal
from functools import lru_cache

from chalicelib.core import codes
from chalicelib.core.errors import DomainError

BASES = ("years", "months", "weeks", "days", "hours")
_MICROSECONDS = timedelta(microseconds=1)
_DAY = Decimal(86_400_000_000)
_HOUR = Decimal(3_600_000_000)


def duration(start: datetime, end: datetime, basis: str, time_zone: str) -> Decimal:
    """The length of [start, end) in `basis` units; ValueError when end is before start or the
    basis or time zone is unknown."""
    _check(start, end, basis)
    try:
        return _duration(start, end, basis, time_zone)
    except OverflowError:
        raise _out_of_range() from None


def _duration(start: datetime, end: datetime, basis: str, time_zone: str) -> Decimal:
    if basis == "hours":
        return _micros(end - start) / _HOUR
    if basis in ("days", "weeks"):
        days = _micros(max(_local(end, time_zone) - _local(start, time_zone), timedelta(0))) / _DAY
        return days / 7 if basis == "weeks" else days
    months = _months(start, end, time_zone)
    return months / 12 if basis == "years" else months


def add(start: datetime, count: Decimal | int, basis: str, time_zone: str) -> datetime:
    """The moment `count` units after `start` (the inverse of `duration`: a fractional count of
    months takes that fraction of the month after the whole ones). Aware UTC datetime."""
    if basis not in BASES:
        raise ValueError(f"unknown durationBasis {basis!r}")
    count = Decimal(count)
    if count < 0:
        raise ValueError("a duration cannot be negative")
    try:
        return _add(start, count, basis, time_zone)
    except OverflowError:
        raise _out_of_range() from None


def shift(moment: datetime, count: int, basis: str, time_zone: str) -> datetime:
    """`moment` moved by a whole number of units, backwards when `count` is negative, on the wall
    clock of `time_zone` as `add` counts (a day the target month lacks becomes its last day)."""
    if basis not in BASES:
        raise ValueError(f"unknown durationBasis {basis!r}")
    try:
        if basis == "hours":
            return moment.astimezone(timezone.utc) + timedelta(hours=count)
        zone, local = _zone(time_zone), _local(moment, time_zone)
        if basis in ("days", "weeks"):
            return _utc(local + timedelta(days=count * 7 if basis == "weeks" else count), zone)
        return _utc(_add_months(local, count * 12 if basis == "years" else count), zone)
    except OverflowError:
        raise _out_of_range() from None


def _add(start: datetime, count: Decimal, basis: str, time_zone: str) -> datetime:
    if basis == "hours":
        return start.astimezone(timezone.utc) + timedelta(microseconds=int(count * _HOUR))
    zone = _zone(time_zone)
    local = _local(start, time_zone)
    if basis in ("days", "weeks"):
        days = count * 7 if basis == "weeks" else count
        return _utc(local + timedelta(microseconds=int(days * _DAY)), zone)
    months = count * 12 if basis == "years" else count
    whole = int(months)
    lower, fraction = _add_months(local, whole), months - whole
    if not fraction:
        return _utc(lower, zone)
    upper = _add_months(local, whole + 1)
    return _utc(lower + timedelta(microseconds=int(fraction * _micros(upper - lower))), zone)


def _months(start: datetime, end: datetime, time_zone: str) -> Decimal:
    local_start, local_end = _local(start, time_zone), _local(end, time_zone)
    local_end = max(local_end, local_start)  # in the hour a clock repeats, a later moment may read earlier
    whole = (local_end.year - local_start.year) * 12 + local_end.month - local_start.month
    while _add_months(local_start, whole) > local_end:
        whole -= 1
    lower = _add_months(local_start, whole)
    remainder = _micros(local_end - lower)
    if not remainder:
        return Decimal(whole)
    upper = _add_months(local_start, whole + 1)
    return Decimal(whole) + remainder / _micros(upper - lower)


def _add_months(local: datetime, months: int) -> datetime:
    """Naive wall-clock `local` plus `months` calendar months (day clamped to the month's last)."""
    index = local.year * 12 + local.month - 1 + months
    year, month = divmod(index, 12)
    if not MINYEAR <= year <= MAXYEAR:
        raise OverflowError("date value out of range")
    day = min(local.day, calendar.monthrange(year, month + 1)[1])
    return local.replace(year=year, month=month + 1, day=day)


def _out_of_range() -> DomainError:
    return codes.REQUEST_DATE_OUT_OF_RANGE(f"The dates fall outside the years {MINYEAR} to {MAXYEAR}")


def _check(start: datetime, end: datetime, basis: str) -> None:
    if basis not in BASES:
        raise ValueError(f"unknown durationBasis {basis!r}")
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("durations need aware datetimes")
    if end < start:
        raise ValueError("a span cannot end before it starts")


def _local(moment: datetime, time_zone: str) -> datetime:
    """The naive wall-clock time of `moment` in `time_zone`."""
    return moment.astimezone(_zone(time_zone)).replace(tzinfo=None)


def _utc(local: datetime, zone: zoneinfo.ZoneInfo) -> datetime:
    return local.replace(tzinfo=zone).astimezone(timezone.utc)


def _micros(delta: timedelta) -> Decimal:
    return Decimal(delta // _MICROSECONDS)


@lru_cache(maxsize=64)
def _zone(name: str) -> zoneinfo.ZoneInfo:
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}") from None
