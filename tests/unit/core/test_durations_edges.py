"""durationBasis arithmetic at its edges: fractional months in `add`, spans under a month, a zero count,
the first and last years datetime holds, offsets other than UTC, and which error each misuse raises."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.core.durations import BASES, add, duration
from chalicelib.core.errors import InvalidRequest

UTC = timezone.utc
NY = "America/New_York"
TOKYO = timezone(timedelta(hours=9))


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, microsecond: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, microsecond, tzinfo=UTC)


def test_a_fractional_count_of_months_takes_that_fraction_of_the_month_after_the_whole_ones():
    # Jan 15 + 1 month = Feb 15; half of Feb 15 -> Mar 15 (28 days) is 14 days
    assert add(utc(2026, 1, 15), Decimal("1.5"), "months", "UTC") == utc(2026, 3, 1)
    # a quarter of Jan 15 -> Feb 15 (31 days) is 7 days 18 hours
    assert add(utc(2026, 1, 15), Decimal("0.25"), "months", "UTC") == utc(2026, 1, 22, 18)
    # 1.25 years = 15 months
    assert add(utc(2026, 1, 1), Decimal("1.25"), "years", "UTC") == utc(2027, 4, 1)


def test_a_zero_count_is_the_start_itself():
    start = datetime(2026, 1, 15, 9, 30, tzinfo=TOKYO)

    for basis in BASES:
        assert add(start, 0, basis, NY) == start


@pytest.mark.parametrize(
    "start, end, expected",
    [
        (utc(2026, 1, 31), utc(2026, 2, 10), Decimal(10) / Decimal(28)),  # the month after Jan 31 ends Feb 28
        (utc(2026, 1, 20), utc(2026, 2, 5), Decimal(16) / Decimal(31)),
        (utc(2026, 1, 20), utc(2026, 3, 10), 1 + Decimal(18) / Decimal(28)),  # Feb 20 + 18 days
        (utc(2026, 2, 28), utc(2026, 3, 28), Decimal(1)),
    ],
)
def test_a_span_crossing_a_month_end_counts_only_the_months_it_completes(start, end, expected):
    assert duration(start, end, "months", "UTC") == expected


def test_offsets_other_than_utc_name_the_same_moment_and_add_answers_in_utc():
    start = datetime(2026, 1, 15, 14, 0, tzinfo=TOKYO)  # 05:00Z, midnight in New York

    assert duration(start, utc(2026, 2, 15, 5), "months", NY) == 1
    for count, basis in ((1, "months"), (2, "days"), (1, "weeks"), (5, "hours")):
        moved = add(start, count, basis, NY)
        assert moved.utcoffset() == timedelta(0)
    assert add(start, 2, "days", NY).isoformat() == "2026-01-17T05:00:00+00:00"
    assert add(start, 5, "hours", NY).isoformat() == "2026-01-15T10:00:00+00:00"


@pytest.mark.parametrize(
    "count, basis, expected",
    [
        (1, "years", "2027-01-15T05:00:00+00:00"),
        (Decimal("1.5"), "months", "2026-03-01T05:00:00+00:00"),
        (1, "weeks", "2026-01-22T05:00:00+00:00"),
        (1, "days", "2026-01-16T05:00:00+00:00"),
        (1, "hours", "2026-01-15T06:00:00+00:00"),
    ],
)
def test_add_answers_in_utc_whatever_the_servers_own_time_zone(server_in_tokyo, count, basis, expected):
    assert add(utc(2026, 1, 15, 5), count, basis, NY).isoformat() == expected


def test_the_first_and_last_years_datetime_holds_are_counted():
    assert duration(utc(1, 2, 15), utc(1, 3, 20), "months", "UTC") == 1 + Decimal(5) / Decimal(31)
    assert duration(utc(9999, 6, 15), utc(9999, 7, 20), "months", "UTC") == 1 + Decimal(5) / Decimal(31)
    assert duration(utc(9990, 6, 15), utc(9999, 11, 20), "months", "UTC") == 113 + Decimal(5) / Decimal(30)
    assert duration(utc(5000, 1, 1), utc(5001, 1, 1), "years", "UTC") == 1
    assert add(utc(1, 1, 31), 1, "months", "UTC") == utc(1, 2, 28)
    assert add(utc(9999, 11, 30), 1, "months", "UTC") == utc(9999, 12, 30)
    assert duration(utc(9999, 1, 1), utc(9999, 12, 1), "months", "UTC") == 11  # no month after December needed


def test_in_the_hour_new_york_repeats_a_later_moment_reading_earlier_is_no_time_not_negative_time():
    start, end = utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 6, 10)  # 01:30 EDT, then 01:10 EST

    assert duration(start, end, "hours", NY) == Decimal(40) / 60
    for basis in ("days", "weeks", "months", "years"):
        assert duration(start, end, basis, NY) == 0
    assert duration(start, utc(2026, 11, 1, 6, 40), "days", NY) == Decimal(10) / (24 * 60)  # 01:40 EST


def test_hours_between_the_first_and_last_microsecond_are_exact():
    first, last = utc(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
    microseconds = Decimal((last.date() - first.date()).days) * 86_400_000_000 + 86_399_999_999

    assert duration(first, last, "hours", "UTC") == microseconds / Decimal(3_600_000_000)


@pytest.mark.parametrize(
    "call",
    [
        lambda: add(utc(9999, 6, 1), 12, "months", "UTC"),
        lambda: add(utc(1, 1, 1), 1, "days", "America/Los_Angeles"),  # year 0 on the local clock
        lambda: duration(utc(9999, 12, 1), utc(9999, 12, 31, 12), "days", "Pacific/Kiritimati"),  # year 10000 locally
    ],
)
def test_a_moment_beyond_the_years_datetime_holds_is_a_client_error(call):
    with pytest.raises(InvalidRequest) as refused:
        call()

    assert refused.value.code == "request.date_out_of_range"
    assert refused.value.message == "The dates fall outside the years 1 to 9999"


@pytest.mark.parametrize(
    "call, reason",
    [
        (lambda: duration(utc(2026, 2, 1), utc(2026, 1, 1), "months", "UTC"), "a span cannot end before it starts"),
        (lambda: duration(utc(2026, 1, 1), utc(2026, 2, 1), "fortnights", "UTC"), "unknown durationBasis 'fortnights'"),
        (lambda: duration(datetime(2026, 1, 1), utc(2026, 2, 1), "days", "UTC"), "durations need aware datetimes"),
        (lambda: duration(utc(2026, 1, 1), datetime(2026, 2, 1), "days", "UTC"), "durations need aware datetimes"),
        (
            lambda: duration(utc(2026, 1, 1), utc(2026, 2, 1), "days", "Mars/Olympus"),
            "unknown time zone 'Mars/Olympus'",
        ),
        (lambda: add(utc(2026, 1, 1), -1, "days", "UTC"), "a duration cannot be negative"),
        (lambda: add(utc(2026, 1, 1), 1, "fortnights", "UTC"), "unknown durationBasis 'fortnights'"),
        (lambda: add(utc(2026, 1, 1), 1, "days", "Mars/Olympus"), "unknown time zone 'Mars/Olympus'"),
    ],
)
def test_each_misuse_says_what_is_wrong(call, reason):
    with pytest.raises(ValueError) as refused:
        call()

    assert str(refused.value) == reason


moments = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC))
local_midnights = st.builds(
    lambda day, zone: (datetime.combine(day, datetime.min.time(), ZoneInfo(zone)), zone),
    st.dates(min_value=date(1900, 1, 1), max_value=date(2200, 1, 1)),
    st.sampled_from(["UTC", NY, "Australia/Sydney", "Asia/Kolkata"]),
)


@settings(max_examples=60, deadline=None)
@given(start_in_zone=local_midnights, months=st.integers(min_value=0, max_value=600))
def test_whole_months_added_from_a_local_midnight_measure_as_that_many_months(start_in_zone, months):
    start, zone = start_in_zone
    end = add(start, months, "months", zone)

    assert duration(start, end, "months", zone) == months
    assert duration(start, end, "years", zone) == Decimal(months) / 12


@settings(max_examples=60, deadline=None)
@given(start=moments, count=st.decimals(min_value=0, max_value=240, places=3), basis=st.sampled_from(BASES))
def test_add_then_duration_gives_the_count_back_to_the_microsecond(start, count, basis):
    end = add(start, count, basis, "UTC")

    # add keeps whole microseconds: the span measured falls short of `count` by less than one of them
    assert 0 <= count - duration(start, end, basis, "UTC") < Decimal("1e-9")
