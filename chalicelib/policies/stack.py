"""A policy's stack of issued transactions: which transaction and segment show the policy at a moment.

By effective time (the default), the segment spanning the moment ([start, end)) that the latest
issued transaction made: a later transaction's segment replaces what an earlier one said about the
same span. By issued time, the policy as it stood then: the latest transaction issued by the moment
(inclusive) and the last segment it made.
"""

from __future__ import annotations

from datetime import datetime

from chalicelib.policies.models import SegmentSummary, Transaction


def segment_at(
    stack: list[Transaction], moment: datetime, *, by_issued_time: bool = False
) -> tuple[Transaction, SegmentSummary] | None:
    """`stack` in issuing order; None when no transaction answers for `moment`."""
    if by_issued_time:
        issued = [t for t in stack if t.issuedTime is not None and t.issuedTime <= moment and t.segments]
        return (issued[-1], issued[-1].segments[-1]) if issued else None
    for transaction in reversed(stack):
        for summary in reversed(transaction.segments):
            if summary.spans(moment):
                return transaction, summary
    return None
