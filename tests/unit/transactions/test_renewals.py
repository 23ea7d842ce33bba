"""renewals.py: when each step of an auto-renewal falls due, the job's window, what a stack holds of a
renewal and which service calls bring it to the due step."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from chalicelib.policies.models import Transaction
from chalicelib.transactions import renewals
from chalicelib.transactions.renewals import RenewalPlan, Step

NY = "America/New_York"
END = datetime(2027, 4, 1, 4, tzinfo=timezone.utc)
"""Midnight in New York, summer time (from 2027-03-14): 20 and 30 days earlier are winter time (05:00Z)."""
PLAN = RenewalPlan(generateAutoRenewals=True, renewalCreateLeadDays=30, renewalAcceptLeadDays=20,
                   renewalIssueLeadDays=10)


def at(month, day, hour):
    return datetime(2027, month, day, hour, tzinfo=timezone.utc)


def test_lead_days_are_calendar_days_on_the_policys_wall_clock():
    assert renewals.step_times(PLAN, END, NY) == {
        Step.CREATE: at(3, 2, 5), Step.ACCEPT: at(3, 12, 5), Step.ISSUE: at(3, 22, 4)}


@pytest.mark.parametrize(("as_of", "due"), [
    (at(3, 2, 4), None), (at(3, 2, 5), Step.CREATE), (at(3, 12, 4), Step.CREATE), (at(3, 12, 5), Step.ACCEPT),
    (at(3, 22, 4), Step.ISSUE), (END + timedelta(days=7), Step.ISSUE), (END + timedelta(days=7, seconds=1), None),
])
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
    assert renewals.step_times(accept_only, END, NY) == {Step.CREATE: at(3, 29, 4), Step.ACCEPT: at(3, 29, 4),
                                                         Step.ISSUE: END}
    inverted = RenewalPlan(generateAutoRenewals=True, renewalCreateLeadDays=10, renewalAcceptLeadDays=20)
    assert renewals.due(inverted, END, NY, at(3, 12, 5)) == Step.ACCEPT


def test_the_window_reaches_a_week_back_and_the_largest_create_lead_ahead():
    as_of = at(1, 10, 12)
    late = RenewalPlan(generateAutoRenewals=True, renewalCreateLeadDays=60)
    silent = RenewalPlan(generateAutoRenewals=False, renewalCreateLeadDays=90)
    assert renewals.window(as_of, [PLAN, late, silent]) == (at(1, 3, 12), at(3, 12, 12))
    assert renewals.window(as_of, [silent]) is None


def renewal(state, created, effective=END, category="renewal"):
    return Transaction(locator=f"01J{created:023d}", staticLocator="s", policyLocator="p", termLocator="t",
                       effectiveTime=effective, transactionState=state, transactionCategory=category,
                       transactionType="renewal", createdAt=at(1, 1, created), createdBy="u", configVersion="v")


def test_the_latest_live_renewal_of_the_term_end_is_the_one_worked_on():
    found = renewals.existing([renewal("invalidated", 1), renewal("priced", 2), renewal("draft", 3),
                               renewal("draft", 4, effective=at(5, 1, 4)), renewal("draft", 5, category="change")],
                              END)
    assert (found.live.locator, found.renewed, found.declined) == (renewal("draft", 3).locator, False, False)


def test_a_discarded_refused_or_reversed_renewal_declines_and_an_invalidated_one_counts_for_nothing():
    assert renewals.existing([renewal("discarded", 1)], END).declined
    assert renewals.existing([renewal("refused", 1)], END).declined
    assert renewals.existing([renewal("reversed", 1)], END).declined
    nothing = renewals.existing([renewal("invalidated", 1)], END)
    assert (nothing.live, nothing.renewed, nothing.declined) == (None, False, False)
    assert renewals.existing([renewal("issued", 1)], END).renewed


@pytest.mark.parametrize(("step", "state", "calls"), [
    (Step.CREATE, None, ("create", "price")), (Step.ACCEPT, None, ("create", "accept")),
    (Step.ISSUE, None, ("create", "issue")),
    (Step.CREATE, "draft", ("price",)), (Step.CREATE, "validated", ("price",)), (Step.CREATE, "priced", ()),
    (Step.CREATE, "accepted", ()), (Step.ACCEPT, "priced", ("accept",)), (Step.ACCEPT, "accepted", ()),
    (Step.ACCEPT, "underwrittenBlocked", ("accept",)), (Step.ISSUE, "accepted", ("issue",)),
    (Step.ISSUE, "draft", ("issue",)),
])
def test_at_most_two_service_calls_bring_a_renewal_to_the_due_step(step, state, calls):
    assert renewals.work(step, state) == calls
