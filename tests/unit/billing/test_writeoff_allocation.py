"""Settling invoices by a write-off and giving it back (writeoffs/allocation.py): targets in order, each for its
amount or all that remains on it; a target asking more than remains is refused; a reversal gives back the last
settled first."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from chalicelib.billing.invoices.models import InvoiceState
from chalicelib.billing.models import ContainerType, PaymentTarget
from chalicelib.billing.payments import allocation as payments
from chalicelib.billing.writeoffs import allocation as writeoffs
from chalicelib.billing.writeoffs.models import WriteOffAllocation
from chalicelib.core.errors import DomainError, FieldError
from tests.unit.billing.support import NOW, START, open_invoice

LATER = NOW + timedelta(hours=2)


def target(kind: ContainerType, locator: str = "A", amount: str | None = None) -> PaymentTarget:
    return PaymentTarget(
        containerLocator=locator, containerType=kind, amount=None if amount is None else Decimal(amount)
    )


ACCOUNT = target(ContainerType.ACCOUNT)


def two_invoices():
    """February's (premium 60.00, tax 40.00) and March's (premium 80.00), both open."""
    february = open_invoice("INV1", START, [("INV1-premium", "60.00"), ("INV1-tax", "40.00")])
    march = open_invoice("INV2", START + timedelta(days=28), [("INV2-premium", "80.00")])
    return february, march, {"INV1": february, "INV2": march}


def test_what_remains_on_the_account_an_invoice_and_an_item():
    february, march, invoices = two_invoices()
    refund = open_invoice("INV3", START, [("INV3-refund", "-25.00")])
    invoices["INV3"] = refund
    oldest_first = [february, refund, march]
    payments.post(Decimal("70.00"), [target(ContainerType.INVOICE, "INV1")], invoices, oldest_first, NOW)
    assert writeoffs.remaining_on(ACCOUNT, invoices, oldest_first) == Decimal("110.00")  # the refund counts 0
    assert writeoffs.remaining_on(target(ContainerType.INVOICE, "INV1"), invoices, oldest_first) == Decimal("30.00")
    assert writeoffs.remaining_on(target(ContainerType.INVOICE, "INV3"), invoices, oldest_first) == 0
    assert writeoffs.remaining_on(target(ContainerType.INVOICE_ITEM, "INV1-tax"), invoices, oldest_first) == Decimal(
        "30.00"
    )
    assert writeoffs.remaining_on(target(ContainerType.INVOICE_ITEM, "INV3-refund"), invoices, oldest_first) == 0
    payments.post(Decimal("30.00"), [target(ContainerType.INVOICE, "INV1")], invoices, oldest_first, NOW)
    assert writeoffs.remaining_on(ACCOUNT, invoices, oldest_first) == Decimal("80.00")  # a settled invoice is not
    assert writeoffs.remaining_on(target(ContainerType.INVOICE, "INV1"), invoices, oldest_first) == 0


def test_a_settled_invoice_counts_nothing_though_an_item_of_it_has_something_left():
    invoice = open_invoice("INV3", START, [("credit", "-30.00"), ("premium", "100.00")])
    invoices = {"INV3": invoice}
    assert writeoffs.remaining_on(target(ContainerType.INVOICE_ITEM, "premium"), invoices, [invoice]) == Decimal(
        "70.00"
    )  # no more than the invoice owes
    payments.post(Decimal("70.00"), [target(ContainerType.INVOICE, "INV3")], invoices, [invoice], NOW)
    assert invoice.invoiceState == InvoiceState.SETTLED
    assert writeoffs.remaining_on(target(ContainerType.INVOICE_ITEM, "premium"), invoices, [invoice]) == 0
    invoice.totalRemainingAmount = Decimal("30.00")  # what a reversal elsewhere may leave on a settled one
    assert writeoffs.remaining_on(target(ContainerType.INVOICE, "INV3"), invoices, [invoice]) == 0


def test_the_invoice_of_an_item():
    february, march, invoices = two_invoices()
    assert writeoffs.invoice_of_item(invoices, "INV2-premium") is march
    assert writeoffs.invoice_of_item(invoices, "INV1-tax") is february
    assert writeoffs.invoice_of_item(invoices, "nowhere") is None


def test_targets_are_settled_in_order_each_for_its_amount_or_all_that_remains():
    february, march, invoices = two_invoices()
    allocations, taken = writeoffs.write_off(
        [
            target(ContainerType.INVOICE_ITEM, "INV2-premium", "30.00"),
            target(ContainerType.ACCOUNT, "A", "70.00"),
            target(ContainerType.INVOICE, "INV2"),
        ],
        invoices,
        [february, march],
        NOW,
    )
    assert taken == [Decimal("30.00"), Decimal("70.00"), Decimal("50.00")]
    assert [(a.invoiceLocator, a.itemAmounts) for a in allocations] == [
        ("INV2", {"INV2-premium": Decimal("80.00")}),
        ("INV1", {"INV1-premium": Decimal("60.00"), "INV1-tax": Decimal("10.00")}),
    ]
    assert (march.invoiceState, march.settledTime) == (InvoiceState.SETTLED, NOW)
    assert february.totalRemainingAmount == Decimal("30.00")


def test_an_account_target_without_an_amount_settles_every_open_invoice():
    february, march, invoices = two_invoices()
    allocations, taken = writeoffs.write_off([ACCOUNT], invoices, [february, march], NOW)
    assert taken == [Decimal("180.00")]
    assert [a.amount for a in allocations] == [Decimal("100.00"), Decimal("80.00")]
    assert february.invoiceState == march.invoiceState == InvoiceState.SETTLED


@pytest.mark.parametrize(
    "ask, message", [("100.01", "it cannot take 100.01"), ("0", "it cannot take 0"), ("-5.00", "it cannot take -5.00")]
)
def test_a_target_asking_more_than_remains_or_nothing_is_refused(ask, message):
    february, march, invoices = two_invoices()
    with pytest.raises(DomainError) as raised:
        writeoffs.write_off(
            [target(ContainerType.INVOICE, "INV2", "10.00"), target(ContainerType.INVOICE, "INV1", ask)],
            invoices,
            [february, march],
            NOW,
        )
    assert raised.value.code == "writeOff.exceeds_remaining"
    assert raised.value.message == f"Target INV1 has 100.00 remaining; {message}"
    assert raised.value.field_errors == [FieldError("targets[1]", "100.00 remaining")]


def test_a_target_with_nothing_left_on_it_is_refused():
    february, march, invoices = two_invoices()
    writeoffs.write_off([target(ContainerType.INVOICE, "INV1")], invoices, [february, march], NOW)
    with pytest.raises(DomainError) as raised:
        writeoffs.write_off([target(ContainerType.INVOICE, "INV1")], invoices, [february, march], NOW)
    assert raised.value.message == "Target INV1 has 0 remaining; it cannot take 0"


def test_a_target_may_take_exactly_what_remains():
    february, march, invoices = two_invoices()
    _, taken = writeoffs.write_off([target(ContainerType.INVOICE, "INV1", "100.00")], invoices, [february, march], NOW)
    assert taken == [Decimal("100.00")] and february.invoiceState == InvoiceState.SETTLED


def written_off():
    """A write-off of 30.00 on March's premium, then all of February (premium 60.00, tax 40.00)."""
    february, march, invoices = two_invoices()
    allocations, _ = writeoffs.write_off(
        [target(ContainerType.INVOICE_ITEM, "INV2-premium", "30.00"), target(ContainerType.INVOICE, "INV1")],
        invoices,
        [february, march],
        NOW,
    )
    return february, march, invoices, allocations


def test_a_reversal_gives_back_the_last_settled_first():
    february, march, invoices, allocations = written_off()
    touched = writeoffs.take_back(allocations, Decimal("50.00"), invoices, LATER)
    assert touched == [february]
    assert [(i.remainingAmount, i.unsettledTime) for i in february.invoiceItems] == [
        (Decimal("10.00"), LATER),
        (Decimal("40.00"), LATER),
    ]
    assert (february.invoiceState, february.unsettledTime) == (InvoiceState.OPEN, LATER)
    assert allocations[1].reversedItemAmounts == {"INV1-premium": Decimal("10.00"), "INV1-tax": Decimal("40.00")}
    assert allocations[0].reversedItemAmounts == {}


def test_a_reversal_goes_on_to_the_earlier_invoices_and_adds_to_what_was_given_back():
    february, march, invoices, allocations = written_off()
    writeoffs.take_back(allocations, Decimal("30.00"), invoices, LATER)
    assert allocations[1].reversedItemAmounts == {"INV1-tax": Decimal("30.00")}
    touched = writeoffs.take_back(allocations, Decimal("85.00"), invoices, LATER)
    assert touched == [february, march]
    assert allocations[1].reversedItemAmounts == {"INV1-premium": Decimal("60.00"), "INV1-tax": Decimal("40.00")}
    assert allocations[0].reversedItemAmounts == {"INV2-premium": Decimal("15.00")}
    assert march.totalRemainingAmount == Decimal("65.00")
    assert writeoffs.take_back(allocations, Decimal("15.00"), invoices, LATER) == [march]
    assert allocations[0].held_amount == 0 and march.totalRemainingAmount == Decimal("80.00")


def test_a_reversal_stops_once_it_is_given_back():
    february, march, invoices, allocations = written_off()
    before = march.model_copy(deep=True)
    assert writeoffs.take_back(allocations, Decimal("100.00"), invoices, LATER) == [february]
    assert march == before and allocations[0].reversedItemAmounts == {}


def test_a_reversal_cannot_give_back_more_than_the_write_off_settled():
    february, march, invoices, allocations = written_off()
    with pytest.raises(AssertionError):
        writeoffs.take_back(allocations, Decimal("130.01"), invoices, LATER)


def test_what_a_reversal_gave_back_already_is_not_given_twice():
    allocation = WriteOffAllocation(
        invoiceLocator="INV1",
        itemAmounts={"a": Decimal("10.00"), "b": Decimal("5.00")},
        reversedItemAmounts={"b": Decimal("5.00")},
    )
    invoice = open_invoice("INV1", START, [("a", "10.00"), ("b", "5.00")])
    payments.post(Decimal("10.00"), [target(ContainerType.INVOICE_ITEM, "a")], {"INV1": invoice}, [invoice], NOW)
    assert writeoffs.take_back([allocation], Decimal("4.00"), {"INV1": invoice}, LATER) == [invoice]
    assert allocation.reversedItemAmounts == {"a": Decimal("4.00"), "b": Decimal("5.00")}
    assert [i.remainingAmount for i in invoice.invoiceItems] == [Decimal("4.00"), Decimal("5.00")]


def test_a_write_off_and_its_reversal_to_the_cent():
    february, march, invoices = two_invoices()
    allocations, taken = writeoffs.write_off(
        [target(ContainerType.INVOICE, "INV2", "0.50"), target(ContainerType.INVOICE, "INV1")],
        invoices,
        [february, march],
        NOW,
    )
    assert taken == [Decimal("0.50"), Decimal("100.00")]
    assert writeoffs.take_back(allocations, Decimal("100.25"), invoices, LATER) == [february, march]
    assert allocations[0].reversedItemAmounts == {"INV2-premium": Decimal("0.25")}
    assert march.totalRemainingAmount == Decimal("79.75")
    assert writeoffs.take_back(allocations, Decimal("0.25"), invoices, LATER) == [march]
    assert march.totalRemainingAmount == Decimal("80.00")
