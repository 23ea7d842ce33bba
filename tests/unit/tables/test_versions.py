"""Choosing the version in force by time and jurisdiction."""

from __future__ import annotations

from datetime import datetime, timezone

from chalicelib.tables.models import SelectionTimes, VersionEntry
from chalicelib.tables.versions import bootstrap_start, in_force, selection_instant


def at(day: int, month: int = 1) -> datetime:
    return datetime(2026, month, day, tzinfo=timezone.utc)


def version(name: str, starts: datetime, created: datetime | None = None, *jurisdictions: str) -> VersionEntry:
    return VersionEntry(
        name=name,
        version=f"V{name}",
        effectiveFrom=starts,
        createdAt=created or starts,
        createdBy="u",
        jurisdictions=jurisdictions,
        schemaDigest="s",
    )


def test_the_latest_version_begun_is_in_force_and_an_earlier_moment_keeps_the_earlier_one():
    entries = [version("a", at(1)), version("b", at(10)), version("c", at(20))]

    assert [in_force(entries, moment, None).name for moment in (at(1), at(9), at(10), at(25))] == ["a", "a", "b", "c"]


def test_before_any_version_began_the_first_one_is_in_force():
    entries = [version("late", at(20)), version("early", at(10))]

    assert in_force(entries, at(1), None).name == "early"


def test_of_two_versions_beginning_together_the_later_upload_wins_then_the_later_listed():
    entries = [version("first", at(1), at(5)), version("second", at(1), at(3)), version("third", at(1), at(5))]

    assert in_force(entries, at(2), None).name == "third"
    assert in_force(entries[:2], at(2), None).name == "first"


def test_a_jurisdiction_prefers_its_own_versions_and_falls_back_to_the_general_ones():
    entries = [version("general", at(1)), version("ca", at(10), None, "CA", "NV"), version("ny", at(1), None, "NY")]

    assert in_force(entries, at(12), "CA").name == "ca"
    assert in_force(entries, at(5), "CA").name == "general"  # CA's own version has not begun yet
    assert in_force(entries, at(12), "TX").name == "general"
    assert in_force(entries, at(12), None).name == "general"
    assert in_force(entries[1:], at(12), None) is None  # only jurisdiction versions: none for "no jurisdiction"
    assert in_force(entries[1:], at(5), "CA").name == "ca"  # before it began, the first of its own


def test_every_jurisdiction_reads_the_versions_of_one_instance_whatever_they_list():
    entries = [version("v1", at(1), None, "CA"), version("v2", at(10), None, "CA")]

    assert in_force(entries, at(11), None, every_jurisdiction=True).name == "v2"
    assert in_force(entries, at(5), "NY", every_jurisdiction=True).name == "v1"


def test_the_selection_moment_follows_the_tables_time_basis():
    now = at(15)
    times = SelectionTimes(policyStartTime=at(1), termStartTime=at(2))

    assert selection_instant("termStartTime", times, now) == at(2)
    assert selection_instant("policyStartTime", times, now) == at(1)
    assert selection_instant("transactionEffectiveTime", times, now) == now  # the caller did not know it
    assert selection_instant("currentTime", times, now) == now
    assert selection_instant("termStartTime", at(3), now) == at(3)  # a moment given is used as given
    assert selection_instant("termStartTime", datetime(2026, 1, 3), now) == at(3)  # naive is UTC
    assert selection_instant("termStartTime", None, now) == now


def test_a_bootstrap_instance_begins_with_the_earliest_group_naming_it():
    groups = {
        "g2021": {"selectionStartTime": "2021-01-01T00:00:00Z", "resourceNames": ["Rates01", "Other"]},
        "g2020": {"selectionStartTime": "2020-06-01T00:00:00Z", "resourceNames": ["Rates01"]},
    }

    assert bootstrap_start("Rates01", groups) == datetime(2020, 6, 1, tzinfo=timezone.utc)
    assert bootstrap_start("Other", groups) == datetime(2021, 1, 1, tzinfo=timezone.utc)
    assert bootstrap_start("Unlisted", groups) is None
