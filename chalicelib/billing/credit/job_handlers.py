"""Asynchronous work of the credit balance: what an account's excess credit plan does with its credit."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chalicelib.billing.credit import service as credit
from chalicelib.core.context import CallContext
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler


class ExcessCredit(BaseModel):
    accountLocator: str
    currency: str
    applyToInvoices: bool = False
    """Enqueued by invoice generation: apply the credit to open invoices first, when the plan says so."""


@job_handler(JobType.BILLING_EXCESS_CREDIT, payload=ExcessCredit)
def settle_excess_credit(ctx: CallContext, payload: ExcessCredit) -> dict[str, Any]:
    """Enqueued by a posting that left credit, or an invoice generation: what the account's excess credit
    plan does with its credit (credit/service.py)."""
    distribution, disbursement = credit.settle_excess_credit(
        ctx, payload.accountLocator, payload.currency, apply_to_invoices=payload.applyToInvoices
    )
    return {"creditDistributionLocator": distribution, "disbursementLocator": disbursement}
