"""Auto-renewal (issue 12) on the due index: a policy's `policy.autoRenew` due entry (put by the policies
domain whenever an issue moves the policy's end, its cancellation or its plan: policies.models.renewal_due)
falls due at its renewal's first step; this handler (registered by billing/job_handlers.py, which bills the
renewal's issue in its own write; run by the due pager, runtime/due.py, at the entry's due time) renews the
policy through the transactions service, as renewals.py says when, and moves the entry on to the next step.

The policy is read consistently (policies.service.issued_stack) and brought to the step due at the
entry's time (ctx.now) with at most two transactions service calls (renewals.work), each working on that
read (and what the call before it wrote) instead of reading the policy again: one Query and one commit per
call. The accounts the plugins are shown are read together, those of a page's entries in one
BatchGetItem when a plugin first asks for one (AccountsOfStep, kept for the batch in `work.shared`):
- create: of the plan's `renewalTransactionType`, else the tenant's first renewal type, its new term
  `newTermDuration` long (the policy's durationBasis units), else as long as the policy's term
  (event `policy.renewal.create`);
- then price (`update`, `validate`, `price`), accept (`underwrite`, `accept`) or issue (every step it
  lacks, issued in one TransactWriteItems), each committing its own events.

Then the entry: moved to the renewal's next step moment; left as the issue left it (issuing the renewal
moved the policy's end, so the policies domain put the entry of the next term in that same commit); or
removed (nothing more to do: renewed, cancelled, declined by a person, past the grace). A step that failed
(validation, rating, underwriting) is reported and tried again at the next step's moment, or daily until
the grace ends.

Idempotent: a rerun finds the renewal of the term on the policy's stack and creates nothing; a step
already done is not repeated. Two runs racing: a create carries a guard item named by the policy and
its latest issued transaction (the unit of work's idempotency guard), and every later step is
conditional on a version, so the loser's 409 counts as already done. A renewal that fails validation
or rating, or stops in underwriting, is reported in the job's result (the event catalogue has no event
for it); so is one a DomainError refuses. Any other error is transient: the job step is retried from the
start, which repeats nothing done.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import Account
from chalicelib.configuration import service as configuration
from chalicelib.core import codes
from chalicelib.core.context import CallContext, IdempotencyClaim
from chalicelib.core.errors import AlreadyExists, ConcurrentModification, Conflict, DomainError, NotFound
from chalicelib.policies import service as policies
from chalicelib.policies.models import IssuedStack, Policy, RenewalPlan, Transaction
from chalicelib.runtime.due import DueWork
from chalicelib.runtime.wiring import nested_unit_of_work
from chalicelib.transactions import records, renewals, service
from chalicelib.transactions.records import Found
from chalicelib.transactions.renewals import ACCEPT, CREATE, ISSUE, PRICE, UNDERWRITING_STOPS

CREATE_GUARD = "autoRenewal.create"
DONE = {CREATE: "created", PRICE: "priced", ACCEPT: "accepted", ISSUE: "issued"}
RETRY_AFTER = timedelta(days=1)
"""A renewal step that failed with no further step to wait for is tried again daily, until the grace ends."""
SHARED = "autoRenewal"


@dataclass
class Outcome:
    read: int = 0
    done: Counter[str] = field(default_factory=Counter)
    already_done: int = 0
    not_renewed: list[dict[str, str]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)

    def result(self) -> dict[str, Any]:
        return {
            "policiesRead": self.read,
            **{name: self.done[name] for name in DONE.values()},
            "alreadyDone": self.already_done,
            "notRenewed": self.not_renewed,
            "failed": self.failed,
        }


def renew_due(ctx: CallContext, work: DueWork, billed_in: policies.BilledIn | None = None) -> dict[str, Any]:
    """Runs the due entry of the renewal of policy `work.entry.ref` at ctx.now (its due time). `billed_in`: how
    the batch's issues are billed in their own write (billing's handler of the entry: its installments beside
    the issue), else by the billing job the issue enqueues."""
    renewing = work.shared.get(SHARED)
    if renewing is None:
        renewing = work.shared[SHARED] = Renewing(ctx, billed_in)
        renewing.accounts.expect(
            str(entry.payload["accountLocator"]) for entry in work.of_batch() if entry.payload.get("accountLocator")
        )
    outcome = Outcome()
    renewing.renew(ctx, work, outcome)
    return outcome.result()


class AccountsOfStep:
    """The accounts of the policies a job step expects to renew, read together (one BatchGetItem per 100)
    the first time a plugin asks for one of them; any other one by itself."""

    def __init__(self, ctx: CallContext):
        self.ctx = ctx
        self._expected: set[str] = set()
        self._read: dict[str, Account] = {}

    def expect(self, locators: Iterable[str]) -> None:
        self._expected.update(locators)

    def __call__(self, locator: str) -> Account:
        if locator not in self._read and locator in self._expected:
            self._read.update(accounts.accounts_by_locator(self.ctx, sorted(self._expected - set(self._read))))
            self._expected.clear()
        if locator not in self._read:
            self._read[locator] = accounts.get_account(self.ctx, locator)
        return self._read[locator]


class Renewing:
    """What the renewals of one batch share: the plans of each configuration version, the batch's accounts, the
    billing of its issues in their writes (`billed_in`, when the caller gives it)."""

    def __init__(self, ctx: CallContext, billed_in: policies.BilledIn | None = None):
        self._plans: dict[str, dict[str, RenewalPlan]] = {}
        self.accounts = AccountsOfStep(ctx)
        self.billed_in = billed_in

    def plan(self, ctx: CallContext, policy: Policy) -> RenewalPlan | None:
        version = policy.configVersion
        if version not in self._plans:
            self._plans[version] = renewals.plans_of(configuration.model(ctx, version, resolved=True))
        return self._plans[version].get(policy.autoRenewalPlanName or "")

    def renew(self, ctx: CallContext, work: DueWork, outcome: Outcome) -> None:
        """Brings the renewal of the entry's policy to the step due at ctx.now, and says what becomes of the
        entry (`work`: moved on, else removed; the pager leaves it as an issue put it)."""
        try:
            stack = policies.issued_stack(ctx, work.entry.ref)
        except NotFound:
            return  # no such policy (any more): the entry goes
        outcome.read += 1
        policy = stack.policy
        plan = self.plan(ctx, policy)
        point = renewals.renewable(stack)
        if plan is None or not plan.generateAutoRenewals:
            return
        found = renewals.existing(stack.transactions, point.term_end)
        if found.renewed:
            return
        if point.cancelled or (found.live is None and found.declined):
            outcome.not_renewed.append(
                {"policyLocator": policy.locator, "reason": "cancelled" if point.cancelled else "declined"}
            )
            return
        step = renewals.due(plan, point.term_end, policy.timezone, ctx.now)
        if step is None:
            self._wait(ctx, work, plan, policy, point.term_end, failed=False)
            return
        transaction = found.live
        current = records.found_in(stack, transaction) if transaction else None
        unstored = False
        try:
            for call in renewals.work(step, transaction.transactionState if transaction else None):
                if call == CREATE:  # the draft, stored by the next call's write (work() names one after it)
                    current, unstored = self._create(ctx, work, plan, stack), True
                    transaction = current.transaction
                    outcome.done[DONE[CREATE]] += 1
                    continue
                assert current is not None
                current = records.found_in(current.stack, self._call(ctx, work, call, current, unstored=unstored))
                transaction, unstored = current.transaction, False
                if not self._succeeded(outcome, policy, transaction):
                    self._wait(ctx, work, plan, policy, point.term_end, failed=True)
                    return
                outcome.done[DONE[call]] += 1
                if call == ISSUE:
                    return  # the issue moved the policy's end: its commit put the next term's entry, which stands
        except DomainError as error:
            if unstored and current is not None and not _raced(error):  # the draft is stored all the same
                records.add(ctx, records.before_unstored(current), current.transaction, nested_unit_of_work(work.uow))
            if _raced(error):
                outcome.already_done += 1
            else:
                outcome.failed.append(
                    {
                        "policyLocator": policy.locator,
                        "code": error.code,
                        "message": error.message,
                        **({"transactionLocator": transaction.locator} if transaction else {}),
                    }
                )
            self._wait(ctx, work, plan, policy, point.term_end, failed=not _raced(error))
            return
        self._wait(ctx, work, plan, policy, point.term_end, failed=False)

    @staticmethod
    def _wait(
        ctx: CallContext, work: DueWork, plan: RenewalPlan, policy: Policy, term_end: datetime, *, failed: bool
    ) -> None:
        """The entry moved to the renewal's next step; after a failure with none to wait for, to the next
        day while the grace lasts; else removed."""
        following = renewals.next_step_time(plan, term_end, policy.timezone, ctx.now)
        if following is None and failed and ctx.now + RETRY_AFTER - term_end <= renewals.GRACE:
            following = ctx.now + RETRY_AFTER
        if following is not None and following > work.entry.due_at:
            work.reschedule(following)

    @staticmethod
    def _create(ctx: CallContext, work: DueWork, plan: RenewalPlan, stack: IssuedStack) -> Found:
        """The renewal's draft, not stored (service.new_draft): the next call writes it with its own step, in
        the entry's write, with a guard item named by the policy and its latest issued transaction (a run that
        read the policy before another created its renewal fails on it, 409, and counts it as already done)."""
        policy = stack.policy
        work.guard(
            IdempotencyClaim(
                key=f"{policy.locator}#{policy.issuedTransactionLocator}", operation=CREATE_GUARD, request_hash=""
            )
        )
        term = Decimal(plan.newTermDuration) if plan.newTermDuration else None
        if plan.renewalTransactionType:
            return service.new_draft(
                ctx, policy.locator, [], term_duration=term, stack=stack, transaction_type=plan.renewalTransactionType
            )
        return service.new_draft(ctx, policy.locator, [], route="renew", term_duration=term, stack=stack)

    def _call(self, ctx: CallContext, work: DueWork, call: str, current: Found, *, unstored: bool) -> Transaction:
        """The service call, on the job's own consistent read of the policy (and the draft `_create` made of it,
        `unstored`): the service reads nothing again, and adds its write to the entry's unit of work (the
        pager commits it with the entry's settlement: one write a day), on condition of the versions read."""
        locator = current.transaction.locator
        uow = nested_unit_of_work(work.uow)
        if call == PRICE:
            return service.price(ctx, locator, found=current, read_account=self.accounts, uow=uow, unstored=unstored)
        if call == ACCEPT:
            return service.accept(ctx, locator, found=current, read_account=self.accounts, uow=uow, unstored=unstored)
        return service.issue(
            ctx,
            locator,
            auto_rebase=True,
            found=current,
            read_account=self.accounts,
            uow=uow,
            unstored=unstored,
            billed_in=self.billed_in,
        )

    @staticmethod
    def _succeeded(outcome: Outcome, policy: Policy, transaction: Transaction) -> bool:
        """False (and reported) for a step that failed validation or rating, or stopped in underwriting."""
        result = transaction.validationResult
        if result is not None and not result.success:
            outcome.failed.append(
                {
                    "policyLocator": policy.locator,
                    "transactionLocator": transaction.locator,
                    "code": codes.RENEWAL_INVALID.code,
                    "message": "The renewal failed validation",
                    "validationResult": result.model_dump(mode="json"),
                }
            )
            return False
        if transaction.transactionState in UNDERWRITING_STOPS:
            outcome.failed.append(
                {
                    "policyLocator": policy.locator,
                    "transactionLocator": transaction.locator,
                    "code": codes.RENEWAL_STOPPED[transaction.transactionState].code,
                    "message": f"Underwriting stopped the renewal: {transaction.transactionState}",
                }
            )
            return False
        return True


def _raced(error: DomainError) -> bool:
    """Another run did it first: a version or existence condition failed, or the create guard is taken."""
    return isinstance(error, ConcurrentModification | AlreadyExists) or (
        type(error) is Conflict and error.code == codes.IDEMPOTENCY_IN_PROGRESS.code
    )
