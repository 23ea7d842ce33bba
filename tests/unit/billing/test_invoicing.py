"""The pure billing calculators: spreading charges over frames, grouping installments into invoices,
putting payments on invoices and taking them back."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.billing.installments import allocation, lattice
from chalicelib.billing.invoices import generator
from chalicelib.billing.invoices.models import InvoiceState
from chalicelib.billing.models import ContainerType, PaymentTarget
from chalicelib.billing.payments import allocation as payments
from tests.unit.billing.support import NOW, START, installment

END = datetime(2027, 2, 1, 5, tzinfo=timezone.utc)
MONTHLY = lattice.Schedule(cadence="monthly", max_installments=12)


ZONE = "America/New_York"


def frames():
    return lattice.term_frames(START, END, MONTHLY, ZONE)


def billable(locator: str, amount: str, spread: bool = True) -> allocation.Billable:
    return allocation.Billable(locator, Decimal(amount), START, END, spread)


cents = st.integers(min_value=-(10**9), max_value=10**9).map(lambda c: Decimal(c).scaleb(-2))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(cents, min_size=1, max_size=6),
    st.integers(min_value=0, max_value=11),
    st.sampled_from(["years", "months", "weeks", "days", "hours"]),
)
def test_every_charge_is_billed_whole_over_the_frames_it_is_spread_on(amounts, effective_month, basis):
    billed = lattice.from_effective(frames(), frames()[effective_month].start + timedelta(days=3), MONTHLY, ZONE)
    shares = allocation.spread(
        [billable(f"c{i}", str(a)) for i, a in enumerate(amounts)], billed, "USD", basis=basis, time_zone=ZONE
    )
    for index, amount in enumerate(amounts):
        parts = [share.get(f"c{index}", Decimal(0)) for share in shares]
        assert sum(parts) == amount
        assert all(part == part.quantize(Decimal("0.01")) for part in parts)


def test_a_charge_billed_whole_falls_on_the_first_frame():
    shares = allocation.spread(
        [billable("flat", "25.00", spread=False), billable("premium", "1200.00")],
        frames(),
        "USD",
        basis="months",
        time_zone=ZONE,
    )
    assert shares[0]["flat"] == Decimal("25.00")
    assert all("flat" not in share for share in shares[1:])
    assert sum(share["premium"] for share in shares) == Decimal("1200.00")


def test_each_whole_month_of_a_months_basis_policy_carries_the_same_amount():
    """648.00 over twelve months from Feb 1 (New York): 54.00 each, February as much as March. Weighted by
    days (a days-basis policy), February's 28 of 365 are 49.71 and March's 31 are 55.04; by hours, March
    loses the hour of daylight saving: 743 of 8760 are 54.96 (what weighting by seconds gave every basis)."""
    shares = allocation.spread([billable("premium", "648.00")], frames(), "USD", basis="months", time_zone=ZONE)
    assert [share["premium"] for share in shares] == [Decimal("54.00")] * 12
    assert allocation.normalized_weights(frames(), basis="months", time_zone=ZONE) == [Decimal("0.083333")] * 12
    by_days = allocation.spread([billable("premium", "648.00")], frames(), "USD", basis="days", time_zone=ZONE)
    assert [share["premium"] for share in by_days[:3]] == [Decimal("49.71"), Decimal("55.04"), Decimal("53.26")]
    by_hours = allocation.spread([billable("premium", "648.00")], frames(), "USD", basis="hours", time_zone=ZONE)
    assert [share["premium"] for share in by_hours[:3]] == [Decimal("49.71"), Decimal("54.96"), Decimal("53.26")]


def test_a_change_effective_mid_month_bills_its_fraction_of_the_month_then_whole_months():
    """A 100.00 change effective Feb 20 to the term end (Feb 1 next year): Feb 20 to Mar 1 is 9/28 of a month,
    then eleven whole months: 100 x 9/317 = 2.84, 100 x 28/317 = 8.83 each, the remainder 8.86 on the last."""
    change = lattice.from_effective(frames(), START + timedelta(days=19), MONTHLY, ZONE)
    span = allocation.Billable("change", Decimal("100.00"), change[0].start, END, True)
    shares = allocation.spread([span], change, "USD", basis="months", time_zone=ZONE)
    assert [share["change"] for share in shares] == [Decimal("2.84"), *[Decimal("8.83")] * 10, Decimal("8.86")]


def test_backdated_frames_are_generated_now_and_deferred_due_dates_move_after_now():
    late = NOW + timedelta(days=60)
    immediate = allocation.backdated(frames(), late, defer_due_date=False, due_lead_days=5)
    assert immediate[0].generate_time == late and immediate[0].due_time == frames()[0].due_time
    assert immediate[3].generate_time == frames()[3].generate_time
    deferred = allocation.backdated(frames(), late, defer_due_date=True, due_lead_days=5)
    assert deferred[0].due_time == late + timedelta(days=5)


def test_a_frame_starting_later_whose_generate_time_passed_is_due_no_earlier_than_now():
    """Generated 30 days ahead and due 20: billed 10 days before it starts, a frame is invoiced now and due
    now (not 10 days ago); one already started keeps its own due time."""
    schedule = lattice.Schedule(cadence="monthly", generate_lead_days=30, due_lead_days=20)
    planned = lattice.term_frames(START, END, schedule, ZONE)
    now = planned[2].start - timedelta(days=10)
    billed = allocation.backdated(planned, now, defer_due_date=False, due_lead_days=20)
    assert (billed[2].generate_time, billed[2].due_time, billed[2].autopay_time) == (now, now, now)
    assert (billed[1].generate_time, billed[1].due_time) == (now, planned[1].due_time)
    assert billed[1].due_time < now
    assert billed[3] == planned[3]


def test_installments_due_together_in_one_container_make_one_invoice_with_summed_items():
    first = installment("I1", START, [("E1", "premium", "100.00"), ("E2", "tax", "2.00")])
    change = installment("I2", START, [("E1", "premium", "-30.00")])
    later = installment("I3", START + timedelta(days=31), [("E1", "premium", "100.00")])
    other_policy = installment("I4", START, [("E9", "premium", "50.00")], container="P2", policy="P2")
    invoices = generator.generate([later, change, first, other_policy], NOW, "u")
    assert [(i.billingContainer, i.dueTime, i.totalAmount) for i in invoices] == [
        ("A", START, Decimal("72.00")),
        ("P2", START, Decimal("50.00")),
        ("A", START + timedelta(days=31), Decimal("100.00")),
    ]
    premium = next(item for item in invoices[0].invoiceItems if item.chargeType == "premium")
    assert premium.amount == Decimal("70.00")
    assert premium.installmentItemLocators == ["I1-0", "I2-0"]
    assert premium.transactionLocators == ["TI1", "TI2"]
    assert first.invoiceLocator == change.invoiceLocator == invoices[0].locator
    assert first.installmentItems[0].invoiceItemLocator == premium.locator
    again = generator.generate(
        [
            installment("I1", START, [("E1", "premium", "100.00"), ("E2", "tax", "2.00")]),
            installment("I2", START, [("E1", "premium", "-30.00")]),
        ],
        NOW,
        "u",
    )
    assert again[0].locator == invoices[0].locator  # the same installments make the same invoice


def test_a_payment_pays_targets_in_order_and_leaves_the_rest_for_credit():
    older, newer = generator.generate(
        [
            installment("I1", START, [("E1", "premium", "100.00")]),
            installment("I2", START + timedelta(days=31), [("E1", "premium", "80.00")]),
        ],
        NOW,
        "u",
    )
    invoices = {older.locator: older, newer.locator: newer}
    applied, left = payments.post(
        Decimal("200.00"),
        [PaymentTarget(containerLocator="A", containerType=ContainerType.ACCOUNT)],
        invoices,
        [older, newer],
        NOW,
    )
    assert [(a.invoice.locator, a.amount) for a in applied] == [
        (older.locator, Decimal("100.00")),
        (newer.locator, Decimal("80.00")),
    ]
    assert left == Decimal("20.00")
    assert older.invoiceState == newer.invoiceState == InvoiceState.SETTLED
    payments.take_back(newer, applied[1].item_amounts, NOW)
    assert newer.invoiceState == InvoiceState.OPEN and newer.totalRemainingAmount == Decimal("80.00")


def test_an_invoice_takes_no_more_than_it_owes_when_an_item_is_negative():
    [invoice] = generator.generate(
        [installment("I1", START, [("E1", "premium", "100.00"), ("E1", "tax", "-30.00")])], NOW, "u"
    )
    applied, left = payments.post(
        Decimal("100.00"),
        [PaymentTarget(containerLocator=invoice.locator, containerType=ContainerType.INVOICE)],
        {invoice.locator: invoice},
        [invoice],
        NOW,
    )
    assert applied[0].amount == Decimal("70.00") and left == Decimal("30.00")
    assert invoice.invoiceState == InvoiceState.SETTLED and invoice.totalRemainingAmount == 0


def test_a_negative_invoice_settles_into_credit():
    [invoice] = generator.generate([installment("I1", START, [("E1", "premium", "-40.00")])], NOW, "u")
    assert payments.settle_into_credit(invoice, NOW) == Decimal("40.00")
    assert invoice.invoiceState == InvoiceState.SETTLED and invoice.creditedAmount == Decimal("40.00")


def test_a_lattice_without_frames_is_refused():
    with pytest.raises(ValueError, match="^a lattice has at least one frame$"):
        allocation.spread([billable("premium", "10.00")], [], "USD", basis="months", time_zone=ZONE)


def test_a_charge_covering_no_frame_falls_whole_on_the_first():
    """A reversal of coverage before the lattice (December) is billed once, on the first frame."""
    before = allocation.Billable(
        "reversal", Decimal("-30.00"), START - timedelta(days=60), START - timedelta(days=30), True
    )
    shares = allocation.spread([before, billable("premium", "120.00")], frames(), "USD", basis="days", time_zone=ZONE)
    assert shares[0]["reversal"] == Decimal("-30.00")
    assert all("reversal" not in share for share in shares[1:])


def test_normalized_weights_are_weight_times_duration_over_the_sum():
    """Quarters of 89, 92, 92 and 92 days weighted 3, 2, 1, 1: 267, 184, 92 and 92 of 635."""
    quarterly = lattice.Schedule(cadence="quarterly", weights=(Decimal(3), Decimal(2)))
    quarters = lattice.term_frames(START, END, quarterly, ZONE)
    assert allocation.normalized_weights(quarters, basis="days", time_zone=ZONE) == [
        Decimal("0.420472"),
        Decimal("0.289764"),
        Decimal("0.144882"),
        Decimal("0.144882"),
    ]
    unweighted = lattice.term_frames(START, END, lattice.Schedule(cadence="quarterly", weights=(Decimal(0),) * 4), ZONE)
    assert allocation.normalized_weights(unweighted, basis="days", time_zone=ZONE) == [Decimal(0)] * 4


def test_a_frame_starting_just_as_it_is_billed_late_is_due_now():
    schedule = lattice.Schedule(cadence="monthly", generate_lead_days=10, due_lead_days=5)
    planned = lattice.term_frames(START, END, schedule, ZONE)
    now = planned[2].start
    billed = allocation.backdated(planned, now, defer_due_date=False, due_lead_days=5)
    assert (billed[2].generate_time, billed[2].due_time, billed[2].autopay_time) == (now, now, now)


def test_a_deferred_frame_due_just_as_it_is_billed_keeps_its_due_time():
    schedule = lattice.Schedule(cadence="monthly", generate_lead_days=10, due_lead_days=5)
    planned = lattice.term_frames(START, END, schedule, ZONE)
    now = planned[2].due_time
    billed = allocation.backdated(planned, now, defer_due_date=True, due_lead_days=5)
    assert (billed[2].generate_time, billed[2].due_time) == (now, now)
    assert billed[1].due_time == now + timedelta(days=5)
