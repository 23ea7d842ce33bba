"""durations.shift: whole units forwards and backwards on the local wall clock."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from chalicelib.core import durations
from chalicelib.core.errors import InvalidRequest

NY = "America/New_York"


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, microsecond: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, microsecond, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("count", "basis", "expected"),
    [
        (-1, "months", utc(2026, 2, 28, 5)),  # Mar 31 -> Feb 28, local midnight
        (1, "months", utc(2026, 4, 30, 4)),  # the day Apr lacks becomes its last
        (-1, "years", utc(2025, 3, 31, 4)),
        (2, "years", utc(2028, 3, 31, 4)),
        (-3, "weeks", utc(2026, 3, 10, 4)),
        (-30, "days", utc(2026, 3, 1, 5)),  # back across the DST switch of Mar 8: still local midnight
        (-25, "hours", utc(2026, 3, 30, 3)),  # elapsed hours
        (0, "days", utc(2026, 3, 31, 4)),
    ],
)
def test_shift_moves_by_whole_units(count, basis, expected):
    assert durations.shift(utc(2026, 3, 31, 4), count, basis, NY) == expected


def test_shift_refuses_an_unknown_basis_and_the_end_of_the_calendar():
    with pytest.raises(ValueError):
        durations.shift(utc(2026, 1, 1), 1, "fortnights", NY)
    with pytest.raises(InvalidRequest):
        durations.shift(utc(9999, 6, 1), 1, "years", NY)
    with pytest.raises(InvalidRequest):
        durations.shift(utc(1, 2, 1), -2, "months", "UTC")
