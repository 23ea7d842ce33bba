"""Putting money on invoices and taking it back (DECISIONS.md "Billing", payments). Pure: no I/O.

A payment's targets are served in order; an account target pays the account's open invoices oldest due
first, an invoice target that invoice, an invoice item target that item; a target's `amount` caps what
it takes. Within an invoice the items are paid in order. What no target takes goes to the account's
credit balance. An invoice whose remaining amount reaches 0 is settled; taking money back unsettles it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from chalicelib.billing.invoices.models import Invoice, InvoiceState
from chalicelib.billing.models import ContainerType, PaymentTarget
from chalicelib.core import codes

ZERO = Decimal(0)


@dataclass
class Applied:
    invoice: Invoice
    amount: Decimal
    item_amounts: dict[str, Decimal]


def post(
    amount: Decimal,
    targets: Sequence[PaymentTarget],
    invoices: dict[str, Invoice],
    open_invoices: Sequence[Invoice],
    now: datetime,
) -> tuple[list[Applied], Decimal]:
    """Apply `amount` to `targets` (invoices by locator; `open_invoices` the account's, oldest due
    first). Answers what each invoice took, in order, and what is left for the credit balance."""
    left = amount
    applied: dict[str, Applied] = {}
    for target in targets:
        if left <= 0:
            break
        cap = left if target.amount is None else min(left, target.amount)
        if target.containerType == ContainerType.ACCOUNT:
            for invoice in open_invoices:
                if cap <= 0:
                    break
                taken = _apply(applied, invoice, cap, None, now)
                cap -= taken
                left -= taken
        elif target.containerType == ContainerType.INVOICE:
            left -= _apply(applied, invoices[target.containerLocator], cap, None, now)
        elif target.containerType == ContainerType.INVOICE_ITEM:
            invoice = next(
                i for i in invoices.values() if any(item.locator == target.containerLocator for item in i.invoiceItems)
            )
            left -= _apply(applied, invoice, cap, target.containerLocator, now)
        else:
            raise codes.PAYMENT_INVALID_TARGET(f"A payment cannot target a {target.containerType.value}")
    return list(applied.values()), left


def settle_into_credit(invoice: Invoice, now: datetime) -> Decimal:
    """Settle a zero or negative invoice: its remaining amount (negated) goes to the credit balance."""
    credit = -invoice.totalRemainingAmount
    for item in invoice.invoiceItems:
        item.remainingAmount = ZERO
        item.settlementTime = now
    invoice.totalRemainingAmount = ZERO
    invoice.invoiceState = InvoiceState.SETTLED
    invoice.settledTime = now
    invoice.creditedAmount += credit
    return credit


def take_back(invoice: Invoice, item_amounts: dict[str, Decimal], now: datetime) -> None:
    """Undo an application: the items get back what it paid; a settled invoice is open again."""
    for item in invoice.invoiceItems:
        if item.locator in item_amounts:
            item.remainingAmount += item_amounts[item.locator]
            item.settlementTime = None
            item.unsettledTime = now
    invoice.totalRemainingAmount = sum((item.remainingAmount for item in invoice.invoiceItems), ZERO)
    if invoice.invoiceState == InvoiceState.SETTLED and invoice.totalRemainingAmount != 0:
        invoice.invoiceState = InvoiceState.OPEN
        invoice.unsettledTime = now


def _apply(
    applied: dict[str, Applied], invoice: Invoice, cap: Decimal, item_locator: str | None, now: datetime
) -> Decimal:
    cap = min(cap, invoice.totalRemainingAmount)  # negative items lower what the invoice can take
    if invoice.invoiceState != InvoiceState.OPEN or cap <= 0:
        return ZERO
    taken = ZERO
    entry = applied.setdefault(invoice.locator, Applied(invoice, ZERO, {}))
    for item in invoice.invoiceItems:
        if item_locator is not None and item.locator != item_locator:
            continue
        part = min(item.remainingAmount, cap - taken)
        if part <= 0:
            continue
        item.remainingAmount -= part
        if item.remainingAmount == 0:
            item.settlementTime = now
        entry.item_amounts[item.locator] = entry.item_amounts.get(item.locator, ZERO) + part
        taken += part
    entry.amount += taken
    invoice.totalRemainingAmount = sum((item.remainingAmount for item in invoice.invoiceItems), ZERO)
    if invoice.totalRemainingAmount <= 0:
        invoice.invoiceState = InvoiceState.SETTLED
        invoice.settledTime = now
    if not entry.amount:
        del applied[invoice.locator]
    return taken
