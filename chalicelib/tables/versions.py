"""Which version of a table is in force at a moment, for a jurisdiction.

Every version carries `effectiveFrom`: the upload time for a create or replace through the API, the
earliest `selectionStartTime` of the resource groups naming the instance for a bootstrap resource (the
tenant's creation time when no group names it).

Choosing among the versions of every instance of a static name, at moment `at`:

1. With a jurisdiction, the versions of instances listing it are looked at first; then (and without a
   jurisdiction, only) those of instances listing none.
2. Among those, the version with the latest `effectiveFrom` not after `at` is in force; a later upload
   wins a tie.
3. When `at` is before every version of both groups began, the first version of the first group is in
   force (so business dated before a table was uploaded still finds it).
4. Versions of instances listing only other jurisdictions are never chosen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from chalicelib.core.clock import parse_datetime
from chalicelib.tables.models import SelectionTimes, VersionEntry, latest


def in_force(
    entries: Iterable[VersionEntry], at: datetime, jurisdiction: str | None = None, *, every_jurisdiction: bool = False
) -> VersionEntry | None:
    """The version in force (rules above); `every_jurisdiction` ignores jurisdictions (the versions of
    one instance addressed by its own name). Of two versions alike, the one listed later wins."""
    listed = list(enumerate(entries))
    if every_jurisdiction:
        groups = [listed]
    else:  # without a jurisdiction the first group is empty: no version lists None
        groups = [
            [(i, e) for i, e in listed if jurisdiction in e.jurisdictions],
            [(i, e) for i, e in listed if not e.jurisdictions],
        ]
    for group in groups:
        started = [(i, e) for i, e in group if e.effectiveFrom <= at]
        if started:
            return max(started, key=lambda pair: (pair[1].effectiveFrom, pair[1].createdAt, pair[0]))[1]
    for group in groups:
        if group:
            first = min(e.effectiveFrom for _, e in group)
            return max(
                ((i, e) for i, e in group if e.effectiveFrom == first), key=lambda pair: (pair[1].createdAt, pair[0])
            )[1]
    return None


def selection_instant(basis: str, at: datetime | SelectionTimes | None, now: datetime) -> datetime:
    """The moment that selects a version: `at` itself when it is a moment; from SelectionTimes, the
    one the table's `selectionTimeBasis` names; now for `currentTime` (no moment of SelectionTimes),
    or when the caller lacks the one named (`at` None, or its field None)."""
    if isinstance(at, datetime):
        return at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)
    return getattr(at, basis, None) or now


def bootstrap_start(instance: str, resource_groups: Mapping[str, Any]) -> datetime | None:
    """The earliest selectionStartTime of the resource groups naming `instance`, or None."""
    starts = []
    for group in resource_groups.values():
        if isinstance(group, dict) and instance in (group.get("resourceNames") or []):
            started = group.get("selectionStartTime")
            if isinstance(started, str):
                starts.append(parse_datetime(started))
            elif isinstance(started, datetime):
                starts.append(started)
    return min(starts) if starts else None


def kept(entries: Sequence[VersionEntry], since: datetime) -> set[str]:
    """The versions (locators) some lookup at `since` or later may choose: in force, by the rules above,
    at `since` or at a later version's start, for any jurisdiction or none, or by its instance's own
    name; and the latest upload of every instance (what a download answers). The others are superseded."""
    moments = {since, *(max(e.effectiveFrom, since) for e in entries)}
    jurisdictions: set[str | None] = {None} | {j for e in entries for j in e.jurisdictions}
    by_instance: dict[str, list[VersionEntry]] = {}
    for entry in entries:
        by_instance.setdefault(entry.name, []).append(entry)
    chosen = {in_force(entries, moment, jurisdiction) for moment in moments for jurisdiction in jurisdictions}
    chosen |= {in_force(own, moment, every_jurisdiction=True) for own in by_instance.values() for moment in moments}
    chosen |= {latest(own) for own in by_instance.values()}
    return {entry.version for entry in chosen if entry is not None}
