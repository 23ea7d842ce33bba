"""Invoice fees (invoices/fees.py): each policy's own fee, else the plan's for the currency, combined by the
plan's handling; one fee item on a positive invoice, none on a zero or negative one."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.billing.invoices.fees import fee, with_fee
from chalicelib.billing.invoices.models import InvoiceItem
from chalicelib.configuration.billing_plans import (
    CancellationConsolidation,
    InstallmentGrouping,
    InvoiceFeeHandling,
    InvoicingPlan,
)
from tests.unit.billing.support import START, open_invoice


def plan(handling: InvoiceFeeHandling) -> InvoicingPlan:
    return InvoicingPlan(
        name="p",
        display_name=None,
        installment_grouping=InstallmentGrouping(),
        invoice_fee_handling=handling,
        invoice_fee_amounts={"USD": Decimal("3.00"), "EUR": Decimal("2.50")},
        consolidate_invoices_on_cancellation=CancellationConsolidation.NONE,
    )


@pytest.mark.parametrize(
    "handling, amount",
    [
        (InvoiceFeeHandling.MAX, "5.00"),
        (InvoiceFeeHandling.MIN, "1.25"),
        (InvoiceFeeHandling.SUM, "9.25"),
        (InvoiceFeeHandling.WAIVE, "0"),
    ],
)
def test_the_fees_of_the_policies_on_an_invoice_combine_as_the_plan_says(handling, amount):
    """Three policies: one with a fee of its own of 5.00, one of 1.25, one without (the plan's 3.00)."""
    assert fee(plan(handling), "USD", [Decimal("5.00"), Decimal("1.25"), None]) == Decimal(amount)


def test_a_policy_without_a_fee_of_its_own_takes_the_plans_for_the_currency():
    assert fee(plan(InvoiceFeeHandling.SUM), "eur", [None, None]) == Decimal("5.00")
    assert fee(plan(InvoiceFeeHandling.MAX), "GBP", [None]) == 0  # no fee configured for it
    assert fee(plan(InvoiceFeeHandling.MIN), "USD", [Decimal(0), None]) == 0  # its own fee is none


@pytest.mark.parametrize("handling", list(InvoiceFeeHandling))
def test_an_invoice_of_no_policy_has_no_fee(handling):
    assert fee(plan(handling), "USD", []) == 0


def test_a_positive_invoice_carries_one_fee_item():
    invoice = open_invoice("INV1", START, [("premium", "100.00")])
    invoice.totalRemainingAmount = Decimal("40.00")
    charged = with_fee(invoice, Decimal("3.00"), "FEE1")
    assert (charged.totalAmount, charged.totalRemainingAmount) == (Decimal("103.00"), Decimal("43.00"))
    assert charged.invoiceItems[0] == invoice.invoiceItems[0]
    assert charged.invoiceItems[1] == InvoiceItem(
        locator="FEE1",
        invoiceLocator="INV1",
        timezone="America/New_York",
        chargeCategory="invoiceFee",
        chargeType="invoiceFee",
        amount=Decimal("3.00"),
        remainingAmount=Decimal("3.00"),
        installmentItemLocators=[],
        transactionLocators=[],
    )
    assert len(invoice.invoiceItems) == 1 and invoice.totalAmount == Decimal("100.00")  # the original unchanged


@pytest.mark.parametrize("total, amount", [("0.00", "3.00"), ("-20.00", "3.00"), ("0.01", "0"), ("50.00", "-1.00")])
def test_no_fee_item_on_an_invoice_that_is_not_positive_or_for_no_fee(total, amount):
    invoice = open_invoice("INV1", START, [("premium", total)])
    assert with_fee(invoice, Decimal(amount), "FEE1") is invoice
    assert len(invoice.invoiceItems) == 1


def test_a_fee_of_a_cent_on_an_invoice_of_a_cent():
    charged = with_fee(open_invoice("INV1", START, [("premium", "0.01")]), Decimal("0.01"), "FEE1")
    assert charged.totalAmount == Decimal("0.02") and len(charged.invoiceItems) == 2
