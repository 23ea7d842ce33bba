"""The adjustments a history issued elsewhere (a migration's) carries as issuing it here would have left them
(timeline.history_adjustments): a transaction's charges are its segment's rated ones, and each later transaction
adjusts what it cuts or gives back, so that the history's charges add up to the coverage it holds."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest

from chalicelib.policies.models import Segment, Term, Transaction, TransactionCategory, TransactionState
from chalicelib.priceable.models import Charge, Element, SegmentType
from chalicelib.transactions.timeline import history_adjustments

START, END = datetime(2026, 1, 1, tzinfo=timezone.utc), datetime(2027, 1, 1, tzinfo=timezone.utc)
TERM = Term(locator="T0", staticLocator="T0", policyLocator="P", number=0, startTime=START, endTime=END)


def _charge(locator: str, rate: str, amount: str) -> Charge:
    return Charge(
        locator=locator,
        elementLocator="V1",
        elementStaticLocator="V",
        chargeType="premium",
        chargeCategory="premium",
        rate=Decimal(rate),
        amount=Decimal(amount),
    )


def _issued(locator: str, category: TransactionCategory, at: datetime, *charges: Charge) -> tuple[Transaction, Segment]:
    transaction = Transaction(
        locator=locator,
        staticLocator=locator,
        policyLocator="P",
        termLocator="T0",
        effectiveTime=at,
        transactionState=TransactionState.ISSUED,
        transactionCategory=category,
        transactionType=str(category),
        createdAt=at,
        createdBy="someone",
        charges=list(charges),
        configVersion="1",
    )
    gap = category == TransactionCategory.CANCELLATION
    segment = Segment(
        locator=f"{locator}-s",
        segmentType=SegmentType.GAP if gap else SegmentType.COVERAGE,
        startTime=at,
        endTime=END,
        transactionLocator=locator,
        policyLocator="P",
        termLocator="T0",
        duration=Decimal(12),  # not read: the adjustments prorate by the segment's times
        element=Element(locator=f"{locator}-root", staticLocator="root", type="PersonalAuto"),
    )
    return transaction, segment


def _amounts(history: list[tuple[Transaction, Segment]]) -> list[list[tuple[Decimal, str | None]]]:
    adjusted = history_adjustments("months", "UTC", "USD", [TERM], history, lambda t, n: f"{t.locator}-a{n}")
    return [[(charge.amount, charge.reversalOfLocator) for charge in charges] for charges in adjusted]


def test_a_change_gives_back_what_it_cuts_and_a_cancellation_and_its_reinstatement_cancel_out():
    july, october = datetime(2026, 7, 1, tzinfo=timezone.utc), datetime(2026, 10, 1, tzinfo=timezone.utc)
    history = [
        _issued("I", TransactionCategory.ISSUANCE, START, _charge("c1", "10", "120.00")),
        _issued("C", TransactionCategory.CHANGE, july, _charge("c2", "20", "120.00")),
        _issued("X", TransactionCategory.CANCELLATION, october),
        _issued("R", TransactionCategory.REINSTATEMENT, october),
    ]
    assert _amounts(history) == [
        [],
        [(Decimal("-60.00"), "c1")],  # the issuance's second half
        [(Decimal("-60.00"), "c2")],  # the change's last quarter
        [(Decimal("60.00"), "c2")],  # given back at the cancellation's time
    ]


def test_a_reinstatement_at_its_cancellations_time_rating_charges_of_its_own_is_refused():
    october = datetime(2026, 10, 1, tzinfo=timezone.utc)
    history = [
        _issued("I", TransactionCategory.ISSUANCE, START, _charge("c1", "10", "120.00")),
        _issued("X", TransactionCategory.CANCELLATION, october),
        _issued("R", TransactionCategory.REINSTATEMENT, october, _charge("c3", "10", "30.00")),
    ]
    with pytest.raises(ValueError, match="transaction 2 \\(reinstatement\\) does not follow the ones before it"):
        _amounts(history)
