"""Autopay: at an invoice's autopay time, a payment of what it still owes is created, validated and posted
to it (DECISIONS.md "Test clocks" lists autopay among the scheduled work; socotra-semantics.md §4.2-4.4).

Which invoices: those of installments whose plan (or preferences) sets `autopayLeadDays` (the platform
runs autopay only where the lead days are configured), unless an update suppressed it; an update with
`suppressAutopay: false` asks for it on any invoice. The entry (DueKind.INVOICE_AUTOPAY) is put when such
an invoice is generated or updated (invoices/service.py arm_autopay). With no payment instrument in scope, the
payment is of the configuration's payment type first by name (real packages configure one), transaction
method `standard`, targeting the invoice. An invoice settled, or owing nothing, by then is left alone; one
whose tenant configures no payment type records `billing.invoice.autopayfailed`.

The payment's locator derives from the invoice and its autopay time and each step commits on its own
(service functions), so a rerun after a failure finds the payment and carries it on from its state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from chalicelib.billing import repository
from chalicelib.billing.invoices.models import Invoice, InvoiceState
from chalicelib.billing.models import ContainerType, PaymentTarget
from chalicelib.billing.payments import service
from chalicelib.billing.payments.models import Payment, PaymentState
from chalicelib.configuration import service as configuration
from chalicelib.core.clock import isoformat
from chalicelib.core.context import CallContext
from chalicelib.core.ids import derived_locator
from chalicelib.runtime.wiring import UnitOfWork

TRANSACTION_METHOD = "standard"


@dataclass
class AutopayPayment:
    """The PaymentCreateRequest autopay makes (the fields `service.create_payment` reads)."""

    accountLocator: str
    type: str
    amount: Decimal
    currency: str
    targets: list[PaymentTarget]
    data: dict[str, Any] = field(default_factory=dict)
    transactionMethod: str = TRANSACTION_METHOD
    transactionNumber: str | None = None


def pay(ctx: CallContext, invoice_locator: str, uow: UnitOfWork) -> Payment | None:
    """Pay the invoice what it owes now (its events go in `uow`); None when there is nothing to pay."""
    found = repository.get(ctx.tenant, "invoice", invoice_locator, Invoice)
    if (
        found is None
        or found.suppressAutopay
        or found.invoiceState != InvoiceState.OPEN
        or found.totalRemainingAmount <= 0
    ):
        return None
    event = {
        "invoiceLocator": found.locator,
        "accountLocator": found.accountLocator,
        "invoiceType": found.invoiceType,
        "autopayTime": isoformat(found.autopayTime or ctx.now),
        "policyLocators": {"listCompleted": True, "items": found.policyLocators},
    }
    types = sorted(
        (t for t in configuration.billing_plans(ctx).payment_types.values() if not t.abstract), key=lambda t: t.name
    )
    if not types:
        uow.record_event("billing.invoice.autopayfailed", event)
        return None
    locator = derived_locator(found.autopayTime or ctx.now, f"autopay:{found.locator}:{event['autopayTime']}")
    paid = repository.get(ctx.tenant, "payment", locator, Payment) or service.create_payment(
        ctx,
        AutopayPayment(
            accountLocator=found.accountLocator,
            type=types[0].name,
            amount=found.totalRemainingAmount,
            currency=found.currency,
            targets=[PaymentTarget(containerLocator=found.locator, containerType=ContainerType.INVOICE)],
        ),
        locator,
    )
    if paid.paymentState == PaymentState.DRAFT:
        paid = service.validate_payment(ctx, paid.locator)
    if paid.paymentState == PaymentState.VALIDATED:
        paid = service.post_payment(ctx, paid.locator)
    uow.record_event("billing.invoice.autopay", event)
    return paid
