"""Which issued transaction and segment show a policy at a moment, by effective or by issued time."""

from __future__ import annotations

from datetime import datetime, timezone

from chalicelib.policies.models import SegmentSummary, Transaction
from chalicelib.policies.stack import segment_at


def at(month: int, day: int = 1, year: int = 2026) -> datetime:
    return datetime(year, month, day, tzinfo=timezone.utc)


def transaction(
    locator: str, issued: datetime, *spans: tuple[str, datetime, datetime], category: str = "change"
) -> Transaction:
    return Transaction(
        locator=locator,
        staticLocator=locator,
        policyLocator="P",
        termLocator="T",
        effectiveTime=spans[0][1],
        transactionState="issued",
        transactionCategory=category,
        transactionType=category,
        createdAt=issued,
        createdBy="U",
        issuedTime=issued,
        configVersion="1",
        segments=[
            SegmentSummary(locator=s, segmentType="coverage", startTime=start, endTime=end) for s, start, end in spans
        ],
    )


# issued Jan 10: a year from Feb 1; issued Mar 10: a change from Apr 1 to the end of the term
ISSUANCE = transaction("X1", at(1, 10), ("S1", at(2), at(2, year=2027)), category="issuance")
CHANGE = transaction("X2", at(3, 10), ("S2", at(4), at(2, year=2027)))
STACK = [ISSUANCE, CHANGE]


def located(found):
    return None if found is None else (found[0].locator, found[1].locator)


def test_by_effective_time_the_latest_transaction_spanning_the_moment_answers():
    assert located(segment_at(STACK, at(2))) == ("X1", "S1")
    assert located(segment_at(STACK, at(3, 31))) == ("X1", "S1")
    assert located(segment_at(STACK, at(4))) == ("X2", "S2")  # the change replaces the rest of the term
    assert located(segment_at(STACK, at(1, 31))) is None  # before the start
    assert located(segment_at(STACK, at(2, year=2027))) is None  # the end is outside


def test_by_issued_time_the_latest_transaction_issued_by_then_answers():
    assert located(segment_at(STACK, at(1, 9), by_issued_time=True)) is None
    assert located(segment_at(STACK, at(1, 10), by_issued_time=True)) == ("X1", "S1")
    assert located(segment_at(STACK, at(3, 9), by_issued_time=True)) == ("X1", "S1")
    assert located(segment_at(STACK, at(6), by_issued_time=True)) == ("X2", "S2")


def test_an_empty_stack_answers_nothing():
    assert segment_at([], at(6)) is None
    assert segment_at([], at(6), by_issued_time=True) is None
