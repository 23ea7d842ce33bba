"""renewals.py: when each step of an auto-renewal falls due, where the policy's due entry stands, what a
stack holds of a renewal and which service calls bring it to the due step."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from chalicelib.policies.models import Transaction
from chalicelib.transactions import renewals
from chalicelib.transactions.renewals import RenewalPlan, Step

NY = "America/New_York"
END = datetime(2027, 4, 1, 4, tzinfo=timezone.utc)
"""Midnight in New York, summer time (from 2027-03-14): 20 and 30 days earlier are winter time (05:00Z)."""
PLAN = RenewalPlan(
    generateAutoRenewals=True, renewalCreateLeadDays=30, renewalAcceptLeadDays=20, renewalIssueLeadDays=10
)


def at(month, day, hour):
    return datetime(2027, month, day, hour, tzinfo=timezone.utc)


def test_lead_days_are_calendar_days_on_the_policys_wall_clock():
    assert renewals.step_times(PLAN, END, NY) == {
        Step.CREATE: at(3, 2, 5),
        Step.ACCEPT: at(3, 12, 5),
        Step.ISSUE: at(3, 22, 4),
    }


@pytest.mark.parametrize(
    ("as_of", "due"),
    [
        (at(3, 2, 4), None),
        (at(3, 2, 5), Step.CREATE),
        (at(3, 12, 4), Step.CREATE),
        (at(3, 12, 5), Step.ACCEPT),
        (at(3, 22, 4), Step.ISSUE),
        (END + timedelta(days=7), Step.ISSUE),
        (END + timedelta(days=7, seconds=1), None),
    ],
)
def test_the_furthest_step_whose_moment_passed_is_due_until_a_week_after_the_end(as_of, due):
    assert renewals.due(PLAN, END, NY, as_of) == due


def test_a_plan_that_generates_no_renewals_or_no_plan_has_nothing_due():
    assert renewals.due(RenewalPlan(generateAutoRenewals=False, renewalCreateLeadDays=30), END, NY, END) is None
    assert renewals.due(None, END, NY, END) is None


def test_a_missing_lead_takes_the_next_steps_and_a_later_step_brings_the_earlier_ones():
    bare = RenewalPlan(generateAutoRenewals=True)
    assert set(renewals.step_times(bare, END, NY).values()) == {END}
    assert renewals.due(bare, END, NY, END - timedelta(seconds=1)) is None
    assert renewals.due(bare, END, NY, END) == Step.ISSUE
    accept_only = RenewalPlan(generateAutoRenewals=True, renewalAcceptLeadDays=3)
    assert renewals.step_times(accept_only, END, NY) == {
        Step.CREATE: at(3, 29, 4),
        Step.ACCEPT: at(3, 29, 4),
        Step.ISSUE: END,
    }
    inverted = RenewalPlan(generateAutoRenewals=True, renewalCreateLeadDays=10, renewalAcceptLeadDays=20)
    assert renewals.due(inverted, END, NY, at(3, 12, 5)) == Step.ACCEPT


def test_the_next_step_is_the_first_step_moment_after_a_moment():
    assert renewals.next_step_time(PLAN, END, NY, at(3, 1, 0)) == at(3, 2, 5)
    assert renewals.next_step_time(PLAN, END, NY, at(3, 2, 5)) == at(3, 12, 5)
    assert renewals.next_step_time(PLAN, END, NY, at(3, 12, 5)) == at(3, 22, 4)
    assert renewals.next_step_time(PLAN, END, NY, at(3, 22, 4)) is None


def test_the_due_entry_stands_at_the_earliest_step_unless_nothing_renews():
    from chalicelib.policies.models import Policy, renewal_due

    policy = Policy(
        locator="p",
        accountLocator="a",
        productName="Auto",
        currency="USD",
        timezone=NY,
        durationBasis="months",
        billingLevel="account",
        startTime=at(1, 1, 5),
        endTime=END,
        issuedTransactionLocator="t",
        latestSegmentLocator="s",
        latestTermLocator="t",
        configVersion="v",
        createdAt=at(1, 1, 5),
        createdBy="u",
        updatedAt=at(1, 1, 5),
        updatedBy="u",
    )
    assert renewal_due(PLAN, policy, at(1, 1, 5)) == at(3, 2, 5)
    inverted = RenewalPlan(generateAutoRenewals=True, renewalCreateLeadDays=10, renewalAcceptLeadDays=20)
    assert renewal_due(inverted, policy, at(1, 1, 5)) == at(3, 12, 5)
    assert renewal_due(RenewalPlan(generateAutoRenewals=False, renewalCreateLeadDays=30), policy, at(1, 1, 5)) is None
    assert renewal_due(None, policy, at(1, 1, 5)) is None
    assert renewal_due(PLAN, policy.model_copy(update={"cancellationTime": at(2, 1, 5)}), at(1, 1, 5)) is None
    assert renewal_due(PLAN, policy, END + timedelta(days=7)) == at(3, 2, 5)
    assert renewal_due(PLAN, policy, END + timedelta(days=7, seconds=1)) is None  # past the grace


def renewal(state, created, effective=END, category="renewal"):
    return Transaction(
        locator=f"01J{created:023d}",
        staticLocator="s",
        policyLocator="p",
        termLocator="t",
        effectiveTime=effective,
        transactionState=state,
        transactionCategory=category,
        transactionType="renewal",
        createdAt=at(1, 1, created),
        createdBy="u",
        configVersion="v",
    )


def test_the_latest_live_renewal_of_the_term_end_is_the_one_worked_on():
    found = renewals.existing(
        [
            renewal("invalidated", 1),
            renewal("priced", 2),
            renewal("draft", 3),
            renewal("draft", 4, effective=at(5, 1, 4)),
            renewal("draft", 5, category="change"),
        ],
        END,
    )
    assert (found.live.locator, found.renewed, found.declined) == (renewal("draft", 3).locator, False, False)


def test_a_discarded_refused_or_reversed_renewal_declines_and_an_invalidated_one_counts_for_nothing():
    assert renewals.existing([renewal("discarded", 1)], END).declined
    assert renewals.existing([renewal("refused", 1)], END).declined
    assert renewals.existing([renewal("reversed", 1)], END).declined
    nothing = renewals.existing([renewal("invalidated", 1)], END)
    assert (nothing.live, nothing.renewed, nothing.declined) == (None, False, False)
    assert renewals.existing([renewal("issued", 1)], END).renewed


@pytest.mark.parametrize(
    ("step", "state", "calls"),
    [
        (Step.CREATE, None, ("create", "price")),
        (Step.ACCEPT, None, ("create", "accept")),
        (Step.ISSUE, None, ("create", "issue")),
        (Step.CREATE, "draft", ("price",)),
        (Step.CREATE, "validated", ("price",)),
        (Step.CREATE, "priced", ()),
        (Step.CREATE, "accepted", ()),
        (Step.ACCEPT, "priced", ("accept",)),
        (Step.ACCEPT, "accepted", ()),
        (Step.ACCEPT, "underwrittenBlocked", ("accept",)),
        (Step.ISSUE, "accepted", ("issue",)),
        (Step.ISSUE, "draft", ("issue",)),
    ],
)
def test_at_most_two_service_calls_bring_a_renewal_to_the_due_step(step, state, calls):
    assert renewals.work(step, state) == calls


def test_each_state_underwriting_can_stop_a_renewal_in_has_its_outcome_code_in_the_catalogue():
    """The auto-renewal reports a stopped renewal with `codes.RENEWAL_STOPPED[state]` (transactions/auto_renewal.py)."""
    from chalicelib.core import codes

    assert set(codes.RENEWAL_STOPPED) == set(renewals.UNDERWRITING_STOPS)
    assert codes.RENEWAL_STOPPED["underwrittenBlocked"].code == "transaction.underwritten_blocked"
