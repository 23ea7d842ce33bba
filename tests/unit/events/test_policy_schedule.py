"""When scheduled custom events happen (chalicelib/events/policy_schedule.py), on a policy in New York
from 2026-02-01 to 2027-02-01 whose latest term starts 2026-02-01 and latest segment 2026-06-15."""

from __future__ import annotations

from datetime import datetime, timezone
from itertools import islice

import pytest

from chalicelib.events.policy_schedule import Anchors, occurrences, upcoming

NY = "America/New_York"
ANCHORS = Anchors(
    policy_start=datetime(2026, 2, 1, 5, tzinfo=timezone.utc),
    policy_end=datetime(2027, 2, 1, 5, tzinfo=timezone.utc),
    term_start=datetime(2026, 2, 1, 5, tzinfo=timezone.utc),
    segment_start=datetime(2026, 6, 15, 4, tzinfo=timezone.utc),
)


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, microsecond: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, microsecond, tzinfo=timezone.utc)


def test_a_one_off_event_is_its_anchor_moved_by_the_offset_on_the_local_clock():
    schedule = {"anchor": "policyEnd", "offset": {"days": -30, "hours": 9}}

    assert list(occurrences(schedule, ANCHORS, NY)) == [utc(2027, 1, 2, 14)]


def test_offsets_apply_years_first_and_hours_last():
    schedule = {"anchor": "policyStart", "offset": {"hours": -1, "months": 1, "years": 1}}

    assert list(occurrences(schedule, ANCHORS, NY)) == [utc(2027, 3, 1, 4)]


@pytest.mark.parametrize(
    ("alignment", "expected"),
    [
        ("weekStart", utc(2026, 6, 15, 4)),  # 2026-06-15 is a Monday: already a week start
        ("monthStart", utc(2026, 7, 1, 4)),
        ("yearStart", utc(2027, 1, 1, 5)),
    ],
)
def test_alignment_moves_forward_to_the_next_start_of_a_week_month_or_year(alignment, expected):
    assert list(occurrences({"anchor": "segmentStart", "alignment": alignment}, ANCHORS, NY)) == [expected]


def test_a_moment_inside_a_week_aligns_to_the_next_monday():
    schedule = {"anchor": "policyStart", "alignment": "weekStart"}  # 2026-02-01 is a Sunday

    assert list(occurrences(schedule, ANCHORS, NY)) == [utc(2026, 2, 2, 5)]


def test_a_cadence_repeats_from_the_first_event_and_stops_at_the_policy_end():
    schedule = {
        "anchor": "policyStart",
        "offset": {"days": 28},
        "cadence": {"durationBasis": "months", "intervalDuration": 1},
    }

    events = list(occurrences(schedule, ANCHORS, NY))

    assert events[:2] == [utc(2026, 3, 1, 5), utc(2026, 4, 1, 4)]  # local midnight, before and after DST
    assert len(events) == 11 and events[-1] == utc(2027, 1, 1, 5)


def test_monthly_events_from_the_31st_fall_on_each_month_end():
    anchors = Anchors(utc(2026, 1, 31, 5), utc(2026, 6, 1, 4), utc(2026, 1, 31, 5), utc(2026, 1, 31, 5))
    schedule = {"anchor": "policyStart", "cadence": {"durationBasis": "months", "intervalDuration": 1}}

    assert list(occurrences(schedule, anchors, NY)) == [
        utc(2026, 1, 31, 5),
        utc(2026, 2, 28, 5),
        utc(2026, 3, 31, 4),
        utc(2026, 4, 30, 4),
        utc(2026, 5, 31, 4),
    ]


def test_a_limit_caps_the_number_of_events():
    schedule = {"anchor": "termStart", "cadence": {"durationBasis": "weeks", "intervalDuration": 2, "limit": 3}}

    assert list(occurrences(schedule, ANCHORS, NY)) == [utc(2026, 2, 1, 5), utc(2026, 2, 15, 5), utc(2026, 3, 1, 5)]


def test_daily_events_keep_local_midnight_across_a_dst_switch():
    schedule = {
        "anchor": "policyStart",
        "offset": {"days": 35},
        "cadence": {"durationBasis": "days", "intervalDuration": 1},
    }

    assert list(islice(occurrences(schedule, ANCHORS, NY), 2)) == [utc(2026, 3, 8, 5), utc(2026, 3, 9, 4)]


def test_the_next_event_is_the_first_at_or_after_now():
    schedule = {"anchor": "policyStart", "cadence": {"durationBasis": "hours", "intervalDuration": 1}}

    assert upcoming("hourly", schedule, ANCHORS, NY, utc(2026, 8, 3, 10, 20), ["onRisk"]).next_time == utc(
        2026, 8, 3, 11
    )
    assert upcoming("hourly", schedule, ANCHORS, NY, utc(2026, 8, 3, 11), ["onRisk"]).next_time == utc(2026, 8, 3, 11)


def test_a_schedule_with_events_left_is_normal_and_blocked_while_a_suppressing_status_holds():
    schedule = {"anchor": "policyEnd", "offset": {"days": -30}, "suppressOnStatuses": ["cancelled", "pending"]}

    normal = upcoming("renewalNotice", schedule, ANCHORS, NY, utc(2026, 3, 1), ["onRisk"])
    blocked = upcoming("renewalNotice", schedule, ANCHORS, NY, utc(2026, 1, 3), ["pending"])

    assert (normal.name, normal.trigger_state, normal.next_time) == ("renewalNotice", "NORMAL", utc(2027, 1, 2, 5))
    assert (blocked.trigger_state, blocked.next_time) == ("BLOCKED", utc(2027, 1, 2, 5))


def test_a_schedule_whose_events_are_all_past_is_complete():
    done = upcoming("welcome", {"anchor": "policyStart"}, ANCHORS, NY, utc(2026, 2, 1, 5, 1), ["onRisk"])

    assert (done.trigger_state, done.next_time) == ("COMPLETE", None)


def test_a_schedule_beyond_the_calendar_is_an_error_not_a_failure():
    anchors = Anchors(utc(9999, 6, 1), utc(9999, 12, 1), utc(9999, 6, 1), utc(9999, 6, 1))

    late = upcoming("late", {"anchor": "policyStart", "offset": {"years": 1}}, anchors, NY, utc(2026, 1, 1), [])

    assert (late.trigger_state, late.next_time) == ("ERROR", None)
