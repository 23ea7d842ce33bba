"""Asynchronous work of the billing domain, registered as its packages' job_handlers modules are imported:
billing an issued transaction, early invoicing and the generation of an account's invoices
(invoices/job_handlers.py), an invoice's autopay (payments/job_handlers.py), what an excess credit plan does
with an account's credit (credit/job_handlers.py) and delinquency's due work (delinquency/due_work.py, and here
its grace end, which bills what it lapses), and a policy's auto-renewal (transactions/auto_renewal.py), whose
issue it bills in the issue's own write."""

from __future__ import annotations

from typing import Any

from chalicelib.billing.credit import job_handlers as credit  # noqa: F401 (registers its handlers)
from chalicelib.billing.delinquency import due_work as delinquency  # noqa: F401 (registers its handlers)
from chalicelib.billing.delinquency import service as delinquencies
from chalicelib.billing.installments import service as installments
from chalicelib.billing.invoices import job_handlers as invoices  # registers its handlers, and bills
from chalicelib.billing.payments import job_handlers as payments  # noqa: F401 (registers its handlers)
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError
from chalicelib.policies import service as policies
from chalicelib.policies.models import Transaction
from chalicelib.runtime.due import DueWork, due_handler
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.transactions import auto_renewal

RENEWALS_BILLED = "autoRenewal.billedIn"


@due_handler(DueKind.DELINQUENCY_GRACE_END)
def grace_end(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    """Lapses the delinquency's policies, idempotent by its state (delinquency/service.py grace_ended): in one
    write with the entry's settlement when the plan issues them, each lapse billed right after that write (its
    installments, then the invoices due now) instead of by a job of its own."""
    return {
        "graceEnded": [delinquencies.grace_ended(ctx, work.entry.ref, work.uow, lambda lapse: _bill_lapse(ctx, lapse))]
    }


def _bill_lapse(ctx: CallContext, transaction: Transaction) -> None:
    """What the lapse's billing job would do, in this step. A failure is left to the billing safety net the
    lapse's write put: its due entry enqueues the billing job, which retries and records it."""
    try:
        invoices.bill_issued(
            ctx,
            transaction.locator,
            policies.billing_job_locator(transaction),
            transaction.policyLocator,
            safety_net=True,
        )
    except DomainError:
        return


@due_handler(DueKind.POLICY_AUTO_RENEW)
def auto_renew(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    """Put by the policies domain at the renewal's first step, moved on to each next one here
    (transactions/auto_renewal.py); run by the due pager (every quarter hour, or a test clock's advance) at its
    due time. A renewal issued here is billed in its issue's write (installments.IssuesBilledIn, shared by the
    batch: its accounts, roots and generation entries read together), not by a billing job of its own."""
    billed_in = work.shared.get(RENEWALS_BILLED)
    if billed_in is None:
        billed_in = work.shared[RENEWALS_BILLED] = installments.IssuesBilledIn(
            ctx,
            {
                entry.ref: str(entry.payload["accountLocator"])
                for entry in work.of_batch()
                if entry.payload.get("accountLocator")
            },
        )
    return auto_renewal.renew_due(ctx, work, billed_in)
