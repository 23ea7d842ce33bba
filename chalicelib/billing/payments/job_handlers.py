"""Asynchronous work of payments: an invoice's autopay when its due entry falls due (autopay.py)."""

from __future__ import annotations

from typing import Any

from chalicelib.billing.payments import autopay
from chalicelib.core.context import CallContext
from chalicelib.runtime.due import DueWork, due_handler
from chalicelib.runtime.due_kinds import DueKind


@due_handler(DueKind.INVOICE_AUTOPAY)
def autopay_invoice(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    """An invoice's autopay (ref: the invoice), due at its autopay time: a payment of what it owes, posted."""
    paid = autopay.pay(ctx, work.entry.ref, work.uow)
    return {"autopayments": [paid.locator] if paid else []}
