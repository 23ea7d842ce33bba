"""Asynchronous work of the transactions domain: the billing safety net of the largest issues. (The auto-renewal
of a policy, transactions/auto_renewal.py, is run by billing's handler of its due entry, billing/job_handlers.py,
which bills each renewal's issue in its own write.)"""

from __future__ import annotations

from typing import Any

from chalicelib.core.context import CallContext
from chalicelib.core.errors import NotFound
from chalicelib.policies import service as policies
from chalicelib.runtime.due import DueWork, due_handler
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.transactions import service as transactions


@due_handler(DueKind.TRANSACTION_BILLING)
def bill_committed_issue(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    """Put by the policies domain before the final write of an issue too large to carry its billing job:
    once the issue committed, its billing job exists (enqueued after the commit) or is enqueued here; an
    issue that never committed has no issued time and nothing is billed."""
    try:
        transaction = transactions.get_transaction(ctx, work.entry.ref)
    except NotFound:
        return {"billingJobsEnqueued": 0}
    if transaction.issuedTime is None:
        return {"billingJobsEnqueued": 0}
    return {"billingJobsEnqueued": int(policies.enqueue_billing(ctx, transaction))}
