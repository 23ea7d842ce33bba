"""The moments of a delinquency (billing/delinquency/calculator.py): days are local calendar days of the
time zone, across a DST change too; a fraction of a day is elapsed time."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

from chalicelib.billing.delinquency.calculator import grace_end, plus_days, trigger_time
from chalicelib.configuration.billing_plans import DelinquencyEvent, GraceOffsetBasis

NEW_YORK = "America/New_York"
MARCH_FIRST = datetime(2026, 3, 1, 5, tzinfo=timezone.utc)  # midnight in New York, DST begins on March 8th


def test_a_grace_across_the_dst_change_ends_at_local_midnight():
    assert grace_end(MARCH_FIRST, 10, NEW_YORK) == datetime(2026, 3, 11, 4, tzinfo=timezone.utc)
    assert grace_end(MARCH_FIRST, 10, "UTC") == datetime(2026, 3, 11, 5, tzinfo=timezone.utc)


def test_events_count_from_the_grace_start_or_end_and_may_precede_it():
    end = grace_end(MARCH_FIRST, 10, NEW_YORK)
    before_end = DelinquencyEvent("Reminder", GraceOffsetBasis.GRACE_PERIOD_END, Decimal(-3))
    after_start = DelinquencyEvent("Notice", GraceOffsetBasis.GRACE_PERIOD_START, Decimal(2))
    assert trigger_time(before_end, MARCH_FIRST, end, NEW_YORK) == datetime(2026, 3, 8, 5, tzinfo=timezone.utc)
    assert trigger_time(after_start, MARCH_FIRST, end, NEW_YORK) == datetime(2026, 3, 3, 5, tzinfo=timezone.utc)


def test_a_fraction_of_a_day_is_elapsed_time():
    assert plus_days(MARCH_FIRST, Decimal("1.5"), NEW_YORK) == datetime(2026, 3, 2, 17, tzinfo=timezone.utc)
    assert plus_days(MARCH_FIRST, Decimal("-0.5"), NEW_YORK) == datetime(2026, 2, 28, 17, tzinfo=timezone.utc)


def test_the_whole_days_of_a_fraction_are_counted_first_across_the_dst_change():
    """1.5 days from March 7th's midnight: one calendar day (March 8th's midnight, still EST), then twelve
    elapsed hours, 1 pm EDT; not two calendar days less twelve hours (noon)."""
    seventh = datetime(2026, 3, 7, 5, tzinfo=timezone.utc)
    assert plus_days(seventh, Decimal("1.5"), NEW_YORK) == datetime(2026, 3, 8, 17, tzinfo=timezone.utc)
    assert plus_days(seventh, Decimal("2.5"), NEW_YORK) == datetime(2026, 3, 9, 16, tzinfo=timezone.utc)


def test_a_moment_is_in_utc_whatever_the_servers_own_time_zone(server_in_tokyo):
    moved = grace_end(MARCH_FIRST, 10, NEW_YORK)
    assert moved.utcoffset() == timedelta(0)
    assert moved.isoformat() == "2026-03-11T04:00:00+00:00"
