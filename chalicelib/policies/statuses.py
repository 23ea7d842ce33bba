"""Policy statuses (socotra-semantics.md §1.6), derived from the clock and never stored.

A policy is `pending` before its start, `expired` from its end on, and `onRisk` in between; the start
is inclusive and the end exclusive, as for every span of the service. The other statuses of the enum
(`cancelled`, `cancelPending`, `delinquent`, `doNotRenew`) need cancellations, delinquencies and
auto-renewals, which do not exist yet.
"""
from __future__ import annotations

from datetime import datetime

from chalicelib.policies.models import PolicyStatus


def policy_statuses(now: datetime, start: datetime, end: datetime) -> list[PolicyStatus]:
    if now < start:
        return [PolicyStatus.PENDING]
    if now >= end:
        return [PolicyStatus.EXPIRED]
    return [PolicyStatus.ON_RISK]
