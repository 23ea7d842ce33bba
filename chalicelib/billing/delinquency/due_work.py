"""The due work of delinquency (service.py): an invoice's due time, a delinquency event's trigger time; run by
the due pager (every quarter hour, or a test clock's advance) at each entry's due time. A delinquency's grace
end is billing/job_handlers.py's: it bills the lapses, which needs invoicing, beside delinquency."""

from __future__ import annotations

from typing import Any

from chalicelib.billing.delinquency import service
from chalicelib.core.context import CallContext
from chalicelib.runtime.due import DueWork, due_handler
from chalicelib.runtime.due_kinds import DueKind


@due_handler(DueKind.INVOICE_DUE)
def invoice_due(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    """Opens or joins delinquencies in the entry's own unit of work (once: the entry goes with them)."""
    return {"delinquenciesOpened": len(service.invoice_due(ctx, work.uow, work.entry.ref))}


@due_handler(DueKind.DELINQUENCY_EVENT)
def delinquency_event(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    return {"delinquencyEvents": [service.event_due(ctx, work.uow, work.entry.ref)]}
