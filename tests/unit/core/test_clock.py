"""Clocks and the wire format of datetimes: always UTC, whatever the server's own time zone."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from chalicelib.core.clock import FixedClock, SystemClock, isoformat, parse_datetime

TOKYO = timezone(timedelta(hours=9))


def test_the_system_clock_tells_the_current_moment_in_utc(server_in_tokyo):
    before = time.time()
    now = SystemClock().now()

    assert now.utcoffset() == timedelta(0)
    assert before - 1 <= now.timestamp() <= time.time() + 1


def test_a_fixed_clock_stands_still_until_set_or_advanced(server_in_tokyo):
    clock = FixedClock(datetime(2026, 1, 15, 18, 30, tzinfo=TOKYO))

    assert clock.now().isoformat() == "2026-01-15T09:30:00+00:00"
    assert clock.now() == clock.now()
    clock.advance(days=1, hours=2)
    assert clock.now().isoformat() == "2026-01-16T11:30:00+00:00"
    clock.set(datetime(2027, 3, 1, 9, tzinfo=TOKYO))
    assert clock.now().isoformat() == "2027-03-01T00:00:00+00:00"


@pytest.mark.parametrize(
    "build", [lambda at: FixedClock(at), lambda at: FixedClock(datetime.now(timezone.utc)).set(at)]
)
def test_a_fixed_clock_refuses_a_naive_datetime(build):
    with pytest.raises(ValueError) as refused:
        build(datetime(2026, 1, 15))

    assert str(refused.value) == "FixedClock needs an aware datetime"


def test_the_wire_format_is_utc_with_z_and_milliseconds(server_in_tokyo):
    assert isoformat(datetime(2026, 1, 15, 18, 30, 5, 123_456, tzinfo=TOKYO)) == "2026-01-15T09:30:05.123Z"
    assert isoformat(datetime(2026, 1, 15, tzinfo=timezone.utc)) == "2026-01-15T00:00:00.000Z"


@pytest.mark.parametrize(
    "text, moment",
    [
        ("2026-01-15T09:30:00Z", "2026-01-15T09:30:00+00:00"),
        ("2026-01-15T09:30:00z", "2026-01-15T09:30:00+00:00"),
        ("2026-01-15T09:30:00", "2026-01-15T09:30:00+00:00"),  # no offset: UTC, not the server's zone
        ("2026-01-15T18:30:00+09:00", "2026-01-15T09:30:00+00:00"),
        ("2026-01-15", "2026-01-15T00:00:00+00:00"),
    ],
)
def test_parsing_answers_the_moment_in_utc(server_in_tokyo, text, moment):
    assert parse_datetime(text).isoformat() == moment


@pytest.mark.parametrize(
    "text, reason",
    [
        ("0001-01-01T00:00:00+05:00", "'0001-01-01T00:00:00+05:00' is outside the range of datetimes"),
        ("9999-12-31T23:00:00-05:00", "'9999-12-31T23:00:00-05:00' is outside the range of datetimes"),
        ("yesterday", "Invalid isoformat string: 'yesterday'"),
    ],
)
def test_text_that_names_no_utc_moment_is_refused(text, reason):
    with pytest.raises(ValueError) as refused:
        parse_datetime(text)

    assert str(refused.value) == reason
