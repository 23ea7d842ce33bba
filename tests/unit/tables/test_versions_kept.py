"""Which versions the daily cleanup keeps: those some lookup at `since` or later may still choose (by
jurisdiction, without one, or by the instance's own name) and the latest upload of every instance."""

from __future__ import annotations

from datetime import datetime, timezone

from chalicelib.tables.models import VersionEntry
from chalicelib.tables.versions import kept


def at(day: int) -> datetime:
    return datetime(2026, 1, day, tzinfo=timezone.utc)


def entry(instance: str, version: str, starts: int, created: int | None = None, *jurisdictions: str) -> VersionEntry:
    return VersionEntry(
        name=instance,
        version=version,
        effectiveFrom=at(starts),
        createdAt=at(created or starts),
        createdBy="u",
        jurisdictions=jurisdictions,
        schemaDigest="s",
    )


def test_a_version_replaced_before_since_goes_and_the_ones_in_force_from_since_on_stay():
    entries = [entry("rates", "r1", 1), entry("rates", "r2", 10), entry("rates", "r3", 20)]

    assert kept(entries, at(15)) == {"r2", "r3"}
    assert kept(entries, at(10)) == {"r2", "r3"}
    assert kept(entries, at(25)) == {"r3"}
    assert kept([], at(1)) == set()


def test_a_version_only_one_jurisdiction_still_chooses_stays():
    # by name and as the latest upload, X is x2; California still gets x1
    entries = [entry("X", "x1", 1, None, "CA"), entry("X", "x2", 3, None, "NV")]

    assert kept(entries, at(5)) == {"x1", "x2"}


def test_a_version_only_a_lookup_by_the_instances_name_chooses_stays():
    # at day 8 California gets y1 and, from day 10, x2; the instance X by its name still answers x1
    entries = [entry("X", "x1", 1, None, "CA"), entry("X", "x2", 10, None, "CA"), entry("Y", "y1", 5, None, "CA")]

    assert kept(entries, at(8)) == {"x1", "x2", "y1"}


def test_the_latest_upload_stays_even_when_no_lookup_chooses_it():
    # g2 was uploaded last but begins before g1, so g1 is in force from day 20 on
    entries = [entry("G", "g1", 20, 2), entry("G", "g2", 1, 3)]

    assert kept(entries, at(25)) == {"g1", "g2"}
