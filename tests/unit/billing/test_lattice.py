"""The installment lattice of a term: frames cut at the cadence from the anchor, the cap, the lead days,
a mid-term transaction's frames, and (for random plans) frames that always tile the term exactly."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.billing.installments.lattice import (
    CADENCE_DAYS,
    CADENCE_MONTHS,
    WEEKDAYS,
    Schedule,
    coverage_seconds,
    from_effective,
    term_frames,
)

UTC = timezone.utc
NY = "America/New_York"


def at(text: str, zone: str = "UTC") -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)


def local_dates(frames, zone: str = "UTC") -> list[str]:
    return [f.start.astimezone(ZoneInfo(zone)).date().isoformat() for f in frames]


def test_a_monthly_year_has_twelve_frames_on_the_term_start_day_with_their_lead_days():
    frames = term_frames(at("2026-01-15T00:00"), at("2027-01-15T00:00"),
                         Schedule(cadence="monthly", generate_lead_days=10, due_lead_days=5, autopay_lead_days=2),
                         "UTC")
    assert local_dates(frames) == [f"2026-{m:02d}-15" for m in range(1, 13)]
    assert frames[-1].end == at("2027-01-15T00:00")
    second = frames[1]
    assert (second.generate_time, second.due_time, second.autopay_time) == (
        at("2026-02-05T00:00"), at("2026-02-10T00:00"), at("2026-02-08T00:00"))
    assert [f.weight for f in frames] == [Decimal(1)] * 12


def test_a_month_end_start_never_drifts():
    frames = term_frames(at("2026-01-31T00:00"), at("2026-06-30T00:00"), Schedule(cadence="monthly"), "UTC")
    assert local_dates(frames) == ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31"]


def test_full_pay_is_one_frame_and_generate_time_is_the_start_of_a_local_day():
    frames = term_frames(at("2026-03-10T14:30", NY), at("2027-03-10T14:30", NY),
                         Schedule(cadence="fullPay", generate_lead_days=7), NY)
    assert len(frames) == 1
    assert frames[0].generate_time == at("2026-03-03T00:00", NY)


def test_weights_apply_in_order_and_missing_ones_are_one():
    frames = term_frames(at("2026-01-01T00:00"), at("2027-01-01T00:00"),
                         Schedule(cadence="quarterly", weights=(Decimal(3), Decimal(2))), "UTC")
    assert [f.weight for f in frames] == [Decimal(3), Decimal(2), Decimal(1), Decimal(1)]


def test_past_the_cap_the_last_frame_runs_to_the_term_end():
    frames = term_frames(at("2026-01-01T00:00"), at("2027-01-01T00:00"),
                         Schedule(cadence="monthly", max_installments=10), "UTC")
    assert len(frames) == 10
    assert (frames[-1].start, frames[-1].end) == (at("2026-10-01T00:00"), at("2027-01-01T00:00"))


def test_a_day_of_month_anchor_makes_a_leading_partial_frame_the_cap_does_not_count():
    frames = term_frames(at("2026-01-15T00:00"), at("2027-01-15T00:00"),
                         Schedule(cadence="monthly", anchor_type="dayOfMonth", day_of_month=1, max_installments=12),
                         "UTC")
    assert local_dates(frames) == ["2026-01-15", *[f"2026-{m:02d}-01" for m in range(2, 13)], "2027-01-01"]
    assert frames[-1].end == at("2027-01-15T00:00")


def test_a_day_of_week_anchor_cuts_weekly_frames_on_that_day():
    frames = term_frames(at("2026-01-01T00:00"), at("2026-02-01T00:00"),  # a Thursday
                         Schedule(cadence="weekly", anchor_type="dayOfWeek", day_of_week="monday"), "UTC")
    assert local_dates(frames) == ["2026-01-01", "2026-01-05", "2026-01-12", "2026-01-19", "2026-01-26"]


def test_the_third_thursday_of_each_month():
    frames = term_frames(at("2026-01-01T00:00"), at("2026-05-01T00:00"),
                         Schedule(cadence="monthly", anchor_type="weekOfMonth", day_of_week="thursday",
                                  week_of_month="third"), "UTC")
    assert local_dates(frames) == ["2026-01-01", "2026-01-15", "2026-02-19", "2026-03-19", "2026-04-16"]


def test_an_anchor_time_before_the_term_places_the_cuts_on_its_series():
    frames = term_frames(at("2026-02-01T00:00"), at("2027-02-01T00:00"),
                         Schedule(cadence="quarterly", anchor_type="anchorTime", anchor_time=at("2024-03-22T00:00")),
                         "UTC")
    assert local_dates(frames) == ["2026-02-01", "2026-03-22", "2026-06-22", "2026-09-22", "2026-12-22"]


def test_a_generate_day_anchor_pins_the_generate_time_to_the_anchor():
    frames = term_frames(at("2026-01-01T00:00"), at("2026-04-01T00:00"),
                         Schedule(cadence="monthly", anchor_type="dayOfMonth", day_of_month=5, generate_lead_days=10,
                                  anchor_mode="generateDay"), "UTC")
    assert [f.generate_time.day for f in frames[1:]] == [5, 5, 5]


def test_frames_are_local_midnights_across_a_daylight_saving_change():
    frames = term_frames(at("2026-01-10T00:00", NY), at("2026-06-10T00:00", NY), Schedule(cadence="monthly"), NY)
    assert [f.start.astimezone(ZoneInfo(NY)).hour for f in frames] == [0] * 5


def test_a_transaction_effective_mid_term_takes_the_frames_from_its_effective_time():
    frames = term_frames(at("2026-01-15T00:00"), at("2027-01-15T00:00"), Schedule(cadence="monthly"), "UTC")
    later = from_effective(frames, at("2026-06-20T00:00"))
    assert [f.index for f in later] == list(range(5, 12))
    assert (later[0].start, later[0].end) == (at("2026-06-20T00:00"), at("2026-07-15T00:00"))
    assert later[0].due_time == frames[5].due_time


def test_coverage_seconds_is_the_overlap():
    frame = term_frames(at("2026-01-01T00:00"), at("2026-01-03T00:00"), Schedule(), "UTC")[0]
    assert coverage_seconds(frame, at("2026-01-02T00:00"), at("2026-02-01T00:00")) == Decimal(86400)
    assert coverage_seconds(frame, at("2026-02-01T00:00"), at("2026-03-01T00:00")) == Decimal(0)


def test_a_term_must_end_after_it_starts():
    with pytest.raises(ValueError):
        term_frames(at("2026-01-01T00:00"), at("2026-01-01T00:00"), Schedule(), "UTC")


schedules = st.builds(
    Schedule,
    cadence=st.sampled_from([*CADENCE_MONTHS, *CADENCE_DAYS, "fullPay", "everyNDays"]),
    max_installments=st.one_of(st.none(), st.integers(1, 24)),
    generate_lead_days=st.integers(0, 40), due_lead_days=st.integers(0, 40), autopay_lead_days=st.integers(0, 5),
    anchor_type=st.sampled_from(["none", "dayOfMonth", "dayOfWeek"]),
    day_of_month=st.integers(1, 31), day_of_week=st.sampled_from(WEEKDAYS), every_n_days=st.integers(1, 90),
    anchor_mode=st.sampled_from(["termStartDay", "generateDay", "dueDay"]))


@settings(max_examples=300, deadline=None)
@given(schedule=schedules, start=st.datetimes(datetime(2020, 1, 1), datetime(2030, 1, 1)),
       days=st.integers(1, 800), zone=st.sampled_from(["UTC", NY, "Australia/Sydney"]))
def test_frames_tile_the_term_in_order(schedule, start, days, zone):
    term_start = start.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)
    term_end = term_start + timedelta(days=days)
    frames = term_frames(term_start, term_end, schedule, zone)
    assert frames[0].start == term_start and frames[-1].end == term_end
    assert all(a.end == b.start and a.start < a.end for a, b in zip(frames, frames[1:]))
    assert [f.index for f in frames] == list(range(len(frames)))
    if schedule.max_installments:
        assert len(frames) <= schedule.max_installments + (1 if schedule.anchor_type != "none" else 0)
    assert all(f.generate_time <= f.start and f.autopay_time <= f.due_time for f in frames)
