"""Consolidating a cancelled policy's invoices (the invoicing plan's `consolidateInvoicesOnCancellation`).
Pure: no I/O.

When a cancellation is billed, its reversals and the installments they cancel would otherwise be invoiced
frame by frame until the term's end: a row of zero or negative invoices. With `future`, the policy's
uninvoiced installments of frames ending after the cancellation's effective time (the cancelled coverage:
the originals with their reversals) are invoiced at once on one invoice; with `all`, every uninvoiced
installment of the policy is, the earned part before the cancellation too; `none` leaves them to their
schedule. The invoice is due at the earliest due time among them, not before it is generated.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from chalicelib.billing.installments.models import Installment
from chalicelib.configuration.billing_plans import CancellationConsolidation


def consolidated(
    uninvoiced: Iterable[Installment], mode: CancellationConsolidation, effective: datetime, now: datetime
) -> list[Installment]:
    """The installments to invoice at once (given the due time of their one invoice), in locator order."""
    if mode == CancellationConsolidation.NONE:
        return []
    chosen = sorted(
        (
            i
            for i in uninvoiced
            if i.invoiceLocator is None and (mode == CancellationConsolidation.ALL or i.installmentEndTime > effective)
        ),
        key=lambda i: i.locator,
    )
    if chosen:
        due = max(min(i.dueTime for i in chosen), now)
        for installment in chosen:
            installment.dueTime = due
    return chosen
