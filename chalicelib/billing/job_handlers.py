"""Asynchronous work of the billing domain."""
from __future__ import annotations

from typing import Any

from chalicelib.billing import service
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler


@job_handler(JobType.BILLING_INSTALLMENTS)
def bill_transaction(ctx: CallContext, payload: dict[str, Any]) -> dict[str, Any]:
    """Enqueued by every issue of a transaction (payload `transactionLocator`): its lattice and
    installments, then the invoices already due to be generated."""
    job = payload.get("jobLocator") or payload["transactionLocator"]
    try:
        accounts = service.bill_transaction(ctx, payload["transactionLocator"], job)
    except DomainError as error:
        service.billing_failed(ctx, payload["transactionLocator"], payload.get("policyLocator"), job,
                               f"{error.code}: {error.message}", int(payload.get("retries") or 0))
        raise
    invoices = [invoice.locator for account in accounts for invoice in service.generate_invoices(ctx, account)]
    return {"invoiceLocators": invoices}


@job_handler(JobType.BILLING_EARLY_INVOICING)
def invoice_early(ctx: CallContext, payload: dict[str, Any]) -> dict[str, Any]:
    """Enqueued by POST /invoices/earlyInvoicing (payload `accountLocator`, `jobLocator`)."""
    job = service.run_early_invoicing(ctx, payload["accountLocator"], payload["jobLocator"])
    return {"invoiceLocators": job.invoiceLocators}
