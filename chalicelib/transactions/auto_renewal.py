"""The auto-renewal run (issue 12): one job per tenant and day (workers/schedules.py) renews the policies
whose plan says so, through the transactions service, as renewals.py says when.

A run at `as_of` pages the due index (renewal_index.py) over the term ends of `renewals.window`, up to
STEP_POLICIES roots a job step. A step enqueues its continuation before it works through its page, so
as many workers as the queue feeds work on consecutive pages at once (its locator is derived from where
it continues: a retried step enqueues it once). A policy whose plan has nothing due at `as_of` (from the
index item alone) is not read; a due one is read consistently (policies.service.issued_stack) and
brought to the due step with at most two transactions service calls (renewals.work), each working on
that read (and what the call before it wrote) instead of reading the policy again: one Query and one
commit per call. The accounts the plugins are shown are read together, those of a step's due policies
in one BatchGetItem when a plugin first asks for one (AccountsOfStep):
- create: of the plan's `renewalTransactionType`, else the tenant's first renewal type, its new term
  `newTermDuration` long (the policy's durationBasis units), else as long as the policy's term
  (event `policy.renewal.create`);
- then price (`update`, `validate`, `price`), accept (`underwrite`, `accept`) or issue (every step it
  lacks, issued in one TransactWriteItems), each committing its own events.

Idempotent: a rerun finds the renewal of the term on the policy's stack and creates nothing; a step
already done is not repeated. Two runs racing: a create carries a guard item named by the policy and
its latest issued transaction (the unit of work's idempotency guard), and every later step is
conditional on a version, so the loser's 409 counts as already done. A renewal that fails validation
or rating, or stops in underwriting, is reported in the job's result (the event catalogue has no event
for it) and the run goes on; so does one a DomainError refuses. Any other error is transient: the job
step is retried from the start, which repeats nothing done.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import Account
from chalicelib.configuration import service as configuration
from chalicelib.core.clock import isoformat
from chalicelib.core.context import CallContext, IdempotencyClaim
from chalicelib.core.errors import AlreadyExists, ConcurrentModification, Conflict, DomainError
from chalicelib.core.ids import derived_locator
from chalicelib.policies import service as policies
from chalicelib.policies.models import IssuedStack, Policy, Transaction
from chalicelib.runtime import jobs, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.transactions import records, renewal_index, renewals, service
from chalicelib.transactions.records import Found
from chalicelib.transactions.renewals import ACCEPT, CREATE, ISSUE, PRICE, UNDERWRITING_STOPS, RenewalPlan

STEP_POLICIES = 100
"""Index entries one job step works through: well inside the job lease at the slowest rate measured."""
CREATE_GUARD = "autoRenewal.create"
IN_PROGRESS = "idempotency.in_progress"
DONE = {CREATE: "created", PRICE: "priced", ACCEPT: "accepted", ISSUE: "issued"}


@dataclass
class Outcome:
    in_window: int = 0
    read: int = 0
    done: Counter[str] = field(default_factory=Counter)
    already_done: int = 0
    not_renewed: list[dict[str, str]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)

    def result(self, as_of: datetime, continued_after: str | None) -> dict[str, Any]:
        return {"asOf": isoformat(as_of), "policiesInWindow": self.in_window, "policiesRead": self.read,
                **{name: self.done[name] for name in DONE.values()}, "alreadyDone": self.already_done,
                "notRenewed": self.not_renewed, "failed": self.failed,
                **({"continuedAfter": continued_after} if continued_after else {})}


def run(ctx: CallContext, as_of: datetime, after: str | None = None) -> dict[str, Any]:
    """One step of the tenant's run at `as_of`, from the index entry after `after` (the first: None)."""
    _, model = configuration.current_model(ctx, resolved=True)
    window = renewals.window(as_of, renewals.plans_of(model).values())
    outcome = Outcome()
    if window is None:
        return outcome.result(as_of, None)
    page = renewal_index.due(ctx.tenant, *window, after=after, limit=STEP_POLICIES)
    if page.after is not None:
        _continue(ctx, as_of, page.after)  # first: another worker takes the next page meanwhile
    renewing = Renewing(ctx, as_of, outcome)
    renewing.accounts.expect(p.accountLocator for p in page.policies if renewing.due(p) is not None)
    for policy in page.policies:
        renewing.renew(policy)
    return outcome.result(as_of, page.after)


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
    def __init__(self, ctx: CallContext, as_of: datetime, outcome: Outcome):
        self.ctx, self.as_of, self.outcome = ctx, as_of, outcome
        self._plans: dict[str, dict[str, RenewalPlan]] = {}
        self.accounts = AccountsOfStep(ctx)

    def plan(self, policy: Policy) -> RenewalPlan | None:
        version = policy.configVersion
        if version not in self._plans:
            self._plans[version] = renewals.plans_of(configuration.model(self.ctx, version, resolved=True))
        return self._plans[version].get(policy.autoRenewalPlanName or "")

    def due(self, indexed: Policy) -> renewals.Step | None:
        """The step due at `as_of` as the index has the policy (its term end may be behind)."""
        return renewals.due(self.plan(indexed), indexed.endTime, indexed.timezone, self.as_of)

    def renew(self, indexed: Policy) -> None:
        """Brings the renewal of `indexed` (a root as the index holds it) to the step due at `as_of`."""
        self.outcome.in_window += 1
        if self.due(indexed) is None:
            return
        stack = policies.issued_stack(self.ctx, indexed.locator)
        self.outcome.read += 1
        policy = stack.policy
        plan = self.plan(policy)
        point = renewals.renewable(stack)
        step = renewals.due(plan, point.term_end, policy.timezone, self.as_of)
        if plan is None or step is None:
            return
        found = renewals.existing(stack.transactions, point.term_end)
        if found.renewed:
            return
        if point.cancelled or (found.live is None and found.declined):
            self.outcome.not_renewed.append({"policyLocator": policy.locator,
                                             "reason": "cancelled" if point.cancelled else "declined"})
            return
        transaction = found.live
        current = records.found_in(stack, transaction) if transaction else None
        try:
            for call in renewals.work(step, transaction.transactionState if transaction else None):
                current = records.found_in(stack if current is None else current.stack,
                                           self._call(call, plan, stack, current))
                transaction = current.transaction
                if not self._succeeded(policy, transaction):
                    return
                self.outcome.done[DONE[call]] += 1
        except DomainError as error:
            if _raced(error):
                self.outcome.already_done += 1
            else:
                self.outcome.failed.append({"policyLocator": policy.locator, "code": error.code,
                                            "message": error.message,
                                            **({"transactionLocator": transaction.locator} if transaction else {})})

    def _call(self, call: str, plan: RenewalPlan, stack: IssuedStack, current: Found | None) -> Transaction:
        """The service call, on the job's own consistent read of the policy (and what its calls changed of
        it since): the service reads nothing again, and writes on condition of the versions read."""
        if call == CREATE:
            policy = stack.policy
            guarded = replace(self.ctx, idempotency=IdempotencyClaim(
                key=f"{policy.locator}#{policy.issuedTransactionLocator}", operation=CREATE_GUARD, request_hash=""))
            term = Decimal(plan.newTermDuration) if plan.newTermDuration else None
            if plan.renewalTransactionType:
                return service.create_transaction(guarded, policy.locator, [], term_duration=term, stack=stack,
                                                  transaction_type=plan.renewalTransactionType)
            return service.create_transaction(guarded, policy.locator, [], route="renew", term_duration=term,
                                              stack=stack)
        assert current is not None
        locator = current.transaction.locator
        if call == PRICE:
            return service.price(self.ctx, locator, found=current, read_account=self.accounts)
        if call == ACCEPT:
            return service.accept(self.ctx, locator, found=current, read_account=self.accounts)
        return service.issue(self.ctx, locator, auto_rebase=True, found=current, read_account=self.accounts)

    def _succeeded(self, policy: Policy, transaction: Transaction) -> bool:
        """False (and reported) for a step that failed validation or rating, or stopped in underwriting."""
        result = transaction.validationResult
        if result is not None and not result.success:
            self.outcome.failed.append({"policyLocator": policy.locator, "transactionLocator": transaction.locator,
                                        "code": "transaction.invalid", "message": "The renewal failed validation",
                                        "validationResult": result.model_dump(mode="json")})
            return False
        if transaction.transactionState in UNDERWRITING_STOPS:
            self.outcome.failed.append({"policyLocator": policy.locator, "transactionLocator": transaction.locator,
                                        "code": f"transaction.{transaction.transactionState}",
                                        "message": f"Underwriting stopped the renewal: {transaction.transactionState}"})
            return False
        return True


def _raced(error: DomainError) -> bool:
    """Another run did it first: a version or existence condition failed, or the create guard is taken."""
    return isinstance(error, ConcurrentModification | AlreadyExists) or (
        type(error) is Conflict and error.code == IN_PROGRESS)


def _continue(ctx: CallContext, as_of: datetime, after: str) -> None:
    uow = wiring.unit_of_work(ctx)
    locator = derived_locator(as_of, f"{JobType.POLICIES_AUTO_RENEW}#{isoformat(as_of)}#{after}")
    jobs.enqueue(uow, JobType.POLICIES_AUTO_RENEW, {"asOf": isoformat(as_of), "after": after}, locator=locator)
    try:
        uow.commit()
    except AlreadyExists:
        pass  # an earlier attempt of this step enqueued it
