"""Policy statuses (socotra-semantics.md §1.6), derived from the clock and the issued transactions, never
stored.

A policy is `pending` before its start, `expired` from its end on, and `onRisk` in between; the start
is inclusive and the end exclusive, as for every span of the service. A policy whose coverage ends with
an issued cancellation (`cancellation`: its effective time, kept on the policy root by issuing) is
`cancelled` from that time on, and `cancelPending` (beside the others) before it. It is `delinquent`
(beside the others) while a delinquency of it is in grace. `doNotRenew` needs auto-renewal records,
which do not exist yet.
"""
from __future__ import annotations

from datetime import datetime

from chalicelib.policies.models import PolicyStatus


def policy_statuses(now: datetime, start: datetime, end: datetime,
                    cancellation: datetime | None = None, *, delinquent: bool = False) -> list[PolicyStatus]:
    if cancellation is not None and now >= cancellation:
        return [PolicyStatus.CANCELLED]
    if now < start:
        found = [PolicyStatus.PENDING]
    elif now >= end:
        found = [PolicyStatus.EXPIRED]
    else:
        found = [PolicyStatus.ON_RISK]
    found += [PolicyStatus.CANCEL_PENDING] if cancellation is not None else []
    return found + ([PolicyStatus.DELINQUENT] if delinquent else [])
