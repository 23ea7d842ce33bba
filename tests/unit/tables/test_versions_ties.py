"""Version selection where versions tie, and selection moments given with offsets or odd bases."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from chalicelib.tables.models import SelectionTimes, VersionEntry
from chalicelib.tables.versions import bootstrap_start, in_force, selection_instant

TOKYO = timezone(timedelta(hours=9))


def at(day: int) -> datetime:
    return datetime(2026, 1, day, tzinfo=timezone.utc)


def version(name: str, starts: datetime, created: datetime, *jurisdictions: str) -> VersionEntry:
    return VersionEntry(
        name=name,
        version=f"V{name}",
        effectiveFrom=starts,
        createdAt=created,
        createdBy="u",
        jurisdictions=jurisdictions,
        schemaDigest="s",
    )


def test_before_any_version_began_the_later_upload_of_those_starting_first_wins():
    entries = [
        version("uploaded-last", at(10), at(9)),
        version("uploaded-first", at(10), at(2)),
        version("starts-later", at(20), at(1)),
    ]

    assert in_force(entries, at(1)).name == "uploaded-last"
    assert in_force(list(reversed(entries)), at(1)).name == "uploaded-last"


def test_before_any_version_began_the_later_listed_of_identical_uploads_wins():
    entries = [version("first", at(10), at(2)), version("second", at(10), at(2)), version("late", at(20), at(1))]

    assert in_force(entries, at(1)).name == "second"
    assert in_force(entries[::-1], at(1)).name == "first"


def test_before_any_version_began_a_jurisdictions_own_first_versions_come_before_the_general_ones():
    entries = [
        version("general", at(8), at(9)),
        version("ca-b", at(10), at(3), "CA"),
        version("ca-a", at(10), at(4), "CA"),
    ]

    assert in_force(entries, at(5), "CA").name == "ca-a"


def test_a_moment_with_an_offset_selects_at_that_same_instant():
    moment = datetime(2026, 1, 3, 9, 0, tzinfo=TOKYO)

    assert selection_instant("termStartTime", moment, at(15)) == datetime(2026, 1, 3, 0, 0, tzinfo=timezone.utc)


def test_a_basis_the_caller_has_no_time_for_selects_now():
    times = SelectionTimes(policyStartTime=at(1))

    assert selection_instant("unknownTimeBasis", times, at(15)) == at(15)
    assert selection_instant("currentTime", times, at(15)) == at(15)


def test_a_bootstrap_group_may_give_its_start_as_a_datetime():
    groups = {
        "g1": {"selectionStartTime": at(5), "resourceNames": ["Rates01"]},
        "g2": {"selectionStartTime": "2026-01-07T00:00:00Z", "resourceNames": ["Rates01"]},
        "g3": {"selectionStartTime": 20260101, "resourceNames": ["Rates01"]},
        "g4": ["not", "a", "group"],
    }

    assert bootstrap_start("Rates01", groups) == at(5)
