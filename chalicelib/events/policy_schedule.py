"""When a policy's scheduled custom events happen (CustomEventRef.schedule). Pure.

A schedule starts at its anchor (the policy's start or end, its latest term's start, its latest
segment's start), moved by `offset` (whole units per durationBasis, negative for before: `{"days":
-30}`; years first, hours last, on the wall clock of the policy's time zone), then forward to the
next start of a week (Monday), month or year when `alignment` asks for one. Without a `cadence` that
is its one event; with one, events follow every `intervalDuration` units of its durationBasis, each
counted from the first (so monthly events from Jan 31 fall on Feb 28 and Mar 31), at most `limit` of
them, and a recurring schedule stops at the policy's end (exclusive). The next event is the first at
or after now. A schedule whose events are all past is COMPLETE; one whose policy holds any status of
`suppressOnStatuses` is BLOCKED; otherwise NORMAL.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from chalicelib.core import durations
from chalicelib.core.errors import DomainError

ANCHORS = ("policyStart", "policyEnd", "termStart", "segmentStart")
MAX_OCCURRENCES = 100_000
"""A schedule is walked at most this far looking for its next event (an hourly cadence over a ten-year
policy is 87,600 events)."""


@dataclass(frozen=True)
class Anchors:
    """The moments a schedule may start from, for one policy."""

    policy_start: datetime
    policy_end: datetime
    term_start: datetime
    segment_start: datetime

    def of(self, anchor: str) -> datetime:
        return {
            "policyStart": self.policy_start,
            "policyEnd": self.policy_end,
            "termStart": self.term_start,
            "segmentStart": self.segment_start,
        }[anchor]


@dataclass(frozen=True)
class Upcoming:
    """A custom event's schedule as of now: the trigger state and, while events remain, the next one."""

    name: str
    trigger_state: str
    next_time: datetime | None


def upcoming(
    name: str, schedule: Mapping[str, Any], anchors: Anchors, zone: str, now: datetime, statuses: Collection[str]
) -> Upcoming:
    try:
        next_time = next(occurrences(schedule, anchors, zone, after=now), None)
    except (ValueError, OverflowError, DomainError):
        return Upcoming(name, "ERROR", None)  # a moment beyond the years a datetime holds
    if next_time is None:
        state = "COMPLETE"
    elif set(schedule.get("suppressOnStatuses") or ()) & set(statuses):
        state = "BLOCKED"
    else:
        state = "NORMAL"
    return Upcoming(name, state, next_time)


def occurrences(
    schedule: Mapping[str, Any], anchors: Anchors, zone: str, *, after: datetime | None = None
) -> Iterator[datetime]:
    """The schedule's events in time order (those at or after `after`, when given)."""
    first = _aligned(
        _offset(anchors.of(schedule["anchor"]), schedule.get("offset") or {}, zone), schedule.get("alignment"), zone
    )
    cadence = schedule.get("cadence") or {}
    interval = int(cadence.get("intervalDuration") or 0)
    if interval <= 0:
        if after is None or first >= after:
            yield first
        return
    basis = cadence["durationBasis"]
    limit = min(int(cadence.get("limit") or MAX_OCCURRENCES), MAX_OCCURRENCES)
    skipped = 0
    if after is not None and after > first:  # start just before `after` instead of walking from the first
        skipped = max(int(durations.duration(first, after, basis, zone) // interval) - 1, 0)
    for count in range(skipped, limit):
        moment = durations.shift(first, count * interval, basis, zone)
        if moment >= anchors.policy_end:
            return
        if after is None or moment >= after:
            yield moment


def _offset(moment: datetime, offset: Mapping[str, int], zone: str) -> datetime:
    for basis in durations.BASES:
        if offset.get(basis):
            moment = durations.shift(moment, int(offset[basis]), basis, zone)
    return moment


def _aligned(moment: datetime, alignment: str | None, zone: str) -> datetime:
    """The first start of a week, month or year at or after `moment` on the zone's wall clock."""
    if alignment not in ("weekStart", "monthStart", "yearStart"):
        return moment
    tz = zoneinfo.ZoneInfo(zone)
    local = moment.astimezone(tz).replace(tzinfo=None)
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    if alignment == "weekStart":
        start = midnight - timedelta(days=midnight.weekday())
        later = start + timedelta(days=7)
    elif alignment == "monthStart":
        start = midnight.replace(day=1)
        later = start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
    else:
        start = midnight.replace(month=1, day=1)
        later = start.replace(year=start.year + 1)
    chosen = start if start == local else later
    return chosen.replace(tzinfo=tz).astimezone(timezone.utc)
