"""Auto-renewal (issue 12): which step of a policy's renewal is due at a moment, and what the job does
about it. Pure: the job (auto_renewal.py) reads the policies and calls the transactions service.

A policy renews automatically when its `autoRenewalPlanName` names a plan (AutoRenewalPlanRef) with
`generateAutoRenewals`. The renewal of the term ending at E is created (and priced: the insured sees a
price early), accepted and issued at `renewalCreateLeadDays`, `renewalAcceptLeadDays` and
`renewalIssueLeadDays` before E, counted in calendar days on the policy's wall clock. A plan that omits
a lead takes the next step's: no issue lead is 0 (issued at E, effective at E), no accept lead is the
issue lead, no create lead is the accept lead. A step falls due once its moment has passed, and a
later step that falls due brings the earlier ones with it (a plan that says create 10 days before and
accept 20 days before creates and accepts 20 days before).

The policy's due entry (`policy.autoRenew`, put by the policies domain when an issue moves the term end,
policies.models.renewal_due) falls due at the earliest step; the job (auto_renewal.py) moves it to each
next step (`next_step_time`). A renewal a run missed (say, while the scheduler was down) is still made up
to `GRACE` (a week) after the term ended, effective at the end; a later one needs a person.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import IntEnum
from typing import Any

from chalicelib.core import durations
from chalicelib.policies.models import (
    LIVE_UNISSUED,
    RENEWAL_GRACE,
    IssuedStack,
    Transaction,
    TransactionCategory,
    TransactionState,
    renewal_plans,
)
from chalicelib.policies.models import (
    RenewalPlan as RenewalPlan,
)
from chalicelib.priceable.runner import UNDERWRITING_STOPS as UNDERWRITING_STOPS
from chalicelib.transactions import coverage
from chalicelib.transactions.timeline import issued_spans

GRACE = RENEWAL_GRACE
NOT_PRICED = frozenset(
    {
        TransactionState.DRAFT,
        TransactionState.INITIALIZED,
        TransactionState.VALIDATED,
        TransactionState.EARLY_UNDERWRITTEN,
    }
)
DECLINED_BY_A_PERSON = frozenset({TransactionState.DISCARDED, TransactionState.REFUSED, TransactionState.REVERSED})
"""A renewal discarded, refused or reversed (by a reversal transaction; one an out-of-sequence issue
reversed is reapplied, issued) is not made again."""


def plans_of(model: Mapping[str, Any]) -> dict[str, RenewalPlan]:
    """The configuration's auto-renewal plans by name."""
    return renewal_plans(model)


class Step(IntEnum):
    CREATE = 1
    ACCEPT = 2
    ISSUE = 3


def step_times(plan: RenewalPlan, term_end: datetime, time_zone: str) -> dict[Step, datetime]:
    leads = {Step.CREATE: plan.create_lead, Step.ACCEPT: plan.accept_lead, Step.ISSUE: plan.issue_lead}
    return {step: durations.shift(term_end, -days, "days", time_zone) for step, days in leads.items()}


def due(plan: RenewalPlan | None, term_end: datetime, time_zone: str, as_of: datetime) -> Step | None:
    """The furthest step of the renewal of the term ending at `term_end` that is due at `as_of` (the
    steps before it are due with it); None when none is, or the plan renews nothing."""
    if plan is None or not plan.generateAutoRenewals or as_of - term_end > GRACE:
        return None
    passed = [step for step, moment in step_times(plan, term_end, time_zone).items() if moment <= as_of]
    return max(passed) if passed else None


def next_step_time(plan: RenewalPlan, term_end: datetime, time_zone: str, after: datetime) -> datetime | None:
    """The first moment after `after` at which a further step of the renewal falls due, or None."""
    later = [moment for moment in step_times(plan, term_end, time_zone).values() if moment > after]
    return min(later) if later else None


@dataclass(frozen=True)
class Renewable:
    term_end: datetime
    """The end of the policy's last term: where its renewal takes effect."""
    cancelled: bool
    """A cancellation holds to the end of the term: a cancelled policy is not renewed."""


def renewable(stack: IssuedStack) -> Renewable:
    """What the policy's issued coverage says about renewing it (the timeline a renewal is planned on)."""
    spans = issued_spans(stack)
    return Renewable(coverage.terms(spans)[-1].end, coverage.cancellation(coverage.held(spans)) is not None)


@dataclass(frozen=True)
class Existing:
    """What the policy's stack holds of the renewal of the term ending at a moment."""

    live: Transaction | None = None
    """The renewal being worked on (any unissued state that can still advance or be reset)."""
    renewed: bool = False
    """An issued renewal takes effect there: nothing to do."""
    declined: bool = False
    """A person discarded, refused or reversed it, and no other is being worked on: do not renew."""


def existing(transactions: Sequence[Transaction], term_end: datetime) -> Existing:
    """The renewals taking effect at `term_end`: the latest live one, else whether one was issued or
    declined. Invalidated ones (a parallel branch was issued first) count for nothing: a new one is made."""
    renewals = [
        t for t in transactions if t.transactionCategory == TransactionCategory.RENEWAL and t.effectiveTime == term_end
    ]
    live = [t for t in renewals if t.transactionState in LIVE_UNISSUED]
    return Existing(
        live=max(live, key=lambda t: (t.createdAt, t.locator)) if live else None,
        renewed=any(t.transactionState == TransactionState.ISSUED for t in renewals),
        declined=any(t.transactionState in DECLINED_BY_A_PERSON for t in renewals),
    )


CREATE, PRICE, ACCEPT, ISSUE = "create", "price", "accept", "issue"


def work(step: Step, state: TransactionState | None) -> tuple[str, ...]:
    """The transactions service calls that bring a renewal in `state` (None: there is none yet) to
    `step`: each of price, accept and issue runs the lifecycle steps before it that are missing, so a
    policy needs at most two (create, then the furthest). Underwriting stops are the caller's to report."""
    if state is None:
        return (CREATE, {Step.CREATE: PRICE, Step.ACCEPT: ACCEPT, Step.ISSUE: ISSUE}[step])
    if step == Step.ISSUE:
        return (ISSUE,)
    if step == Step.ACCEPT:
        return () if state == TransactionState.ACCEPTED else (ACCEPT,)
    return (PRICE,) if state in NOT_PRICED else ()
