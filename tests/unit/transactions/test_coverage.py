"""What a policy holds by effective time, and what each category of transaction does to it."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest

from chalicelib.core.errors import InvalidRequest, InvalidState
from chalicelib.transactions.coverage import (
    Category,
    Effect,
    SegmentSpan,
    TermSpan,
    cancellation,
    effect,
    held,
    piece_at,
    terms,
)

UTC = timezone.utc


def at(month: int, day: int = 1, year: int = 2026) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


START, END = at(1), at(1, year=2027)
ISSUANCE = SegmentSpan("S0", "X0", START, END, 0)


def shape(spans: list[SegmentSpan]) -> list[tuple[str, datetime, datetime, bool]]:
    return [(p.segment_locator, p.start, p.end, p.gap) for p in held(spans)]


def apply(spans: list[SegmentSpan], category: Category, effective: datetime, name: str, **options) -> list[SegmentSpan]:
    done = effect(category, effective, spans, basis="months", time_zone="UTC", **options)
    return [*spans, done.span(f"S{name}", f"X{name}")]


def test_a_change_cuts_the_held_segment_to_a_prefix_and_holds_its_own_to_the_term_end():
    spans = apply([ISSUANCE], "change", at(4), "1")

    assert shape(spans) == [("S0", START, at(4), False), ("S1", at(4), END, False)]
    pieces = held(spans)
    assert pieces[0].segment_end == END and not pieces[0].whole and pieces[1].whole
    assert pieces[0].start == pieces[0].segment_start == START
    assert piece_at(pieces, at(3, 31)).segment_locator == "S0"
    assert piece_at(pieces, at(4)).segment_locator == "S1"
    assert piece_at(pieces, END) is None


def test_a_later_change_at_or_before_a_segments_start_drops_it():
    spans = apply(apply([ISSUANCE], "change", at(4), "1"), "change", at(4), "2")

    assert shape(spans) == [("S0", START, at(4), False), ("S2", at(4), END, False)]
    # a span starting before it (out of sequence, as held() sees a list) drops it too, and cuts the first
    assert shape([*spans, SegmentSpan("S3", "X3", at(2), END, 0)]) == [
        ("S0", START, at(2), False),
        ("S3", at(2), END, False),
    ]


def test_a_cancellation_leaves_a_gap_to_the_term_end_and_the_policy_is_cancelled():
    spans = apply(apply([ISSUANCE], "change", at(4), "1"), "cancellation", at(7), "2")

    assert shape(spans) == [("S0", START, at(4), False), ("S1", at(4), at(7), False), ("S2", at(7), END, True)]
    assert cancellation(held(spans)).transaction_locator == "X2"
    assert cancellation(held([ISSUANCE])) is None


def test_a_reinstatement_at_the_cancellation_time_restores_exactly_what_it_removed():
    spans = apply(apply([ISSUANCE], "change", at(4), "1"), "cancellation", at(7), "2")
    reinstated = effect("reinstatement", at(7), spans, basis="months", time_zone="UTC")

    assert reinstated == Effect("reinstatement", at(7), END, TermSpan(0, START, END), restores="X2")
    after = [*spans, reinstated.span("S3", "X3")]
    assert shape(after) == [("S0", START, at(4), False), ("S1", at(4), END, False)]
    assert held(after)[1].whole
    assert cancellation(held(after)) is None


def test_a_reinstatement_after_the_cancellation_time_leaves_a_gap_and_holds_a_new_segment():
    spans = apply(apply([ISSUANCE], "cancellation", at(7), "1"), "reinstatement", at(9), "2")

    assert spans[-1].restores is None and not spans[-1].gap
    assert shape(spans) == [("S0", START, at(7), False), ("S1", at(7), at(9), True), ("S2", at(9), END, False)]


def test_a_restored_segment_is_held_whole_and_a_later_change_cuts_it_again():
    spans = apply(
        apply(apply([ISSUANCE], "cancellation", at(7), "1"), "reinstatement", at(7), "2"), "change", at(10), "3"
    )

    assert shape(spans) == [("S0", START, at(10), False), ("S3", at(10), END, False)]


def test_a_renewal_opens_the_next_term_from_the_previous_end_for_the_term_duration():
    renewal = effect("renewal", END, [ISSUANCE], basis="months", time_zone="UTC")

    assert renewal == Effect("renewal", END, at(1, year=2028), TermSpan(1, END, at(1, year=2028)))
    spans = [ISSUANCE, renewal.span("S1", "X1")]
    assert terms(spans) == [TermSpan(0, START, END), TermSpan(1, END, at(1, year=2028))]
    assert effect("renewal", END, [ISSUANCE], basis="months", time_zone="UTC", term_duration=Decimal(6)).end == at(
        7, year=2027
    )
    # a change in the second term spans to its end, not the first's
    assert effect("change", at(3, year=2027), spans, basis="months", time_zone="UTC").term.number == 1


def test_a_renewal_counts_the_term_in_the_policys_zone_and_basis():
    # a term of 1.5 months from Jan 1 in New York (to Feb 15 is 1 + 14/28); from Feb 15, one month is Mar 15
    # and half of Mar 15 -> Apr 15 (31 days on the wall clock) is 15.5 days: Mar 30, noon local
    first = SegmentSpan("S0", "X0", datetime(2026, 1, 1, 5, tzinfo=UTC), datetime(2026, 2, 15, 5, tzinfo=UTC), 0)
    renewal = effect("renewal", first.end, [first], basis="months", time_zone="America/New_York")

    assert renewal.end == datetime(2026, 3, 30, 16, tzinfo=UTC)  # noon EDT, after the March 8 DST switch
    assert renewal.term.number == 1


def test_a_new_policy_end_moves_the_term_end_and_reversing_the_change_moves_it_back():
    shortened = effect("change", at(4), [ISSUANCE], basis="months", time_zone="UTC", new_end=at(10))

    assert shortened.term == TermSpan(0, START, at(10))
    spans = [ISSUANCE, shortened.span("S1", "X1")]
    assert shape(spans) == [("S0", START, at(4), False), ("S1", at(4), at(10), False)]
    assert terms(spans) == [TermSpan(0, START, at(10))]
    assert terms([ISSUANCE]) == [TermSpan(0, START, END)]
    extended = effect("change", at(4), [ISSUANCE], basis="months", time_zone="UTC", new_end=at(3, year=2027))
    assert (extended.end, extended.term.end) == (at(3, year=2027), at(3, year=2027))


@pytest.mark.parametrize(
    "category, effective, options, code",
    [
        ("change", at(12, 31, 2025), {}, "transaction.effective_time_outside_terms"),
        ("change", END, {}, "transaction.effective_time_outside_terms"),
        ("cancellation", at(2, year=2027), {}, "transaction.effective_time_outside_terms"),
        ("reinstatement", at(12, 1, 2025), {}, "transaction.effective_time_outside_terms"),
        ("renewal", at(12, 31), {}, "transaction.renewal_effective_time"),
        ("change", at(4), {"new_end": at(4)}, "transaction.policy_end_before_effective_time"),
        ("cancellation", at(4), {"new_end": at(10)}, "transaction.policy_end_not_changeable"),
    ],
)
def test_bad_effective_times_and_ends_are_400s_with_stable_codes(category, effective, options, code):
    with pytest.raises(InvalidRequest) as refused:
        effect(category, effective, [ISSUANCE], basis="months", time_zone="UTC", **options)

    assert refused.value.code == code


def test_the_states_that_forbid_a_transaction_are_409s_with_stable_codes():
    cancelled = apply([ISSUANCE], "cancellation", at(7), "1")

    def refused(category: Category, effective: datetime, spans: list[SegmentSpan]) -> str:
        with pytest.raises((InvalidState, InvalidRequest)) as error:
            effect(category, effective, spans, basis="months", time_zone="UTC")
        return f"{type(error.value).__name__} {error.value.code}"

    assert refused("reinstatement", at(7), [ISSUANCE]) == "InvalidState transaction.policy_not_cancelled"
    assert refused("renewal", END, cancelled) == "InvalidState transaction.policy_cancelled"
    assert refused("cancellation", at(7), cancelled) == "InvalidState transaction.policy_cancelled"
    assert refused("cancellation", at(9), cancelled) == "InvalidState transaction.policy_cancelled"
    assert refused("change", at(8), cancelled) == "InvalidState transaction.policy_cancelled"
    assert refused("reinstatement", at(6), cancelled) == "InvalidRequest transaction.reinstatement_before_cancellation"
    # before the cancellation a change or an earlier cancellation is allowed: it is out of sequence
    assert effect("change", at(6), cancelled, basis="months", time_zone="UTC").end == END
    assert effect("cancellation", at(6), cancelled, basis="months", time_zone="UTC").gap
    # a reinstated policy is no longer cancelled
    reinstated = apply(cancelled, "reinstatement", at(9), "2")
    assert refused("reinstatement", at(10), reinstated) == "InvalidState transaction.policy_not_cancelled"


def test_spans_no_stack_gives_are_refused():
    with pytest.raises(ValueError, match="restores X9, which was not issued before it"):
        held([ISSUANCE, SegmentSpan("S1", "X1", at(7), END, 0, restores="X9")])
    # the segment the cancellation cut was cut again at an earlier time since: restoring would hold its middle
    cancel = SegmentSpan("S1", "X1", at(7), END, 0, gap=True)
    with pytest.raises(ValueError, match="would restore segment S0 without its start"):
        held(
            [
                ISSUANCE,
                cancel,
                SegmentSpan("S2", "X2", at(5), END, 0, gap=True),
                SegmentSpan("S3", "X3", at(7), END, 0, restores="X1"),
            ]
        )
    with pytest.raises(ValueError, match="first term"):
        effect("change", at(4), [], basis="months", time_zone="UTC")
    with pytest.raises(ValueError, match="issued once"):
        effect("issuance", at(4), [ISSUANCE], basis="months", time_zone="UTC")
