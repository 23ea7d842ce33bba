"""Policy statuses (socotra-semantics.md §1.6), derived from the clock and the issued transactions, never
stored.

A policy is `pending` before its start, `expired` from its end on, and `onRisk` in between; the start
is inclusive and the end exclusive, as for every span of the service. A policy whose coverage ends with
an issued cancellation (`cancellation`: its effective time, kept on the policy root by issuing) is
`cancelled` from that time on, and `cancelPending` (beside the others) before it. It is `delinquent`
(beside the others) while a delinquency of it is in grace. `doNotRenew` needs auto-renewal records,
which do not exist yet.

The statuses that time changes (pending -> onRisk at the start, onRisk -> expired at the end,
cancelPending -> cancelled at the cancellation's time) change at `next_change`: the policy's due entry
`policy.statusChange` stands there, so that its `policy.status.update` is emitted at that moment.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from chalicelib.policies.models import PolicyStatus


def policy_statuses(
    now: datetime, start: datetime, end: datetime, cancellation: datetime | None = None, *, delinquent: bool = False
) -> list[PolicyStatus]:
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


JUST_BEFORE = timedelta(microseconds=1)
"""What `policy_statuses` at `moment - JUST_BEFORE` shows: the statuses a moment changes from (every span
starts inclusive)."""


def next_change(now: datetime, start: datetime, end: datetime, cancellation: datetime | None = None) -> datetime | None:
    """The first moment after `now` at which time changes the statuses (None: never again, cancelled)."""
    if cancellation is not None and now >= cancellation:
        return None
    moments = [
        moment
        for moment in (start, end, cancellation)
        if moment is not None and moment > now and (cancellation is None or moment <= cancellation)
    ]
    return min(moments, default=None)
