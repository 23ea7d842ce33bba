"""Invoice fees (the invoicing plan's `invoiceFeeHandling`, `invoiceFeeAmounts`; a policy's own
`invoiceFeeAmount`). Pure: no I/O.

A positive invoice carries one fee item, of charge type and category `invoiceFee`: the fee of each
policy on it (its own amount, else the plan's for the currency), combined by the plan's handling
(`max`, `min`, `sum`, or `waive`: none). Zero and negative invoices carry none: a refund is no service.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from chalicelib.billing.invoices.models import Invoice, InvoiceItem
from chalicelib.configuration.billing_plans import InvoiceFeeHandling, InvoicingPlan

FEE = "invoiceFee"


def fee(plan: InvoicingPlan, currency: str, policy_fees: Sequence[Decimal | None]) -> Decimal:
    """The fee of one invoice: each policy's own fee, else the plan's for `currency`, combined."""
    if plan.invoice_fee_handling == InvoiceFeeHandling.WAIVE or not policy_fees:
        return Decimal(0)
    amounts = [own if own is not None else plan.invoice_fee_amount(currency) for own in policy_fees]
    if plan.invoice_fee_handling == InvoiceFeeHandling.MAX:
        return max(amounts)
    if plan.invoice_fee_handling == InvoiceFeeHandling.MIN:
        return min(amounts)
    return sum(amounts, Decimal(0))


def with_fee(invoice: Invoice, amount: Decimal, locator: str) -> Invoice:
    """The invoice with its fee item added (none for a zero fee or an invoice that is not positive)."""
    if amount <= 0 or invoice.totalAmount <= 0:
        return invoice
    item = InvoiceItem(
        locator=locator,
        invoiceLocator=invoice.locator,
        timezone=invoice.timezone,
        chargeCategory=FEE,
        chargeType=FEE,
        amount=amount,
        remainingAmount=amount,
        installmentItemLocators=[],
        transactionLocators=[],
    )
    return invoice.model_copy(
        update={
            "invoiceItems": [*invoice.invoiceItems, item],
            "totalAmount": invoice.totalAmount + amount,
            "totalRemainingAmount": invoice.totalRemainingAmount + amount,
        }
    )
