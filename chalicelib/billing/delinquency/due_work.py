"""The due work of delinquency (service.py): an invoice's due time, a delinquency's grace end, a
delinquency event's trigger time; run by the due pager (every quarter hour, or a test clock's advance)
at each entry's due time."""
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


@due_handler(DueKind.DELINQUENCY_GRACE_END)
def grace_end(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    """Lapses through the transactions service, which commits its own units of work: idempotent by the
    delinquency's state (service.grace_ended); the delinquency lapsed is written with the entry's settlement."""
    return {"graceEnded": [service.grace_ended(ctx, work.entry.ref, work.uow)]}


@due_handler(DueKind.DELINQUENCY_EVENT)
def delinquency_event(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    return {"delinquencyEvents": [service.event_due(ctx, work.uow, work.entry.ref)]}
