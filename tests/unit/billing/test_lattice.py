"""The installment lattice of a term: frames cut at the cadence from the anchor, the cap, the lead days,
a mid-term transaction's frames, their coverage in the policy's durationBasis, and (for random plans)
frames that always tile the term exactly, measure the term, and are never due before they are generated."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.billing.installments.allocation import backdated
from chalicelib.billing.installments.lattice import (
    CADENCE_DAYS,
    CADENCE_MONTHS,
    WEEKDAYS,
    Schedule,
    coverage,
    from_effective,
    term_frames,
)
from chalicelib.core import durations

UTC = timezone.utc
NY = "America/New_York"


def at(text: str, zone: str = "UTC") -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)


def local_dates(frames, zone: str = "UTC") -> list[str]:
    return [f.start.astimezone(ZoneInfo(zone)).date().isoformat() for f in frames]


def test_a_monthly_year_has_twelve_frames_on_the_term_start_day_with_their_lead_days():
    frames = term_frames(
        at("2026-01-15T00:00"),
        at("2027-01-15T00:00"),
        Schedule(cadence="monthly", generate_lead_days=10, due_lead_days=5, autopay_lead_days=2),
        "UTC",
    )
    assert local_dates(frames) == [f"2026-{m:02d}-15" for m in range(1, 13)]
    assert frames[-1].end == at("2027-01-15T00:00")
    second = frames[1]
    assert (second.generate_time, second.due_time, second.autopay_time) == (
        at("2026-02-05T00:00"),
        at("2026-02-10T00:00"),
        at("2026-02-08T00:00"),
    )
    assert [f.weight for f in frames] == [Decimal(1)] * 12


def test_a_month_end_start_never_drifts():
    frames = term_frames(at("2026-01-31T00:00"), at("2026-06-30T00:00"), Schedule(cadence="monthly"), "UTC")
    assert local_dates(frames) == ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31"]


def test_full_pay_is_one_frame_and_generate_time_is_the_start_of_a_local_day():
    frames = term_frames(
        at("2026-03-10T14:30", NY), at("2027-03-10T14:30", NY), Schedule(cadence="fullPay", generate_lead_days=7), NY
    )
    assert len(frames) == 1
    assert frames[0].generate_time == at("2026-03-03T00:00", NY)


def test_weights_apply_in_order_and_missing_ones_are_one():
    frames = term_frames(
        at("2026-01-01T00:00"),
        at("2027-01-01T00:00"),
        Schedule(cadence="quarterly", weights=(Decimal(3), Decimal(2))),
        "UTC",
    )
    assert [f.weight for f in frames] == [Decimal(3), Decimal(2), Decimal(1), Decimal(1)]


def test_past_the_cap_the_last_frame_runs_to_the_term_end():
    frames = term_frames(
        at("2026-01-01T00:00"), at("2027-01-01T00:00"), Schedule(cadence="monthly", max_installments=10), "UTC"
    )
    assert len(frames) == 10
    assert (frames[-1].start, frames[-1].end) == (at("2026-10-01T00:00"), at("2027-01-01T00:00"))


def test_a_day_of_month_anchor_makes_a_leading_partial_frame_the_cap_does_not_count():
    frames = term_frames(
        at("2026-01-15T00:00"),
        at("2027-01-15T00:00"),
        Schedule(cadence="monthly", anchor_type="dayOfMonth", day_of_month=1, max_installments=12),
        "UTC",
    )
    assert local_dates(frames) == ["2026-01-15", *[f"2026-{m:02d}-01" for m in range(2, 13)], "2027-01-01"]
    assert frames[-1].end == at("2027-01-15T00:00")


def test_a_day_of_week_anchor_cuts_weekly_frames_on_that_day():
    frames = term_frames(
        at("2026-01-01T00:00"),
        at("2026-02-01T00:00"),  # a Thursday
        Schedule(cadence="weekly", anchor_type="dayOfWeek", day_of_week="monday"),
        "UTC",
    )
    assert local_dates(frames) == ["2026-01-01", "2026-01-05", "2026-01-12", "2026-01-19", "2026-01-26"]


def test_the_third_thursday_of_each_month():
    frames = term_frames(
        at("2026-01-01T00:00"),
        at("2026-05-01T00:00"),
        Schedule(cadence="monthly", anchor_type="weekOfMonth", day_of_week="thursday", week_of_month="third"),
        "UTC",
    )
    assert local_dates(frames) == ["2026-01-01", "2026-01-15", "2026-02-19", "2026-03-19", "2026-04-16"]


def test_an_anchor_time_before_the_term_places_the_cuts_on_its_series():
    frames = term_frames(
        at("2026-02-01T00:00"),
        at("2027-02-01T00:00"),
        Schedule(cadence="quarterly", anchor_type="anchorTime", anchor_time=at("2024-03-22T00:00")),
        "UTC",
    )
    assert local_dates(frames) == ["2026-02-01", "2026-03-22", "2026-06-22", "2026-09-22", "2026-12-22"]


def test_a_generate_day_anchor_pins_the_generate_time_to_the_anchor():
    frames = term_frames(
        at("2026-01-01T00:00"),
        at("2026-04-01T00:00"),
        Schedule(
            cadence="monthly",
            anchor_type="dayOfMonth",
            day_of_month=5,
            generate_lead_days=10,
            anchor_mode="generateDay",
        ),
        "UTC",
    )
    assert [f.generate_time.day for f in frames[1:]] == [5, 5, 5]


def test_frames_are_local_midnights_across_a_daylight_saving_change():
    frames = term_frames(at("2026-01-10T00:00", NY), at("2026-06-10T00:00", NY), Schedule(cadence="monthly"), NY)
    assert [f.start.astimezone(ZoneInfo(NY)).hour for f in frames] == [0] * 5


def test_a_transaction_effective_mid_term_takes_the_frames_from_its_effective_time_with_its_times():
    schedule = Schedule(cadence="monthly", generate_lead_days=10, due_lead_days=3, autopay_lead_days=1)
    frames = term_frames(at("2026-01-15T00:00"), at("2027-01-15T00:00"), schedule, "UTC")
    later = from_effective(frames, at("2026-06-20T12:00"), schedule, "UTC")
    assert [f.index for f in later] == list(range(5, 12))
    assert (later[0].start, later[0].end) == (at("2026-06-20T12:00"), at("2026-07-15T00:00"))
    assert (later[0].generate_time, later[0].due_time, later[0].autopay_time) == (
        at("2026-06-10T00:00"),
        at("2026-06-17T12:00"),
        at("2026-06-16T12:00"),
    )
    assert later[1:] == frames[6:]


def test_a_due_time_is_never_before_the_generate_time():
    frames = term_frames(
        at("2026-01-15T09:00"),
        at("2026-04-15T09:00"),
        Schedule(cadence="monthly", generate_lead_days=2, due_lead_days=5),
        "UTC",
    )
    assert [(f.generate_time, f.due_time) for f in frames] == [
        (at("2026-01-13T00:00"), at("2026-01-13T00:00")),
        (at("2026-02-13T00:00"), at("2026-02-13T00:00")),
        (at("2026-03-13T00:00"), at("2026-03-13T00:00")),
    ]


def test_coverage_is_the_overlap_in_the_duration_basis():
    frame = term_frames(at("2026-01-01T00:00"), at("2026-01-03T00:00"), Schedule(), "UTC")[0]
    assert coverage(frame, at("2026-01-02T00:00"), at("2026-02-01T00:00"), "hours", "UTC") == Decimal(24)
    assert coverage(frame, at("2026-01-02T00:00"), at("2026-02-01T00:00"), "days", "UTC") == Decimal(1)
    assert coverage(frame, at("2026-02-01T00:00"), at("2026-03-01T00:00"), "days", "UTC") == Decimal(0)


def test_every_whole_month_is_one_month_and_a_partial_one_its_fraction():
    frames = term_frames(at("2026-02-01T00:00", NY), at("2027-02-01T00:00", NY), Schedule(cadence="monthly"), NY)
    assert [coverage(f, f.start, f.end, "months", NY) for f in frames] == [Decimal(1)] * 12
    assert [coverage(f, f.start, f.end, "years", NY) for f in frames] == [Decimal(1) / 12] * 12
    assert [coverage(f, f.start, f.end, "days", NY) for f in frames[:3]] == [Decimal(28), Decimal(31), Decimal(30)]
    change = from_effective(frames, at("2026-02-20T00:00", NY), Schedule(cadence="monthly"), NY)
    assert coverage(change[0], change[0].start, change[0].end, "months", NY) == Decimal(9) / 28  # Feb 20 to Mar 1
    assert coverage(change[1], change[1].start, change[1].end, "months", NY) == Decimal(1)


def test_frames_from_a_month_end_are_whole_months_though_their_days_differ():
    frames = term_frames(at("2026-01-31T00:00"), at("2027-01-31T00:00"), Schedule(cadence="monthly"), "UTC")
    assert local_dates(frames)[:3] == ["2026-01-31", "2026-02-28", "2026-03-31"]
    assert [coverage(f, f.start, f.end, "months", "UTC") for f in frames] == [Decimal(1)] * 12


def test_the_partial_frame_before_an_anchor_is_its_own_fraction_and_the_rest_whole_months():
    frames = term_frames(
        at("2026-01-15T00:00"),
        at("2026-04-15T00:00"),
        Schedule(cadence="monthly", anchor_type="dayOfMonth", day_of_month=1),
        "UTC",
    )
    assert [round(coverage(f, f.start, f.end, "months", "UTC"), 20) for f in frames] == [
        round(Decimal(17) / 31, 20),
        1,
        1,
        round(Decimal(14) / 30, 20),
    ]  # 17 days of Jan 15 to Feb 15, 14 of April


def test_a_term_must_end_after_it_starts():
    with pytest.raises(ValueError, match="^a term ends after it starts$"):
        term_frames(at("2026-01-01T00:00"), at("2026-01-01T00:00"), Schedule(), "UTC")


@pytest.mark.parametrize("days", [None, 0, -5])
def test_every_n_days_needs_a_positive_number_of_days(days):
    with pytest.raises(ValueError, match="^everyNDays needs a number of days$"):
        term_frames(
            at("2026-01-01T00:00"), at("2027-01-01T00:00"), Schedule(cadence="everyNDays", every_n_days=days), "UTC"
        )


def test_an_unknown_cadence_is_refused_by_name():
    with pytest.raises(ValueError, match="^unknown cadence 'fortnightly'$"):
        term_frames(at("2026-01-01T00:00"), at("2027-01-01T00:00"), Schedule(cadence="fortnightly"), "UTC")


def test_every_n_days_cuts_at_that_many_days():
    frames = term_frames(
        at("2026-01-01T00:00"), at("2026-02-01T00:00"), Schedule(cadence="everyNDays", every_n_days=10), "UTC"
    )
    assert local_dates(frames) == ["2026-01-01", "2026-01-11", "2026-01-21", "2026-01-31"]


def test_a_term_shorter_than_the_cap_keeps_all_its_frames():
    frames = term_frames(
        at("2026-01-01T00:00"), at("2026-12-01T00:00"), Schedule(cadence="monthly", max_installments=12), "UTC"
    )
    assert local_dates(frames) == [f"2026-{m:02d}-01" for m in range(1, 12)]
    assert frames[-1].end == at("2026-12-01T00:00")


def test_one_frame_past_the_cap_joins_the_last_one():
    frames = term_frames(
        at("2026-01-01T00:00"), at("2027-01-01T00:00"), Schedule(cadence="monthly", max_installments=11), "UTC"
    )
    assert len(frames) == 11
    assert (frames[-1].start, frames[-1].end) == (at("2026-11-01T00:00"), at("2027-01-01T00:00"))


def test_with_a_cap_of_one_an_anchor_still_gives_the_partial_frame_before_it():
    """Jan 15 to Feb 10, anchored on the 1st: the partial frame to Feb 1 (17 of January's 31 days from Jan 15),
    then the one installment the cap allows, Feb 1 to Feb 10 (9 of February's 28 days, measured from its start)."""
    frames = term_frames(
        at("2026-01-15T00:00"),
        at("2026-02-10T00:00"),
        Schedule(cadence="monthly", anchor_type="dayOfMonth", day_of_month=1, max_installments=1),
        "UTC",
    )
    assert local_dates(frames) == ["2026-01-15", "2026-02-01"]
    assert [coverage(f, f.start, f.end, "months", "UTC") for f in frames] == [Decimal(17) / 31, Decimal(9) / 28]


def test_frames_anchored_on_the_31st_are_whole_months_measured_from_the_anchor():
    frames = term_frames(
        at("2026-01-15T00:00"),
        at("2026-05-15T00:00"),
        Schedule(cadence="monthly", anchor_type="dayOfMonth", day_of_month=31),
        "UTC",
    )
    assert local_dates(frames) == ["2026-01-15", "2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30"]
    assert [coverage(f, f.start, f.end, "months", "UTC") for f in frames[1:4]] == [Decimal(1)] * 3


def test_a_term_starting_on_the_anchor_day_cuts_from_the_next_anchor():
    """Generate times pinned to the 5th, 10 days ahead of the frames: a term starting on Jan 5 runs its first
    frame to Feb 15 (generated Feb 5), not to Jan 15."""
    frames = term_frames(
        at("2026-01-05T00:00"),
        at("2026-04-05T00:00"),
        Schedule(
            cadence="monthly",
            anchor_type="dayOfMonth",
            day_of_month=5,
            generate_lead_days=10,
            anchor_mode="generateDay",
        ),
        "UTC",
    )
    assert local_dates(frames) == ["2026-01-05", "2026-02-15", "2026-03-15"]
    assert [f.generate_time for f in frames[1:]] == [at("2026-02-05T00:00"), at("2026-03-05T00:00")]


def test_a_due_day_anchor_pins_the_due_time_to_the_anchor():
    frames = term_frames(
        at("2026-01-01T00:00"),
        at("2026-04-01T00:00"),
        Schedule(
            cadence="monthly",
            anchor_type="dayOfMonth",
            day_of_month=5,
            due_lead_days=10,
            generate_lead_days=20,
            anchor_mode="dueDay",
        ),
        "UTC",
    )
    assert local_dates(frames) == ["2026-01-01", "2026-01-15", "2026-02-15", "2026-03-15"]
    assert [f.due_time for f in frames[1:]] == [at("2026-01-05T00:00"), at("2026-02-05T00:00"), at("2026-03-05T00:00")]


@pytest.mark.parametrize("mode", ["generateDay", "dueDay"])
def test_without_an_anchor_the_anchor_mode_pins_nothing(mode):
    frames = term_frames(
        at("2026-01-15T00:00"),
        at("2026-04-15T00:00"),
        Schedule(cadence="monthly", generate_lead_days=10, due_lead_days=5, anchor_mode=mode),
        "UTC",
    )
    assert local_dates(frames) == ["2026-01-15", "2026-02-15", "2026-03-15"]


def test_a_day_of_week_anchor_on_the_term_start_weekday_cuts_a_week_later():
    frames = term_frames(
        at("2026-01-05T00:00"),
        at("2026-02-02T00:00"),  # a Monday
        Schedule(cadence="weekly", anchor_type="dayOfWeek", day_of_week="monday"),
        "UTC",
    )
    assert local_dates(frames) == ["2026-01-05", "2026-01-12", "2026-01-19", "2026-01-26"]


def test_a_term_starting_after_the_months_nth_weekday_cuts_from_the_next_months():
    frames = term_frames(
        at("2026-01-20T00:00"),
        at("2026-05-01T00:00"),
        Schedule(cadence="monthly", anchor_type="weekOfMonth", day_of_week="thursday", week_of_month="third"),
        "UTC",
    )
    assert local_dates(frames) == ["2026-01-20", "2026-02-19", "2026-03-19", "2026-04-16"]


@pytest.mark.parametrize(
    "day, week, dates",
    [
        ("friday", "last", ["2026-01-01", "2026-01-30", "2026-02-27", "2026-03-27", "2026-04-24", "2026-05-29"]),
        ("thursday", "fifth", ["2026-01-01", "2026-01-29", "2026-02-26", "2026-03-26", "2026-04-30", "2026-05-28"]),
        ("thursday", "fourth", ["2026-01-01", "2026-01-22", "2026-02-26", "2026-03-26", "2026-04-23", "2026-05-28"]),
        (None, "second", ["2026-01-01", "2026-01-12", "2026-02-09", "2026-03-09", "2026-04-13", "2026-05-11"]),
        ("thursday", None, ["2026-01-01", "2026-02-05", "2026-03-05", "2026-04-02", "2026-05-07"]),
        ("thursday", "none", ["2026-01-01", "2026-02-05", "2026-03-05", "2026-04-02", "2026-05-07"]),
    ],
)
def test_the_nth_weekday_of_a_month_the_last_one_when_it_has_no_fifth(day, week, dates):
    """A fifth Thursday in a month of four is its fourth; without a weekday, Monday; without a week, the first."""
    frames = term_frames(
        at("2026-01-01T00:00"),
        at("2026-06-01T00:00"),
        Schedule(cadence="monthly", anchor_type="weekOfMonth", day_of_week=day, week_of_month=week),
        "UTC",
    )
    assert local_dates(frames) == dates


@pytest.mark.parametrize("anchor", ["2024-06-22T00:00", "2027-06-22T00:00", "2029-12-22T00:00"])
def test_an_anchor_time_before_or_after_the_term_places_the_cuts_on_its_series(anchor):
    frames = term_frames(
        at("2026-02-01T00:00"),
        at("2027-02-01T00:00"),
        Schedule(cadence="quarterly", anchor_type="anchorTime", anchor_time=at(anchor)),
        "UTC",
    )
    assert local_dates(frames) == ["2026-02-01", "2026-03-22", "2026-06-22", "2026-09-22", "2026-12-22"]


def test_an_anchor_time_series_through_the_term_start_cuts_from_its_next_moment():
    """The series passes through the term start (Feb 1); generate times pinned to it, 10 days ahead of the
    frames: the first cut is May 11, not Feb 11."""
    frames = term_frames(
        at("2026-02-01T00:00"),
        at("2026-08-01T00:00"),
        Schedule(
            cadence="quarterly",
            anchor_type="anchorTime",
            anchor_time=at("2025-02-01T00:00"),
            generate_lead_days=10,
            anchor_mode="generateDay",
        ),
        "UTC",
    )
    assert local_dates(frames) == ["2026-02-01", "2026-05-11"]


@pytest.mark.parametrize(
    "anchored, stale",
    [
        (
            Schedule(cadence="monthly", anchor_type="anchorTime", anchor_time=at("2025-03-10T00:00")),
            {"day_of_month": 20, "day_of_week": "friday", "week_of_month": "last"},
        ),
        (Schedule(cadence="weekly", anchor_type="dayOfWeek", day_of_week="monday"), {"day_of_month": 20}),
        (
            Schedule(cadence="monthly", anchor_type="dayOfMonth", day_of_month=20),
            {"day_of_week": "friday", "week_of_month": "last", "anchor_time": at("2025-03-10T00:00")},
        ),
        (
            Schedule(cadence="monthly"),
            {
                "day_of_month": 20,
                "day_of_week": "friday",
                "week_of_month": "last",
                "anchor_time": at("2025-03-10T00:00"),
            },
        ),
    ],
)
def test_an_anchor_reads_only_the_preferences_of_its_type(anchored, stale):
    """Preferences may keep the values of another anchor type: they change nothing."""
    start, end = at("2026-01-01T00:00"), at("2026-07-01T00:00")
    assert term_frames(start, end, replace(anchored, **stale), "UTC") == term_frames(start, end, anchored, "UTC")


def test_the_lattice_is_in_utc_and_local_days_whatever_the_servers_own_time_zone(server_in_tokyo):
    """10 pm in New York is the next day in Tokyo: anchors, cuts and generate days are New York's."""
    by_day = term_frames(
        at("2026-01-15T22:00", NY),
        at("2026-04-15T22:00", NY),
        Schedule(cadence="monthly", anchor_type="dayOfMonth", day_of_month=15, generate_lead_days=3),
        NY,
    )
    by_week = term_frames(
        at("2026-01-20T22:00", NY),
        at("2026-04-20T22:00", NY),
        Schedule(
            cadence="monthly",
            anchor_type="weekOfMonth",
            day_of_week="thursday",
            week_of_month="third",
            generate_lead_days=3,
        ),
        NY,
    )
    assert [(f.start, f.generate_time) for f in by_day] == [
        (at(f"2026-{month}-15T22:00", NY), at(f"2026-{month}-12T00:00", NY)) for month in ("01", "02", "03")
    ]
    assert [(f.start, f.generate_time) for f in by_week] == [
        (at(f"2026-{start}T22:00", NY), at(f"2026-{generate}T00:00", NY))
        for start, generate in (("01-20", "01-17"), ("02-19", "02-16"), ("03-19", "03-16"), ("04-16", "04-13"))
    ]
    moments = [moment for f in by_day + by_week for moment in (f.start, f.end, f.generate_time, f.due_time)]
    assert {moment.utcoffset() for moment in moments} == {timedelta(0)}
    before_the_15th = term_frames(
        at("2026-01-14T22:00", NY),
        at("2026-03-20T22:00", NY),
        Schedule(cadence="monthly", anchor_type="dayOfMonth", day_of_month=15),
        NY,
    )
    assert [f.start for f in before_the_15th] == [
        at(f"2026-{day}T22:00", NY) for day in ("01-14", "01-15", "02-15", "03-15")
    ]
    mondays = term_frames(
        at("2026-01-01T22:00", NY),
        at("2026-01-20T22:00", NY),  # a Thursday (Friday in Tokyo)
        Schedule(cadence="weekly", anchor_type="dayOfWeek", day_of_week="monday"),
        NY,
    )
    assert [f.start for f in mondays] == [at(f"2026-01-{day}T22:00", NY) for day in ("01", "05", "12", "19")]


def test_a_transaction_effective_at_a_frame_boundary_takes_the_frames_from_it_unchanged():
    schedule = Schedule(cadence="monthly", generate_lead_days=10)
    frames = term_frames(at("2026-01-15T00:00"), at("2027-01-15T00:00"), schedule, "UTC")
    assert from_effective(frames, frames[4].start, schedule, "UTC") == frames[4:]
    assert from_effective(frames, at("2027-01-15T00:00"), schedule, "UTC") == []


schedules = st.builds(
    Schedule,
    cadence=st.sampled_from([*CADENCE_MONTHS, *CADENCE_DAYS, "fullPay", "everyNDays"]),
    max_installments=st.one_of(st.none(), st.integers(1, 24)),
    generate_lead_days=st.integers(0, 40),
    due_lead_days=st.integers(0, 40),
    autopay_lead_days=st.integers(0, 5),
    anchor_type=st.sampled_from(["none", "dayOfMonth", "dayOfWeek"]),
    day_of_month=st.integers(1, 31),
    day_of_week=st.sampled_from(WEEKDAYS),
    every_n_days=st.integers(1, 90),
    anchor_mode=st.sampled_from(["termStartDay", "generateDay", "dueDay"]),
)


@settings(max_examples=300, deadline=None)
@given(
    schedule=schedules,
    start=st.datetimes(datetime(2020, 1, 1), datetime(2030, 1, 1)),
    days=st.integers(1, 800),
    zone=st.sampled_from(["UTC", NY, "Australia/Sydney"]),
)
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
    assert all(f.generate_time <= f.due_time for f in frames)


@settings(max_examples=300, deadline=None)
@given(
    schedule=schedules,
    start=st.datetimes(datetime(2020, 1, 1), datetime(2030, 1, 1)),
    days=st.integers(1, 800),
    zone=st.sampled_from(["UTC", NY, "Australia/Sydney"]),
    basis=st.sampled_from(durations.BASES),
)
def test_the_frames_measure_the_term(schedule, start, days, zone, basis):
    """Without an anchor the frames are measured from the term start, so together they are the term's
    duration in any basis; days, weeks and hours add up whatever the anchor."""
    term_start = start.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)
    term_end = term_start + timedelta(days=days)
    frames = term_frames(term_start, term_end, schedule, zone)
    measured = [coverage(f, f.start, f.end, basis, zone) for f in frames]
    assert all(m >= 0 for m in measured)
    if schedule.anchor_type == "none" or basis in ("days", "weeks", "hours"):
        assert abs(sum(measured) - durations.duration(term_start, term_end, basis, zone)) < Decimal("1e-20")


@settings(max_examples=200, deadline=None)
@given(
    cadence=st.sampled_from(list(CADENCE_MONTHS)),
    day=st.dates(date(2020, 1, 1), date(2030, 1, 1)),
    hour=st.sampled_from([0, 9, 12, 23]),
    steps=st.integers(1, 8),
    zone=st.sampled_from(["UTC", NY, "Australia/Sydney"]),
)
def test_every_whole_step_of_a_month_cadence_is_the_same_number_of_months(cadence, day, hour, steps, zone):
    """From any day of the month (the 29th to the 31st too) at an hour every day has on the wall clock (a cut
    in the hour a clock skips would read an hour late)."""
    months = CADENCE_MONTHS[cadence]
    term_start = datetime(day.year, day.month, day.day, hour, tzinfo=ZoneInfo(zone)).astimezone(UTC)
    term_end = durations.shift(term_start, months * steps, "months", zone)
    frames = term_frames(term_start, term_end, Schedule(cadence=cadence), zone)
    assert [coverage(f, f.start, f.end, "months", zone) for f in frames] == [Decimal(months)] * steps


@settings(max_examples=400, deadline=None)
@given(
    schedule=schedules,
    start=st.datetimes(datetime(2020, 1, 1), datetime(2030, 1, 1)),
    days=st.integers(1, 800),
    zone=st.sampled_from(["UTC", NY, "Australia/Sydney"]),
    effective_seconds=st.integers(0, 800 * 86_400),
    clock_days=st.integers(-60, 860),
    clock_seconds=st.integers(0, 86_399),
    defer=st.booleans(),
)
def test_a_frame_not_already_past_is_never_due_before_it_is_generated(
    schedule, start, days, zone, effective_seconds, clock_days, clock_seconds, defer
):
    """Any plan, any effective time in the term, any clock: billed now, a frame that starts now or later is
    generated at its time (or now, when that passed) and due no earlier; the first frame of a change is due
    at its start minus dueLeadDays unless that is before its generate time."""
    term_start = start.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)
    term_end = term_start + timedelta(days=days)
    effective = term_start + timedelta(seconds=effective_seconds % (days * 86_400))
    now = term_start + timedelta(days=clock_days, seconds=clock_seconds)
    frames = from_effective(term_frames(term_start, term_end, schedule, zone), effective, schedule, zone)
    first = frames[0]
    assert first.start == effective
    own_due = durations.shift(effective, -schedule.due_lead_days, "days", zone)
    assert first.due_time == max(own_due, first.generate_time)
    billed = backdated(frames, now, defer_due_date=defer, due_lead_days=schedule.due_lead_days)
    for before, frame in zip(frames, billed):
        assert frame.generate_time == max(before.generate_time, now)
        if frame.start >= now:
            assert frame.due_time >= frame.generate_time
            assert frame.due_time == max(before.due_time, now) or (defer and before.due_time < now)
        elif not defer:
            assert frame.due_time == before.due_time  # already past: billed with its own due time


@pytest.mark.parametrize("anchor_type", ["dayOfMonth", "dayOfWeek", "anchorTime"])
@pytest.mark.parametrize("mode", ["termStartDay", "generateDay", "dueDay"])
def test_an_anchor_type_without_its_value_counts_from_the_term_start(anchor_type, mode):
    """The preferences may name an anchor type without its day or moment: the term's frames are then those
    of no anchor, the first one whole and counted by the cap (it was not: 13 installments on a plan of 12)."""
    start, end = at("2026-01-15T00:00"), at("2027-03-15T00:00")
    plain = Schedule(cadence="monthly", max_installments=12, generate_lead_days=10, due_lead_days=5, anchor_mode=mode)
    frames = term_frames(start, end, replace(plain, anchor_type=anchor_type), "UTC")
    assert frames == term_frames(start, end, plain, "UTC")
    assert len(frames) == 12 and local_dates(frames)[:2] == ["2026-01-15", "2026-02-15"]
    assert (frames[-1].start, frames[-1].end) == (at("2026-12-15T00:00"), end)
