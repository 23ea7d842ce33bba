"""Every due entry kind's name, in one place (as job_types.py names every job): the domain that makes
an entry due puts it by its kind here, the domain that handles it registers `@due_handler(kind)`
(runtime/due.py), and neither imports the other.

The value is the name stored in the entry (`storage/due_index.py`): renaming one strands the entries
already written. Billing adds its kinds here (`invoice.generate`, `invoice.due`, ...).
"""

from __future__ import annotations

from enum import StrEnum


class DueKind(StrEnum):
    POLICY_AUTO_RENEW = "policy.autoRenew"
    """A policy's renewal: due at its plan's create lead before the term end, then moved to each next step
    (accept, issue) by the transactions domain; put by the policies domain whenever an issue moves the
    policy's end, its cancellation or its plan."""
    POLICY_STATUS_CHANGE = "policy.statusChange"
    """The next moment time changes a policy's statuses (its start, end or cancellation: ref the policy), where
    its `policy.status.update` is emitted; put by the policies domain when it issues the policy and whenever
    an issue moves that moment, moved on to the next one by its run."""
    INVOICE_GENERATE = "billing.invoiceGenerate"
    """An account's invoice generation: due at its earliest uninvoiced installment's generate time; put (or
    moved earlier) by billing a transaction, moved on to the next generate time by its run."""
    INVOICE_DUE = "billing.invoiceDue"
    """An open invoice's due time (ref: the invoice): unsettled then, it opens or joins a delinquency; put by
    billing when it generates the invoice."""
    DELINQUENCY_GRACE_END = "billing.delinquencyGraceEnd"
    """A delinquency's grace end (ref: the delinquency): its policies lapse unless it was settled or an
    active delinquency hold pauses it (releasing the hold puts the entry again)."""
    DELINQUENCY_EVENT = "billing.delinquencyEvent"
    """A configured delinquency event's trigger time (ref: the event)."""
    INVOICE_AUTOPAY = "billing.invoiceAutopay"
    """An invoice's autopay (ref: the invoice): due at its autopay time; put when an invoice of an autopay
    plan is generated or an update asks for autopay, removed when an update suppresses it."""
    TRANSACTION_BILLING = "policy.transactionBilling"
    """The safety net of an issue too large to carry its billing job in its own write (ref: the transaction):
    put before that write, due a quarter of an hour later; it enqueues the billing job if the issue committed
    and the job is not there yet (the process that committed it may have died before enqueueing it)."""
