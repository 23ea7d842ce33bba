"""Settling invoices by a write-off, and giving it back (spec part 3 "Write-offs"). Pure: no I/O.

Targets are served in order, each for its `amount` or, without one, for all that remains on it at its
turn: an invoice, one item of an invoice, or the account (its open invoices, oldest due first). Money
lands on invoice items as a payment's does (payments/allocation.py). A target asking for more than
remains on it is refused. A reversal gives back what the write-off settled, the last settled first.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from chalicelib.billing.invoices.models import Invoice, InvoiceState
from chalicelib.billing.models import ContainerType, PaymentTarget
from chalicelib.billing.payments import allocation as payments
from chalicelib.billing.writeoffs.models import WriteOffAllocation
from chalicelib.core import codes
from chalicelib.core.errors import FieldError

ZERO = Decimal(0)


def invoice_of_item(invoices: dict[str, Invoice], item: str) -> Invoice | None:
    return next((i for i in invoices.values() if any(each.locator == item for each in i.invoiceItems)), None)


def remaining_on(target: PaymentTarget, invoices: dict[str, Invoice], open_oldest_first: Sequence[Invoice]) -> Decimal:
    """What is still to be paid on the target (0 for a settled one)."""
    if target.containerType == ContainerType.ACCOUNT:
        return sum(
            (max(i.totalRemainingAmount, ZERO) for i in open_oldest_first if i.invoiceState == InvoiceState.OPEN), ZERO
        )
    if target.containerType == ContainerType.INVOICE:
        invoice = invoices[target.containerLocator]
    else:
        found = invoice_of_item(invoices, target.containerLocator)
        assert found is not None  # the service checked it
        invoice = found
    if invoice.invoiceState != InvoiceState.OPEN:
        return ZERO
    if target.containerType == ContainerType.INVOICE:
        return max(invoice.totalRemainingAmount, ZERO)
    item = next(each for each in invoice.invoiceItems if each.locator == target.containerLocator)
    return max(min(item.remainingAmount, invoice.totalRemainingAmount), ZERO)


def write_off(
    targets: Sequence[PaymentTarget], invoices: dict[str, Invoice], open_oldest_first: Sequence[Invoice], now: datetime
) -> tuple[list[WriteOffAllocation], list[Decimal]]:
    """Settle the targets in order (the invoices change in place). Answers what was settled on each
    invoice, in the order first touched, and what each target took."""
    allocations: dict[str, WriteOffAllocation] = {}
    taken: list[Decimal] = []
    for index, target in enumerate(targets):
        available = remaining_on(target, invoices, open_oldest_first)
        wanted = available if target.amount is None else target.amount
        if wanted <= 0 or wanted > available:
            raise codes.WRITEOFF_EXCEEDS_REMAINING(
                f"Target {target.containerLocator} has {available} remaining; it cannot take {wanted}",
                field_errors=[FieldError(f"targets[{index}]", f"{available} remaining")],
            )
        applied, left = payments.post(wanted, [target], invoices, open_oldest_first, now)
        assert left == 0, (wanted, left)
        for each in applied:
            allocation = allocations.setdefault(
                each.invoice.locator, WriteOffAllocation(invoiceLocator=each.invoice.locator, itemAmounts={})
            )
            for item, amount in each.item_amounts.items():
                allocation.itemAmounts[item] = allocation.itemAmounts.get(item, ZERO) + amount
        taken.append(wanted)
    return list(allocations.values()), taken


def take_back(
    allocations: Sequence[WriteOffAllocation], amount: Decimal, invoices: dict[str, Invoice], now: datetime
) -> list[Invoice]:
    """Give back `amount` of what the allocations still settle, the last invoice and item first (the
    invoices and allocations change in place). Answers the invoices that got something back."""
    left = amount
    touched = []
    for allocation in reversed(allocations):
        given: dict[str, Decimal] = {}
        for item in reversed(list(allocation.itemAmounts)):
            part = min(allocation.held(item), left)
            if part > 0:
                given[item] = part
                left -= part
        if given:
            invoice = invoices[allocation.invoiceLocator]
            payments.take_back(invoice, given, now)
            allocation.reversedItemAmounts = {
                item: allocation.reversedItemAmounts.get(item, ZERO) + given.get(item, ZERO)
                for item in allocation.itemAmounts
                if allocation.reversedItemAmounts.get(item) or given.get(item)
            }
            touched.append(invoice)
        if left <= 0:
            break
    assert left == 0, left
    return touched


def given_back(allocations: Sequence[WriteOffAllocation], amount: Decimal) -> None:
    """Sets the allocations' `reversedItemAmounts` to what reversals of `amount` in all gave back (`take_back`, the
    last invoice and item first, is greedy from the end: any reversals of `amount` in all leave the same), where
    they were not kept: a write-off whose item amounts are in pages."""
    left = amount
    for allocation in reversed(allocations):
        given: dict[str, Decimal] = {}
        for item in reversed(list(allocation.itemAmounts)):
            part = min(allocation.itemAmounts[item], left)
            if part > 0:
                given[item] = part
                left -= part
        allocation.reversedItemAmounts = {item: given[item] for item in allocation.itemAmounts if item in given}
    assert left <= 0, left
