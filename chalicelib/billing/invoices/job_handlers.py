"""Asynchronous work of invoicing: billing an issued transaction (its installments, then the invoices due
now), early invoicing, and the generation of an account's invoices when their due entry falls due."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chalicelib.billing.installments import service as installments
from chalicelib.billing.invoices import service as invoicing
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError
from chalicelib.runtime.due import DueWork, due_handler
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler


class BillTransaction(BaseModel):
    transactionLocator: str
    policyLocator: str | None = None
    jobLocator: str | None = None
    retries: int = 0


class EarlyInvoicing(BaseModel):
    accountLocator: str
    jobLocator: str


@job_handler(JobType.BILLING_INSTALLMENTS, payload=BillTransaction)
def bill_transaction(ctx: CallContext, payload: BillTransaction) -> dict[str, Any]:
    """Enqueued by every issue of a transaction: its lattice and installments, then the invoices already
    due to be generated (the later ones follow at their time: the account's invoice generation entry)."""
    job = payload.jobLocator or payload.transactionLocator
    try:
        billed = installments.bill_transaction(ctx, payload.transactionLocator, job, payload.policyLocator)
    except DomainError as error:
        installments.billing_failed(
            ctx,
            payload.transactionLocator,
            payload.policyLocator,
            job,
            f"{error.code}: {error.message}",
            payload.retries,
        )
        raise
    return {"invoiceLocators": _invoice_billed(ctx, billed)}


def bill_issued(
    ctx: CallContext, transaction_locator: str, job_locator: str, policy_locator: str, *, safety_net: bool = False
) -> list[str]:
    """`bill_transaction` without its job, in a due step, by the writer of the issue once it committed (a
    lapse): the installments' write removes the issue's billing safety net (`safety_net`) and brings the
    account's invoice generation entry forward to the installments due now, which invoices them in this step
    (one write with its settlement, not a run that finds nothing left after this one). A cancellation whose
    plan consolidates is invoiced here as its job does (the due ones, then the consolidation). Answers the
    invoices made here."""
    billed = installments.bill_transaction(ctx, transaction_locator, job_locator, policy_locator, safety_net=safety_net)
    if not invoicing.consolidates_on_cancellation(ctx, billed.transaction):
        return []
    return _invoice_billed(ctx, billed)


def _invoice_billed(ctx: CallContext, billed: installments.TransactionBilled) -> list[str]:
    """The invoices due now once a transaction is billed, and its cancellation's consolidation."""
    invoices = [
        invoice.locator
        for account in billed.due_accounts
        for invoice in invoicing.generate_invoices(ctx, account, roots=billed.roots)
    ]
    invoices += [invoice.locator for invoice in invoicing.consolidate_on_cancellation(ctx, billed.transaction)]
    return invoices


@job_handler(JobType.BILLING_EARLY_INVOICING, payload=EarlyInvoicing)
def invoice_early(ctx: CallContext, payload: EarlyInvoicing) -> dict[str, Any]:
    """Enqueued by POST /invoices/earlyInvoicing."""
    job = invoicing.run_early_invoicing(ctx, payload.accountLocator, payload.jobLocator)
    return {"invoiceLocators": job.invoiceLocators}


@due_handler(DueKind.INVOICE_GENERATE)
def generate_invoices(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    """An account's invoice generation (ref: the account), due at its earliest uninvoiced generate time:
    invoices what is due now, then moves on to the next generate time (none left: removed), in the entry's
    unit of work with the (last) invoice."""
    invoices = invoicing.generate_invoices(ctx, work.entry.ref, uow=work.uow)
    following = invoicing.next_generate_time(ctx, work.entry.ref)
    if following is not None:
        work.reschedule(following)
    return {"invoicesGenerated": len(invoices)}
