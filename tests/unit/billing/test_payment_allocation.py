"""Putting a payment on invoices and taking it back (payments/allocation.py): targets in order, each capped by
its amount; the account's open invoices oldest due first, an invoice's items in order; what is left goes to
credit; an invoice reaching 0 is settled, and taking money back opens it again."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from chalicelib.billing.invoices.models import InvoiceState
from chalicelib.billing.models import ContainerType, PaymentTarget
from chalicelib.billing.payments import allocation as payments
from chalicelib.core.errors import DomainError
from tests.unit.billing.support import NOW, START, open_invoice

LATER = NOW + timedelta(hours=2)


def target(kind: ContainerType, locator: str = "A", amount: str | None = None) -> PaymentTarget:
    return PaymentTarget(
        containerLocator=locator, containerType=kind, amount=None if amount is None else Decimal(amount)
    )


def account(amount: str | None = None) -> PaymentTarget:
    return target(ContainerType.ACCOUNT, "A", amount)


def two_invoices():
    """February's (premium 60.00, tax 40.00) and March's (premium 80.00)."""
    february = open_invoice("INV1", START, [("INV1-premium", "60.00"), ("INV1-tax", "40.00")])
    march = open_invoice("INV2", START + timedelta(days=28), [("INV2-premium", "80.00")])
    return february, march, {"INV1": february, "INV2": march}


def test_an_account_payment_pays_the_oldest_invoice_first_and_its_items_in_order():
    february, march, invoices = two_invoices()
    applied, left = payments.post(Decimal("130.00"), [account()], invoices, [february, march], NOW)
    assert left == 0
    assert [(a.invoice.locator, a.amount, a.item_amounts) for a in applied] == [
        ("INV1", Decimal("100.00"), {"INV1-premium": Decimal("60.00"), "INV1-tax": Decimal("40.00")}),
        ("INV2", Decimal("30.00"), {"INV2-premium": Decimal("30.00")}),
    ]
    assert (february.invoiceState, february.totalRemainingAmount, february.settledTime) == (
        InvoiceState.SETTLED,
        0,
        NOW,
    )
    assert [(i.remainingAmount, i.settlementTime) for i in february.invoiceItems] == [(0, NOW), (0, NOW)]
    assert (march.invoiceState, march.totalRemainingAmount, march.settledTime) == (
        InvoiceState.OPEN,
        Decimal("50.00"),
        None,
    )
    assert (march.invoiceItems[0].remainingAmount, march.invoiceItems[0].settlementTime) == (Decimal("50.00"), None)


def test_a_partly_paid_item_stays_unsettled():
    february, _, invoices = two_invoices()
    applied, left = payments.post(Decimal("75.00"), [target(ContainerType.INVOICE, "INV1")], invoices, [], NOW)
    assert (applied[0].item_amounts, left) == ({"INV1-premium": Decimal("60.00"), "INV1-tax": Decimal("15.00")}, 0)
    assert [(i.remainingAmount, i.settlementTime) for i in february.invoiceItems] == [
        (0, NOW),
        (Decimal("25.00"), None),
    ]
    assert february.invoiceState == InvoiceState.OPEN and february.totalRemainingAmount == Decimal("25.00")


def test_a_targets_amount_caps_what_it_takes_and_the_next_target_gets_the_rest():
    february, march, invoices = two_invoices()
    applied, left = payments.post(
        Decimal("150.00"),
        [target(ContainerType.INVOICE, "INV2", "50.00"), account("70.00"), target(ContainerType.INVOICE, "INV2")],
        invoices,
        [february, march],
        NOW,
    )
    assert [(a.invoice.locator, a.amount) for a in applied] == [("INV2", Decimal("80.00")), ("INV1", Decimal("70.00"))]
    assert applied[0].item_amounts == {"INV2-premium": Decimal("80.00")}  # both of its targets' parts
    assert left == 0 and february.totalRemainingAmount == Decimal("30.00")


def test_an_account_target_capped_below_the_oldest_invoice_leaves_the_newer_one_alone():
    february, march, invoices = two_invoices()
    applied, left = payments.post(Decimal("200.00"), [account("100.00")], invoices, [february, march], NOW)
    assert [(a.invoice.locator, a.amount) for a in applied] == [("INV1", Decimal("100.00"))]
    assert left == Decimal("100.00") and march.totalRemainingAmount == Decimal("80.00")


def test_an_item_target_pays_that_item_only():
    february, march, invoices = two_invoices()
    applied, left = payments.post(
        Decimal("50.00"), [target(ContainerType.INVOICE_ITEM, "INV1-tax")], invoices, [february, march], NOW
    )
    assert [(a.invoice.locator, a.item_amounts) for a in applied] == [("INV1", {"INV1-tax": Decimal("40.00")})]
    assert left == Decimal("10.00")
    assert [i.remainingAmount for i in february.invoiceItems] == [Decimal("60.00"), 0]


def test_what_the_targets_do_not_take_is_left_and_a_settled_invoice_takes_nothing():
    february, march, invoices = two_invoices()
    payments.post(Decimal("100.00"), [target(ContainerType.INVOICE, "INV1")], invoices, [], NOW)
    applied, left = payments.post(Decimal("20.00"), [target(ContainerType.INVOICE, "INV1")], invoices, [], LATER)
    assert (applied, left) == ([], Decimal("20.00"))
    assert february.settledTime == NOW
    applied, left = payments.post(
        Decimal("90.00"), [account(), target(ContainerType.INVOICE, "INV1")], invoices, [february, march], LATER
    )
    assert [(a.invoice.locator, a.amount) for a in applied] == [("INV2", Decimal("80.00"))]
    assert left == Decimal("10.00")


def test_nothing_is_posted_once_the_money_is_spent():
    february, march, invoices = two_invoices()
    applied, left = payments.post(
        Decimal("100.00"),
        [target(ContainerType.INVOICE, "INV1"), target(ContainerType.SUBPAYMENT, "S1")],
        invoices,
        [],
        NOW,
    )
    assert [(a.invoice.locator, a.amount) for a in applied] == [("INV1", Decimal("100.00"))] and left == 0


def test_a_payment_cannot_target_a_subpayment():
    _, _, invoices = two_invoices()
    with pytest.raises(DomainError) as raised:
        payments.post(Decimal("10.00"), [target(ContainerType.SUBPAYMENT, "S1")], invoices, [], NOW)
    assert raised.value.code == "payment.invalid_target"
    assert raised.value.message == "A payment cannot target a subpayment"


def test_a_negative_item_lowers_what_an_invoice_takes_and_its_items_after_it_are_paid():
    invoice = open_invoice("INV3", START, [("credit", "-30.00"), ("premium", "100.00"), ("tax", "5.00")])
    applied, left = payments.post(
        Decimal("100.00"), [target(ContainerType.INVOICE, "INV3")], {"INV3": invoice}, [invoice], NOW
    )
    assert applied[0].item_amounts == {"premium": Decimal("75.00")}
    assert (applied[0].amount, left) == (Decimal("75.00"), Decimal("25.00"))
    assert invoice.invoiceState == InvoiceState.SETTLED
    assert [i.remainingAmount for i in invoice.invoiceItems] == [Decimal("-30.00"), Decimal("25.00"), Decimal("5.00")]


def test_an_invoice_owing_nothing_takes_nothing():
    invoice = open_invoice("INV3", START, [("credit", "-30.00"), ("premium", "30.00")])
    applied, left = payments.post(Decimal("10.00"), [account()], {"INV3": invoice}, [invoice], NOW)
    assert (applied, left) == ([], Decimal("10.00"))
    assert invoice.invoiceState == InvoiceState.OPEN and invoice.settledTime is None


def test_a_negative_invoice_settles_into_credit_and_adds_to_what_it_credited():
    invoice = open_invoice("INV3", START, [("refund", "-50.00"), ("premium", "20.00")])
    invoice.creditedAmount = Decimal("5.00")
    assert payments.settle_into_credit(invoice, NOW) == Decimal("30.00")
    assert (invoice.invoiceState, invoice.settledTime, invoice.totalRemainingAmount, invoice.creditedAmount) == (
        InvoiceState.SETTLED,
        NOW,
        0,
        Decimal("35.00"),
    )
    assert [(i.remainingAmount, i.settlementTime) for i in invoice.invoiceItems] == [(0, NOW), (0, NOW)]


def test_taking_back_an_application_gives_its_items_back_and_opens_the_invoice():
    february, march, invoices = two_invoices()
    applied, _ = payments.post(Decimal("110.00"), [account()], invoices, [february, march], NOW)
    payments.take_back(february, {"INV1-tax": Decimal("40.00")}, LATER)
    assert (february.invoiceState, february.totalRemainingAmount, february.unsettledTime) == (
        InvoiceState.OPEN,
        Decimal("40.00"),
        LATER,
    )
    assert [(i.remainingAmount, i.settlementTime, i.unsettledTime) for i in february.invoiceItems] == [
        (0, NOW, None),
        (Decimal("40.00"), None, LATER),
    ]
    payments.take_back(march, applied[1].item_amounts, LATER)
    assert (march.invoiceState, march.totalRemainingAmount, march.unsettledTime) == (
        InvoiceState.OPEN,
        Decimal("80.00"),
        None,
    )  # it was open: not unsettled


def test_taking_back_nothing_from_a_settled_invoice_keeps_it_settled():
    february, _, invoices = two_invoices()
    payments.post(Decimal("100.00"), [target(ContainerType.INVOICE, "INV1")], invoices, [], NOW)
    payments.take_back(february, {"INV1-tax": Decimal(0)}, LATER)
    assert (february.invoiceState, february.unsettledTime, february.totalRemainingAmount) == (
        InvoiceState.SETTLED,
        None,
        0,
    )


def test_amounts_below_one_are_paid_to_the_cent():
    invoice = open_invoice("INV4", START, [("fee", "0.40"), ("tax", "0.35")])
    invoices = {"INV4": invoice}
    applied, left = payments.post(Decimal("0.60"), [account()], invoices, [invoice], NOW)
    assert (applied[0].item_amounts, left) == ({"fee": Decimal("0.40"), "tax": Decimal("0.20")}, 0)
    assert (invoice.invoiceState, invoice.totalRemainingAmount) == (InvoiceState.OPEN, Decimal("0.15"))
    applied, left = payments.post(
        Decimal("0.50"), [target(ContainerType.INVOICE_ITEM, "tax")], invoices, [invoice], LATER
    )
    assert (applied[0].item_amounts, left) == ({"tax": Decimal("0.15")}, Decimal("0.35"))
    assert (invoice.invoiceItems[1].settlementTime, invoice.invoiceState, invoice.settledTime) == (
        LATER,
        InvoiceState.SETTLED,
        LATER,
    )
