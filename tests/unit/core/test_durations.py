"""durationBasis arithmetic as DECISIONS.md fixes it: calendar months on the local wall clock with the
remainder as a fraction of the next month, years as months / 12, local calendar days, elapsed hours."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest

from chalicelib.core.durations import add, duration

UTC = timezone.utc
NY = "America/New_York"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.parametrize(
    "start, end, basis, expected",
    [
        ("2026-01-15T05:00:00Z", "2027-01-15T05:00:00Z", "months", Decimal(12)),
        ("2026-01-15T05:00:00Z", "2027-01-15T05:00:00Z", "years", Decimal(1)),
        ("2026-01-15T05:00:00Z", "2026-07-15T04:00:00Z", "years", Decimal("0.5")),  # local midnight both ends
        ("2026-06-13T04:00:00Z", "2026-09-19T04:00:00Z", "months", Decimal("3.2")),  # 3 months + 6/30
        ("2026-01-31T05:00:00Z", "2026-02-28T05:00:00Z", "months", Decimal(1)),  # clamped to February's end
        ("2026-01-31T05:00:00Z", "2026-03-31T04:00:00Z", "months", Decimal(2)),  # counted from the start day
        ("2026-01-15T05:00:00Z", "2026-01-15T05:00:00Z", "months", Decimal(0)),
        ("2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z", "days", Decimal(1)),  # 23 hours, one local day
        ("2026-03-01T05:00:00Z", "2026-03-15T04:00:00Z", "weeks", Decimal(2)),
        ("2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z", "hours", Decimal(23)),
        ("2026-01-01T05:00:00Z", "2026-01-01T17:00:00Z", "days", Decimal("0.5")),
    ],
)
def test_durations_in_each_basis(start, end, basis, expected):
    assert duration(at(start), at(end), basis, NY) == expected


def test_a_month_remainder_is_a_fraction_of_the_month_that_follows_the_whole_ones():
    # Jan 15 + 1 month = Feb 15; Feb 15 -> Mar 15 has 28 days, 14 of them used
    assert duration(at("2026-01-15T00:00:00Z"), at("2026-03-01T00:00:00Z"), "months", "UTC") == Decimal("1.5")


def test_the_wall_clock_of_the_time_zone_counts():
    start, end = at("2026-02-28T20:00:00Z"), at("2026-03-28T20:00:00Z")
    assert duration(start, end, "months", "UTC") == 1
    # New York moved its clocks on March 8: local 15:00 -> 16:00 is a month plus one hour of the next
    # month (Mar 28 -> Apr 28, 31 days)
    assert duration(start, end, "months", NY) == 1 + Decimal(1) / Decimal(31 * 24)


@pytest.mark.parametrize(
    "count, basis, expected",
    [
        (12, "months", "2027-01-15T05:00:00+00:00"),
        (1, "years", "2027-01-15T05:00:00+00:00"),
        (Decimal("0.5"), "years", "2026-07-15T04:00:00+00:00"),
        (7, "days", "2026-01-22T05:00:00+00:00"),
        (1, "weeks", "2026-01-22T05:00:00+00:00"),
        (36, "hours", "2026-01-16T17:00:00+00:00"),
    ],
)
def test_add_is_the_inverse_of_duration(count, basis, expected):
    start = at("2026-01-15T05:00:00Z")
    end = add(start, count, basis, NY)
    assert end.isoformat() == expected
    assert duration(start, end, basis, NY) == Decimal(count)


@pytest.mark.parametrize(
    "start, end, basis, zone",
    [
        ("2026-02-01T00:00:00Z", "2026-01-01T00:00:00Z", "months", "UTC"),
        ("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "fortnights", "UTC"),
        ("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "months", "Mars/Olympus"),
    ],
)
def test_impossible_spans_units_and_zones_are_errors(start, end, basis, zone):
    with pytest.raises(ValueError):
        duration(at(start), at(end), basis, zone)


def test_a_term_running_past_year_9999_is_a_client_error():
    from datetime import datetime, timezone

    import pytest

    from chalicelib.core import durations
    from chalicelib.core.errors import InvalidRequest

    with pytest.raises(InvalidRequest) as refused:
        durations.add(datetime(9999, 6, 1, tzinfo=timezone.utc), 12, "months", "UTC")
    assert refused.value.code == "request.date_out_of_range"
