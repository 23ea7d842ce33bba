"""Auto-renewal (issue 12) on the due index: a policy's `policy.autoRenew` entry falls due at its plan's
first lead day before the term end, and the due run (runtime/due.py, every quarter hour) creates (and
prices), accepts and issues the renewal through the transactions service, each step at its own due time,
reading only the policies that are due. Time travel with the FixedClock; jobs run by the InlineJobQueue.

The tenant has the quotes test configuration (tests/support/configs.py: PersonalAuto rates 100 a month
for a vehicle under 20,000 plus a tax amount of 25; a VIN starting 000 fails validation) and these
auto-renewal plans. Its policies run a year from 2026-02-01T05:00Z (midnight in New York) to
2027-02-01T05:00Z, so the plan `Auto` creates the renewal on 2027-01-02 (30 days before, midnight in New
York: 05:00Z), accepts it on 2027-01-12 and issues it on 2027-01-22.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone
from decimal import Decimal as D

import pytest

from chalicelib.core.clock import isoformat, parse_datetime
from chalicelib.runtime import due, wiring
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import JobMessage, dispatch, enqueue, get_job
from chalicelib.transactions import auto_renewal
from tests.api.policies.support import element_tree, issue, vehicle
from tests.api.quotes.support import new_account
from tests.api.transactions.support import (
    END,
    amounts,
    issued_policy,
    issued_transaction,
    params,
    policy_path,
    step,
    transaction_path,
)
from tests.builders import system_ctx
from tests.jobs.support import PLANS
from tests.support.api import call, ok
from tests.support.configs import quotes_model, quotes_tenant
from tests.support.schedules import fan_out, invoke_schedule

PER_RENEWAL = {
    "create": {"Query": 1, "TransactWriteItems": 1},
    "accept": {"Query": 1, "TransactWriteItems": 1},
    "issue": {"Query": 1, "TransactWriteItems": 1},
}
"""The job's consistent read of the policy's stack (one Query), on which the transactions service works
without reading it again; one write a day, the due entry's settlement in it (issue 28: it was 10 calls, a
write for each service call and one for the entry): the draft created priced (never stored apart), with
the entry moved on to the next step; accepted, with the entry moved on; issued, with the next term's entry
put on condition of the one run (UnitOfWork.claim) and the renewal billed (its lattice and installments, the
account's billing root bumped and its invoice generation entry brought forward: issue 28, the billing job's 7
calls gone)."""
RUN_ITSELF = {
    "create": {"GetItem": 2, "Query": 2, "UpdateItem": 2, "BatchGetItem": 4},
    "accept": {"GetItem": 1, "Query": 2, "UpdateItem": 2, "BatchGetItem": 2},
    "issue": {"GetItem": 1, "Query": 2, "UpdateItem": 2, "BatchGetItem": 3},
}
"""The job item (read, moved to running, then finished), (on the first day: the process keeps it) the
policies' configuration version, the due index read twice (the batch of entries due at the moment, then
nothing more: a Query and a consistent BatchGetItem of what it found), the accounts of the batch's
policies when the rating or underwriting plugin first asks for one (BatchGetItem), and on the first day
the rating tables (BatchGetItem; the tables domain keeps them); on the issue day, what billing the batch's
issues in their writes needs, read for the batch (billing/installments/service.py IssuesBilledIn): its
accounts (a BatchGetItem per 100), their billing roots and invoice generation entries (one per 100 records)."""
NEXT_END = "2028-02-01T05:00:00.000Z"
BEFORE = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)
CREATE_DAY = datetime(2027, 1, 2, 6, tzinfo=timezone.utc)
ACCEPT_DAY = datetime(2027, 1, 12, 6, tzinfo=timezone.utc)
ISSUE_DAY = datetime(2027, 1, 22, 6, tzinfo=timezone.utc)
NOTHING = {"created": 0, "priced": 0, "accepted": 0, "issued": 0, "alreadyDone": 0, "notRenewed": [], "failed": []}
CREATE_AT, ACCEPT_AT = datetime(2027, 1, 2, 5, tzinfo=timezone.utc), datetime(2027, 1, 12, 5, tzinfo=timezone.utc)
ISSUE_AT = datetime(2027, 1, 22, 5, tzinfo=timezone.utc)
"""Midnight in New York: where the policy's due entry stands before each step."""
TERM_START = datetime(2026, 2, 1, 5, tzinfo=timezone.utc)
"""Where the account's invoice generation entry stands once its policy is billed: the test configuration has
no installment plans, so each policy is billed on one full-pay frame generated at the term start."""


def renewals_tenant(api, token) -> str:
    model = quotes_model()
    model["autoRenewalPlans"] = PLANS
    model["transactionTypes"] = {"AnnualRenewal": {"category": "renewal"}, "LoyaltyRenewal": {"category": "renewal"}}
    return quotes_tenant(api, token, model)


@pytest.fixture
def tenant(api, admin_token) -> str:
    return renewals_tenant(api, admin_token)


@pytest.fixture
def account(api, admin_token, tenant) -> str:
    return new_account(api, admin_token, tenant)


def run_at(api, token, tenant, jobs, clock, moment):
    """The due run as the quarter-hourly schedule enqueues it, at `moment`: (its result, the events it
    recorded). The clock goes back to the test's start afterwards, where the admin's session token is valid."""
    start = clock.now()
    clock.set(moment)
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    locator = enqueue(uow, JobType.DUE_RUN, {"asOf": isoformat(moment)})
    uow.commit()
    request = jobs.sent[-1].correlation_id
    jobs.drain()
    clock.set(start)
    job = get_job(tenant, locator)
    assert job["status"] == "finished", job
    events = ok(call(api, "GET", f"/event/{tenant}/events/request/{request}", token))
    return job["result"], events


def entry_of(tenant, policy_locator):
    """Where the policy's due entry stands (None: it has none)."""
    found = due.entry(system_ctx().for_tenant(tenant), DueKind.POLICY_AUTO_RENEW, policy_locator)
    return found.due_at if found else None


def invoicing_of(tenant, account_locator):
    """Where the account's invoice generation entry stands (None: nothing left to invoice)."""
    found = due.entry(system_ctx().for_tenant(tenant), DueKind.INVOICE_GENERATE, account_locator)
    return found.due_at if found else None


def transactions_of(api, token, tenant, policy_locator):
    branches = ok(call(api, "GET", policy_path(tenant, policy_locator, "/branches"), token))
    return [t for branch in branches.values() for t in branch]


def the_renewal(api, token, tenant, policy_locator):
    [renewal] = [
        t for t in transactions_of(api, token, tenant, policy_locator) if t["transactionCategory"] == "renewal"
    ]
    return renewal


def put_entry_back(tenant, policy_locator, at):
    """The policy's due entry at `at` again, as a run that read it before another run moved it sees it."""
    ctx = system_ctx().for_tenant(tenant)
    uow = wiring.unit_of_work(ctx)
    due.schedule(uow, DueKind.POLICY_AUTO_RENEW, policy_locator, at, {"accountLocator": "unused"})
    uow.commit()


def billing_at_rest(tenant, jobs, until=TERM_START):
    """Billing brought to rest before the run a test measures: the billing jobs of what was issued run (the
    installments, and each account's invoice generation entry put at their earliest generate time), then the
    due pager runs the tenant's entries up to `until` (just before the measured run), which generates the
    invoices due by then and moves each entry on to its account's next generate time, after `until`. Answers
    what the pager did, summed over its steps: billing entries only, no renewal."""
    jobs.drain(job_types=frozenset({JobType.BILLING_INSTALLMENTS}))
    ctx = system_ctx().for_tenant(tenant)
    summed: Counter = Counter()
    while True:
        step = due.run_step(ctx, until)
        assert (counts(step.result), step.result.get("policiesRead", 0)) == (NOTHING, 0), step.result
        summed.update({name: value for name, value in step.result.items() if isinstance(value, int | D)})
        if not step.more:
            return dict(summed)


def counts(result):
    """What the renewals did (a run that ran no entry answers none of it)."""
    return {name: result.get(name, NOTHING[name]) for name in NOTHING}


def read(result):
    """(entries run, policies read)."""
    return result["entries"], result.get("policiesRead", 0)


def test_a_policy_renews_at_its_plans_lead_days_and_a_rerun_does_nothing(
    api, admin_token, tenant, account, jobs, clock
):
    policy = issued_policy(api, admin_token, tenant, account, autoRenewalPlanName="Auto")
    assert policy["endTime"] == END
    assert entry_of(tenant, policy["locator"]) == CREATE_AT
    billed = billing_at_rest(tenant, jobs)
    # the term's full-pay invoice, its due time (where an unpaid invoice would open a delinquency) and the
    # policy's start (pending to onRisk)
    assert (billed["entries"], billed["invoicesGenerated"], billed["statusUpdates"]) == (3, 1, 1)
    assert invoicing_of(tenant, account) is None  # nothing more to invoice this term

    result, events = run_at(api, admin_token, tenant, jobs, clock, BEFORE)
    assert (read(result), counts(result)) == ((0, 0), NOTHING)
    assert events == []

    # 30 days before the end: created and priced, at the entry's own due time
    result, events = run_at(api, admin_token, tenant, jobs, clock, CREATE_DAY)
    assert read(result) == (1, 1)
    assert counts(result) == {**NOTHING, "created": 1, "priced": 1}
    assert entry_of(tenant, policy["locator"]) == ACCEPT_AT
    renewal = the_renewal(api, admin_token, tenant, policy["locator"])
    assert (renewal["transactionState"], renewal["transactionType"], renewal["effectiveTime"]) == (
        "priced",
        "AnnualRenewal",
        END,
    )
    assert renewal["createdAt"] == isoformat(CREATE_AT)
    assert renewal["termLocator"] != policy["latestTermLocator"]
    price = ok(call(api, "GET", transaction_path(tenant, renewal["locator"], "/price"), admin_token))
    assert amounts(price["charges"]) == [("premium", D("1200.00"), False), ("tax", D("25"), False)]
    segment = ok(call(api, "GET", transaction_path(tenant, renewal["locator"], "/segment"), admin_token))
    assert (segment["startTime"], segment["endTime"]) == (END, NEXT_END)
    assert [(e["type"], e["data"]["transactionLocator"]) for e in events] == [
        (f"policy.renewal.{action}", renewal["locator"]) for action in ("create", "update", "validate", "price")
    ]

    # a rerun at the same time, and one the next day, read nothing, create nothing and record nothing: the
    # entry waits for the accept step
    for moment in (CREATE_DAY, datetime(2027, 1, 3, 6, tzinfo=timezone.utc)):
        result, events = run_at(api, admin_token, tenant, jobs, clock, moment)
        assert (read(result), counts(result), events) == ((0, 0), NOTHING, [])
    assert the_renewal(api, admin_token, tenant, policy["locator"])["locator"] == renewal["locator"]

    # 20 days before: accepted (underwritten first)
    result, events = run_at(api, admin_token, tenant, jobs, clock, ACCEPT_DAY)
    assert counts(result) == {**NOTHING, "accepted": 1}
    assert [e["type"] for e in events] == ["policy.renewal.underwrite", "policy.renewal.accept"]
    assert the_renewal(api, admin_token, tenant, policy["locator"])["transactionState"] == "accepted"
    assert entry_of(tenant, policy["locator"]) == ISSUE_AT

    # 10 days before: issued, the next term opens and the policy's end moves a year on
    result, events = run_at(api, admin_token, tenant, jobs, clock, ISSUE_DAY)
    assert counts(result) == {**NOTHING, "issued": 1}
    # the issue enqueued its billing job in its own write (the run's request): it spread the renewal's charges
    # on the new term's lattice, whose full-pay invoice is generated at the new term's start
    assert [e["type"] for e in events] == ["policy.renewal.issue", "billing.installmentlattice.create"]
    assert invoicing_of(tenant, account) == parse_datetime(END)
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert (after["endTime"], after["latestTermLocator"]) == (NEXT_END, renewal["termLocator"])
    terms = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/terms/list"), admin_token))["items"]
    assert [(t["number"], t["startTime"], t["endTime"]) for t in terms] == [
        (0, "2026-02-01T05:00:00.000Z", END),
        (1, END, NEXT_END),
    ]
    issued = ok(call(api, "GET", transaction_path(tenant, renewal["locator"]), admin_token))
    assert issued["transactionState"] == "issued"
    price = ok(call(api, "GET", transaction_path(tenant, renewal["locator"], "/price"), admin_token))
    assert amounts(price["charges"]) == [("premium", D("1200.00"), False), ("tax", D("25"), False)]

    # renewed: the issue put the entry of the next term, 30 days before its end
    assert entry_of(tenant, policy["locator"]) == datetime(2028, 1, 2, 5, tzinfo=timezone.utc)
    result, events = run_at(api, admin_token, tenant, jobs, clock, ISSUE_DAY)
    assert (read(result), counts(result), events) == ((0, 0), NOTHING, [])


def test_a_run_that_finds_every_step_due_runs_each_at_its_own_time(
    api, admin_token, tenant, account, jobs, clock, ddb_calls
):
    """A run that comes late (the scheduler was down: nothing ran since before the create step) catches
    up in time order, each step at its own moment, as the runs it missed would have."""
    policy = issued_policy(api, admin_token, tenant, account, autoRenewalPlanName="Loyalty")
    billing_at_rest(tenant, jobs)
    ddb_calls.clear()

    result, events = run_at(api, admin_token, tenant, jobs, clock, ISSUE_DAY)

    assert read(result) == (3, 3)
    assert counts(result) == {**NOTHING, "created": 1, "priced": 1, "accepted": 1, "issued": 1}
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["endTime"] == "2027-08-01T04:00:00.000Z"  # the plan's newTermDuration: 6 months
    assert transactions_of(api, admin_token, tenant, policy["locator"]) == []  # nothing unissued is left
    assert [e["type"] for e in events] == [
        "policy.renewal.create",
        "policy.renewal.update",
        "policy.renewal.validate",
        "policy.renewal.price",
        "policy.renewal.underwrite",
        "policy.renewal.accept",
        "policy.renewal.issue",
        "billing.installmentlattice.create",
    ]  # the issue's billing, in its write
    created = events[0]["data"]["transactionLocator"]
    renewal = ok(call(api, "GET", transaction_path(tenant, created), admin_token))
    assert (renewal["transactionType"], renewal["transactionState"]) == ("LoyaltyRenewal", "issued")
    assert (renewal["createdAt"], renewal["acceptedTime"], renewal["issuedTime"]) == (
        isoformat(CREATE_AT),
        isoformat(ACCEPT_AT),
        isoformat(ISSUE_AT),
    )
    price = ok(call(api, "GET", transaction_path(tenant, created, "/price"), admin_token))
    assert amounts(price["charges"]) == [("premium", D("600.00"), False), ("tax", D("25"), False)]
    # the job enqueued; one write a step, the entry settled in it: created and priced (the draft written
    # priced), accepted, issued (the next term's entry put on condition of the one run) with the issue's
    # billing, the renewal's lattice with its installments (nothing to invoice before the new term starts):
    # no billing job (issue 28: it was one more write, and 7 calls)
    assert Counter(ddb_calls)["TransactWriteItems"] == 1 + 3
    assert invoicing_of(tenant, account) == parse_datetime(END)


def test_a_plan_without_generateAutoRenewals_renews_nothing(api, admin_token, tenant, account, jobs, clock):
    policy = issued_policy(api, admin_token, tenant, account, autoRenewalPlanName="Manual")
    assert entry_of(tenant, policy["locator"]) is None
    billing_at_rest(tenant, jobs)

    result, events = run_at(api, admin_token, tenant, jobs, clock, ISSUE_DAY)

    assert (read(result), counts(result), events) == ((0, 0), NOTHING, [])
    assert transactions_of(api, admin_token, tenant, policy["locator"]) == []


def test_a_cancelled_policy_is_not_renewed_and_a_reinstated_one_is(api, admin_token, tenant, account, jobs, clock):
    """Issuing the cancellation removes the policy's due entry; issuing the reinstatement puts it back."""
    policy = issued_policy(api, admin_token, tenant, account, autoRenewalPlanName="Auto")
    issued_transaction(api, admin_token, tenant, policy["locator"], "cancel", params("2026-08-01T04:00:00Z"))
    assert entry_of(tenant, policy["locator"]) is None
    billing_at_rest(tenant, jobs, BEFORE)  # the issue and the cancellation billed, and invoiced at the term start
    assert invoicing_of(tenant, account) is None

    result, events = run_at(api, admin_token, tenant, jobs, clock, CREATE_DAY)

    assert (read(result), counts(result), events) == ((0, 0), NOTHING, [])
    assert transactions_of(api, admin_token, tenant, policy["locator"]) == []

    issued_transaction(api, admin_token, tenant, policy["locator"], "reinstate", [])
    assert entry_of(tenant, policy["locator"]) == CREATE_AT
    billing_at_rest(tenant, jobs, BEFORE)
    assert invoicing_of(tenant, account) is None

    result, _ = run_at(api, admin_token, tenant, jobs, clock, CREATE_DAY)

    assert counts(result) == {**NOTHING, "created": 1, "priced": 1}


def test_a_discarded_renewal_is_not_made_again(api, admin_token, tenant, account, jobs, clock):
    policy = issued_policy(api, admin_token, tenant, account, autoRenewalPlanName="Auto")
    run_at(api, admin_token, tenant, jobs, clock, CREATE_DAY)
    renewal = the_renewal(api, admin_token, tenant, policy["locator"])
    ok(step(api, admin_token, tenant, renewal["locator"], "discard"))

    result, events = run_at(api, admin_token, tenant, jobs, clock, ISSUE_DAY)

    assert counts(result) == {**NOTHING, "notRenewed": [{"policyLocator": policy["locator"], "reason": "declined"}]}
    assert events == []
    assert entry_of(tenant, policy["locator"]) is None  # nothing more to do for this term


def test_a_renewal_that_fails_validation_is_reported_and_the_run_goes_on(
    api, admin_token, tenant, account, jobs, clock
):
    """The VIN of the first policy fails the validation plugin (it was issued before the rule, through
    the policies service); the second renews."""
    broken = issue(
        tenant,
        account,
        autoRenewalPlanName="Auto",
        element=element_tree().model_copy(
            update={
                "elements": [vehicle(0).model_copy(update={"data": {"vin": "000HGCM82633A0", "value": D("12000.50")}})]
            }
        ),
    )
    fine = issue(tenant, account, autoRenewalPlanName="Auto")

    result, events = run_at(api, admin_token, tenant, jobs, clock, CREATE_DAY)

    assert (result["created"], result["priced"]) == (2, 1)
    [failure] = result["failed"]
    draft = the_renewal(api, admin_token, tenant, broken.policyLocator)
    assert failure["policyLocator"] == broken.policyLocator
    assert (failure["transactionLocator"], failure["code"]) == (draft["locator"], "transaction.invalid")
    assert failure["validationResult"]["success"] is False
    assert [item["errors"] for item in failure["validationResult"]["validationItems"]] == [
        ["the VIN is not a real one"]
    ]
    assert draft["transactionState"] == "draft"
    assert the_renewal(api, admin_token, tenant, fine.policyLocator)["transactionState"] == "priced"
    # (the run passed the policy's start too: pending to onRisk)
    assert sorted(e["type"] for e in events if e["data"]["policyLocator"] == broken.policyLocator) == [
        "policy.renewal.create",
        "policy.status.update",
    ]

    # the entry waits for the next step, whose run tries again (nothing new is created) and reports it again
    assert entry_of(tenant, broken.policyLocator) == ACCEPT_AT
    result, _ = run_at(api, admin_token, tenant, jobs, clock, CREATE_DAY)
    assert read(result) == (0, 0)
    result, _ = run_at(api, admin_token, tenant, jobs, clock, ACCEPT_DAY)
    assert (result["created"], [f["policyLocator"] for f in result["failed"]]) == (0, [broken.policyLocator])


def test_a_run_that_lost_the_race_to_create_counts_it_as_already_done(
    api, admin_token, tenant, account, jobs, clock, monkeypatch
):
    """Two runs read the policy before either created its renewal: the second's create meets the first's
    guard (409) and counts as already done; nothing is created twice."""
    from chalicelib.policies import service as policies

    policy = issued_policy(api, admin_token, tenant, account, autoRenewalPlanName="Auto")
    stale = policies.issued_stack(system_ctx().for_tenant(tenant), policy["locator"])
    run_at(api, admin_token, tenant, jobs, clock, CREATE_DAY)
    monkeypatch.setattr(auto_renewal.policies, "issued_stack", lambda ctx, locator: stale)
    put_entry_back(tenant, policy["locator"], CREATE_AT)

    result, events = run_at(api, admin_token, tenant, jobs, clock, CREATE_DAY)

    assert counts(result) == {**NOTHING, "alreadyDone": 1}
    assert events == []
    monkeypatch.undo()
    the_renewal(api, admin_token, tenant, policy["locator"])  # exactly one


@pytest.mark.parametrize("day, before, at", [(ACCEPT_DAY, CREATE_DAY, ACCEPT_AT), (ISSUE_DAY, ACCEPT_DAY, ISSUE_AT)])
def test_a_run_that_lost_the_race_to_accept_or_issue_counts_it_as_already_done(
    api, admin_token, tenant, account, jobs, clock, monkeypatch, day, before, at
):
    """The transactions service works on the job's own read of the policy: a run that read it before
    another accepted (issued) the renewal writes on condition of the versions it read (409) and counts
    it as already done; nothing is done twice."""
    from chalicelib.policies import service as policies

    policy = issued_policy(api, admin_token, tenant, account, autoRenewalPlanName="Auto")
    run_at(api, admin_token, tenant, jobs, clock, before)
    stale = policies.issued_stack(system_ctx().for_tenant(tenant), policy["locator"])
    first, _ = run_at(api, admin_token, tenant, jobs, clock, day)
    monkeypatch.setattr(auto_renewal.policies, "issued_stack", lambda ctx, locator: stale)
    put_entry_back(tenant, policy["locator"], at)  # as the racing run read it

    result, events = run_at(api, admin_token, tenant, jobs, clock, day)

    assert counts(first) == {**NOTHING, ("accepted" if day == ACCEPT_DAY else "issued"): 1}
    assert counts(result) == {**NOTHING, "alreadyDone": 1}
    assert events == []


SMALL, LARGE = 2, 5


def test_only_due_policies_are_read_and_the_calls_per_renewal_are_flat(
    api, admin_token, tenant, account, jobs, clock, ddb_calls
):
    """Books of 2 and of 5 due policies (each with one policy whose renewal is not due yet, plan Late: 5
    days before, and one ending later, neither seen at all), renewed over the plan's three days: every due
    policy costs the same DynamoDB calls on each day, and the run's own calls do not grow with the book
    (the accounts of its due policies are read in one call). Billing is at rest before the first day (the
    policies billed and invoiced at their term start); the billing jobs the renewals' issues enqueue run
    after the issue day's run, outside what it measures."""

    def book(tenant_locator, account_locator, due):
        for _ in range(due):  # each of its own account
            issue(tenant_locator, new_account(api, admin_token, tenant_locator), autoRenewalPlanName="Auto")
        issue(tenant_locator, account_locator, autoRenewalPlanName="Late")
        issue(
            tenant_locator,
            account_locator,
            autoRenewalPlanName="Auto",
            endTime=datetime(2027, 6, 1, 4, tzinfo=timezone.utc),
        )
        # the policies of this test (policies/support.py) are billed monthly: an invoice per account and month
        # from the term start to just before the create day
        billed = billing_at_rest(tenant_locator, jobs, CREATE_AT - timedelta(seconds=1))
        # each invoice's generation and due time, and each policy's start
        assert (billed["entries"], billed["invoicesGenerated"], billed["statusUpdates"]) == (
            (due + 1) * 24 + due + 2,
            (due + 1) * 12,
            due + 2,
        )
        days = {}
        for day, moment in (("create", CREATE_DAY), ("accept", ACCEPT_DAY), ("issue", ISSUE_DAY)):
            clock.set(moment)
            uow = wiring.unit_of_work(system_ctx().for_tenant(tenant_locator))
            locator = enqueue(uow, JobType.DUE_RUN, {"asOf": isoformat(moment)})
            uow.commit()
            ddb_calls.clear()
            jobs.drain(job_types=frozenset({JobType.DUE_RUN}))
            calls = Counter(ddb_calls)
            days[day] = (get_job(tenant_locator, locator)["result"], calls)
            # the renewals the run issued are billed in their issue's write: no billing job follows
            assert jobs.drain() == 0
            clock.set(datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc))
        return days

    small = book(tenant, account, SMALL)
    other = renewals_tenant(api, admin_token)
    large = book(other, new_account(api, admin_token, other), LARGE)

    done = {"create": ("created", "priced"), "accept": ("accepted",), "issue": ("issued",)}
    for day, (result, calls_of_small) in small.items():
        large_result, calls_of_large = large[day]
        assert read(result) == (SMALL, SMALL)
        assert read(large_result) == (LARGE, LARGE)
        assert counts(result) == {**NOTHING, **{name: SMALL for name in done[day]}}
        assert counts(large_result) == {**NOTHING, **{name: LARGE for name in done[day]}}
        per_renewal = {
            name: (calls_of_large[name] - calls_of_small[name]) / (LARGE - SMALL)
            for name in calls_of_large | calls_of_small
            if calls_of_large[name] != calls_of_small[name]
        }
        run_itself = {
            name: calls_of_small[name] - SMALL * per_renewal.get(name, 0)
            for name in calls_of_small
            if calls_of_small[name] != SMALL * per_renewal.get(name, 0)
        }
        assert (day, per_renewal) == (day, PER_RENEWAL[day])
        assert (day, run_itself) == (day, RUN_ITSELF[day])
    assert sum(sum(calls.values()) for calls in PER_RENEWAL.values()) == 6


@pytest.mark.before_the_session_grows  # its schedule fans out over every tenant of the process
def test_the_schedule_enqueues_one_due_run_per_tenant_as_of_its_own_time(api, tenant, account, jobs, clock):
    from chalicelib.identity import service as identity

    issue(tenant, account, autoRenewalPlanName="Auto")
    billing_at_rest(tenant, jobs, CREATE_AT - timedelta(seconds=1))  # billed, and invoiced monthly until then
    clock.set(CREATE_DAY)

    invoke_schedule(api, "run_due_work")
    fan_out(jobs)

    sent = [m for m in jobs.sent if m.job_type == JobType.DUE_RUN]
    assert sorted(m.tenant for m in sent) == sorted(
        t.locator for t in identity.tenants_after(None, 100_000)[0] if not t.testClock
    )
    assert {m.payload["asOf"] for m in sent} == {"2027-01-02T06:00:00.000Z"}
    jobs.messages = [m for m in jobs.messages if JobMessage.model_validate_json(m).tenant == tenant]
    clock.set(datetime(2027, 1, 2, 7, tzinfo=timezone.utc))  # the message waited an hour: the job works as of 6:00
    assert jobs.drain() == 1
    [ours] = [m for m in sent if m.tenant == tenant]
    result = get_job(tenant, ours.job_locator)["result"]
    assert (result["asOf"], result["created"], result["priced"]) == ("2027-01-02T06:00:00.000Z", 1, 1)


def test_a_run_works_in_steps_each_enqueuing_the_next_once(tenant, account, jobs, clock, monkeypatch):
    from chalicelib.workers import job_handlers

    monkeypatch.setattr(due, "STEP_ENTRIES", 2)
    for _ in range(5):
        issue(tenant, account, autoRenewalPlanName="Auto")
    billing_at_rest(tenant, jobs, CREATE_AT - timedelta(seconds=1))  # billed, and invoiced monthly until then
    clock.set(CREATE_DAY)
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    first = enqueue(uow, JobType.DUE_RUN, {"asOf": isoformat(CREATE_DAY)})
    uow.commit()

    dispatch(JobMessage.model_validate_json(jobs.messages.pop(0)))  # the first step: two entries, and the next
    # the first step run again (say, retried after a transient error) runs the next two entries and enqueues
    # its continuation no second time
    sent = len(jobs.sent)
    again = job_handlers.run_due(system_ctx().for_tenant(tenant), job_handlers.DueRun(asOf=CREATE_DAY))
    assert (again["entries"], again["created"], again.get("continued")) == (2, 2, True)
    assert len(jobs.sent) == sent
    jobs.drain()

    steps = [m for m in jobs.sent if m.tenant == tenant and m.job_type == JobType.DUE_RUN]
    assert [m.job_locator for m in steps][0] == first
    assert [m.payload.get("step", 0) for m in steps] == [0, 1]
    results = [get_job(tenant, m.job_locator)["result"] for m in steps]
    assert [
        (r["entries"], r["policiesRead"], r["created"], r["priced"], r.get("continued", False)) for r in results
    ] == [(2, 2, 2, 2, True), (1, 1, 1, 1, False)]


def _billing_left(tenant: str) -> dict:
    """What a renewal's billing stored in the tenant (billing's records, the due index, the events), without the
    locators, tokens and timestamps of the write that differ from one tenant to another."""
    from chalicelib.billing import repository as billing_repository
    from chalicelib.billing.installments.models import Installment, InstallmentJob, InstallmentLattice
    from chalicelib.settings import settings
    from chalicelib.storage import clients, codec, keys

    pages = (
        clients.dynamodb()
        .get_paginator("scan")
        .paginate(
            TableName=settings().table_name,
            FilterExpression="begins_with(PK, :scope)",
            ExpressionAttributeValues={":scope": {"S": keys.tenant_scope(tenant)}},
        )
    )
    items = [codec.deserialize(item) for page in pages for item in page["Items"]]

    def of(entity, model):
        return [billing_repository.model_of(model, item) for item in items if item.get("entity") == entity]

    return {
        "installments": sorted(
            (
                i.generateTime,
                i.dueTime,
                i.installmentStartTime,
                i.installmentEndTime,
                i.invoicing,
                i.autopay,
                i.billingContainer == i.accountLocator,
                bool(i.invoiceLocator),
                sorted((item.chargeType, item.amount) for item in i.installmentItems),
            )
            for i in of("installment", Installment)
        ),
        "lattices": sorted(
            (
                lattice.termStartTime,
                lattice.termEndTime,
                lattice.effectiveTime,
                lattice.installmentPlanName,
                [frame.model_dump() for frame in lattice.frames],
            )
            for lattice in of("lattice", InstallmentLattice)
        ),
        "installmentJobs": sorted(
            (job.jobStatus, len(job.installmentLocators)) for job in of("installmentJob", InstallmentJob)
        ),
        "roots": sorted(int(i["version"]) for i in items if i.get("entity") == "billingRoot"),
        "due": sorted((str(i["kind"]), str(i["dueAt"])) for i in items if i.get("entity") == "dueEntry"),
        "events": Counter(str(i["type"]) for i in items if i.get("entity") == "event"),
        "records": Counter(str(i.get("entity")) for i in items if i.get("entity") not in ("event", "job")),
    }


def test_a_renewal_billed_in_its_issue_leaves_what_its_billing_job_leaves(api, admin_token, jobs, clock, monkeypatch):
    """The renewals of one run, two of them on one account (each one's write follows the other's root version
    and generation entry) and one of a policy billed on its own (its root read when it is billed), billed in
    their issue's write (billing/installments/service.py IssuesBilledIn), leave what the billing jobs they
    enqueued before left: the same installments, to the amount and the time, lattices, job records, roots, due
    entries and events. (Only the records' own timestamps differ: billed in the issue's write, at the entry's
    due time; by a job, when it ran.)"""
    from chalicelib.billing.installments import service as installments

    def renewed(billed_in: bool) -> dict:
        tenant = renewals_tenant(api, admin_token)
        shared, alone = new_account(api, admin_token, tenant), new_account(api, admin_token, tenant)
        for account in (shared, shared, alone):
            issue(tenant, account, autoRenewalPlanName="Auto")
        issue(tenant, alone, autoRenewalPlanName="Auto", billingLevel="policy")  # its own billing container
        billing_at_rest(tenant, jobs, CREATE_AT - timedelta(seconds=1))
        with monkeypatch.context() as patched:
            if not billed_in:
                patched.setattr(installments.IssuesBilledIn, "__call__", lambda *_: False)
            for moment in (CREATE_DAY, ACCEPT_DAY):
                run_at(api, admin_token, tenant, jobs, clock, moment)
            clock.set(ISSUE_DAY)
            uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
            enqueue(uow, JobType.DUE_RUN, {"asOf": isoformat(ISSUE_DAY)})
            uow.commit()
            jobs.drain(job_types=frozenset({JobType.DUE_RUN}))
            assert jobs.drain() == (0 if billed_in else 4)  # the billing jobs, when not billed in the issue
            clock.set(datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc))
        return _billing_left(tenant)

    in_write, by_jobs = renewed(True), renewed(False)
    assert in_write == by_jobs
    assert len(in_write["lattices"]) == 8  # the policies' and their renewals'
    assert in_write["events"]["billing.installmentlattice.create"] == 8
    assert len(in_write["roots"]) == 3  # the two accounts' and the policy's billed on its own
