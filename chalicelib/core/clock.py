"""Time as a dependency: production reads the system clock, tests fix and move it."""

from __future__ import annotations

import copy
from datetime import date, datetime, timedelta, timezone
from typing import Protocol

# Datetimes are values (immutable), as copy.deepcopy already takes str and Decimal: a deep copy keeps them as they
# are instead of rebuilding each one through __reduce_ex__. A deep copy of a transaction or a policy (the
# priceable runner's working copy, the request's read cache) holds some 25 of them; rebuilt, they were a third of
# the copy's CPU (benchmarks/README "Issue 28 at stop 46"). Exact types only: a subclass is copied as before.
for _value_type in (datetime, date, timedelta, timezone):
    copy._deepcopy_dispatch[_value_type] = copy._deepcopy_atomic  # type: ignore[attr-defined]


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class FixedClock:
    """A clock that stands still until a test sets or advances it (time-travel scenarios)."""

    def __init__(self, at: datetime):
        self._at = _as_utc(at)

    def now(self) -> datetime:
        return self._at

    def set(self, at: datetime) -> None:
        self._at = _as_utc(at)

    def advance(self, **delta: float) -> None:
        self._at += timedelta(**delta)


def _as_utc(at: datetime) -> datetime:
    if at.tzinfo is None:
        raise ValueError("FixedClock needs an aware datetime")
    return at.astimezone(timezone.utc)


def isoformat(at: datetime) -> str:
    """ISO-8601 in UTC with a `Z`, millisecond precision: the wire format of every datetime."""
    return at.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc(moment: datetime) -> datetime:
    """The same moment in UTC; a datetime without an offset is taken as UTC."""
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def parse_datetime(text: str) -> datetime:
    """Parse an ISO-8601 datetime; a value without an offset is taken as UTC. ValueError when the text is
    not one, or names a moment with no UTC equivalent (year 1 at +05:00)."""
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    try:
        return utc(parsed)
    except OverflowError:
        raise ValueError(f"{text!r} is outside the range of datetimes") from None
