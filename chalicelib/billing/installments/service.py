"""Installments (DECISIONS.md "Billing"): an issued transaction's charges become an installment lattice
and installments, over the lattice's frames (lattice.py, allocation.py); plans.py picks the schedule. A
lattice and its installments are one write with the bump of their container's billing root
(account_root.py), so two writers of one container never interleave: the later one fails with 409 and,
in a job, is retried. Invoicing them is invoices/service.py's."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import Account, BillingLevel
from chalicelib.billing import account_root, repository
from chalicelib.billing.installments import allocation, lattice, plans
from chalicelib.billing.installments import repository as installment_repository
from chalicelib.billing.installments.models import (
    ChargeInvoicing,
    Installment,
    InstallmentItem,
    InstallmentJob,
    InstallmentLattice,
    LatticeFrame,
)
from chalicelib.billing.models import JobStatus
from chalicelib.configuration import service as configuration
from chalicelib.configuration.billing_plans import (
    BackdatedInstallmentsBilling,
    BillingPlans,
)
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import AlreadyExists, NotFound
from chalicelib.core.ids import derived_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.policies import service as policies
from chalicelib.policies.models import IssuedStack, Policy, Term, Transaction, TransactionCategory
from chalicelib.priceable.models import Charge
from chalicelib.runtime import due, jobs, wiring
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.wiring import UnitOfWork
from chalicelib.transactions import service as transactions

LATTICE_EVENT = "billing.installmentlattice.create"


def lattice_locator(transaction: Transaction) -> str:
    """Derived from the transaction: billing it twice finds the lattice of the first time."""
    return derived_locator(transaction.issuedTime or transaction.createdAt, f"lattice:{transaction.locator}")


@dataclass
class Billed:
    """What billing some charges over a term makes: the lattice and its installments."""

    lattice: InstallmentLattice
    installments: list[Installment]


@dataclass(frozen=True)
class Billing:
    """Who and what is billed: the account, the policy, transaction and quote (the latter three may be
    stand-ins for a preview), the container invoices group by, the term and the effective time."""

    account: Account
    policy_locator: str
    transaction_locator: str
    term_locator: str
    quote_locator: str | None
    container: str
    term_start: datetime
    term_end: datetime
    effective: datetime
    currency: str
    timezone: str
    duration_basis: str
    """The policy's (or quote's) durationBasis: the unit the frames' coverage is weighted in."""
    plan_name: str | None
    preferences: dict[str, Any] | None
    reversal: bool = False


@dataclass(frozen=True)
class TransactionBilled:
    """What billing an issued transaction did: the transaction asked for (its category says whether a
    cancellation's consolidation follows), and the accounts whose invoicing it made due now."""

    transaction: Transaction
    due_accounts: list[str]
    roots: dict[str, int] = field(default_factory=dict)
    """The version of the account's billing root as billing's write left it, when that write bumped it (the
    account the container): an invoice run of the account right after starts from it, not read again."""


def bill_transaction(
    ctx: CallContext,
    transaction_locator: str,
    job_locator: str | None = None,
    policy_locator: str | None = None,
    *,
    safety_net: bool = False,
) -> TransactionBilled:
    """Spread the charges of an issued transaction over its installment lattice (once: a second call
    finds the lattice and writes nothing), recording the job `job_locator` that did it. The accounts due
    now are none when every installment is to be generated later (its due entry does that at the time).
    `policy_locator`: the transaction's policy as its job names it (its alias not read then). `safety_net`:
    billed by the issue's writer, not a job: the lattice's write removes the issue's billing safety net entry."""
    stack = policies.transaction_stack(ctx, transaction_locator, policy_locator)
    by_locator = {t.locator: t for t in stack.transactions}
    asked = transaction = by_locator[transaction_locator]
    if transaction.aggregateTransactionLocator:  # issued out of sequence: billed with the reversals and
        # reapplications around it, which its aggregate (of the same policy) names (no job bills them alone)
        if transaction.aggregateTransactionLocator not in by_locator:
            raise codes.not_found("transaction", transaction.aggregateTransactionLocator)
        transaction = by_locator[transaction.aggregateTransactionLocator]
    parts = [by_locator[part] for part in transaction.aggregatedTransactionLocators if part in by_locator]
    locator = lattice_locator(transaction)
    roots = _account_and_roots(ctx, stack.policy.accountLocator, transaction.policyLocator)
    billing = of_transaction(ctx, transaction, stack)
    charges = [charge for part in (transaction, *parts) for charge in part.charges]
    billed = billed_charges(
        ctx,
        configuration.billing_plans(ctx, transaction.configVersion),
        billing,
        charges,
        locator,
        named_at=transaction.issuedTime,
    )
    job = _finished_job(ctx, transaction, job_locator or locator, billed)
    container = billed.lattice.billingContainer
    if not _write_installments(
        ctx,
        billing.account.locator,
        billed.lattice,
        billed.installments,
        job,
        {container: roots[container]} if container in roots else None,
        safety_net_of=transaction_locator if safety_net else None,
    ):
        return TransactionBilled(asked, [])
    due_now = any(installment.generateTime <= ctx.now for installment in billed.installments)
    # the account's root as its own write left it (a policy's container: the run reads the account's again)
    after = {container: roots[container] + 1} if container == billing.account.locator else {}
    return TransactionBilled(asked, [billing.account.locator] if due_now else [], after)


def _finished_job(ctx: CallContext, transaction: Transaction, job_locator: str, billed: Billed) -> InstallmentJob:
    return InstallmentJob(
        locator=job_locator,
        referenceLocator=transaction.locator,
        policyLocator=transaction.policyLocator,
        quoteLocator=transaction.quoteLocator,
        latticeLocator=billed.lattice.locator,
        installmentLocators=[i.locator for i in billed.installments],
        jobStatus=JobStatus.FINISHED,
        createdAt=transaction.issuedTime or ctx.now,
        completedAt=ctx.now,
    )


@dataclass
class IssueBilled:
    """An issue's billing built in memory for its own write (`billed_issue`): the lattice and its installments,
    and the record of the billing job it stands for."""

    billed: Billed
    job: InstallmentJob


def billed_issue(
    ctx: CallContext, transaction: Transaction, policy: Policy, terms: list[Term], account: Account, job_locator: str
) -> IssueBilled | None:
    """What `bill_transaction` makes of `transaction` (issued, in sequence: an aggregate's parts are billed
    together, not here), as the issue writing `policy` and `terms` leaves them, built without a read (the
    configuration of its version in the request's reads), for the issue's writer to add to its write
    (`add_billed`). None when it is not billed alone (issued out of sequence) or its term is not among
    `terms`."""
    if transaction.aggregateTransactionLocator or transaction.aggregatedTransactionLocators:
        return None
    term = next((t for t in terms if t.locator == transaction.termLocator), None)
    if term is None:
        return None
    billed = billed_charges(
        ctx,
        configuration.billing_plans(ctx, transaction.configVersion),
        _billing(transaction, policy, account, term.startTime, term.endTime),
        list(transaction.charges),
        lattice_locator(transaction),
        named_at=transaction.issuedTime,
    )
    return IssueBilled(billed, _finished_job(ctx, transaction, job_locator, billed))


def add_billed(ctx: CallContext, uow: UnitOfWork, built: IssueBilled, invoiced: set[str]) -> None:
    """Add to `uow` (the issue's write, which bumps the container's root) the lattice, its job's record and event,
    and its installments but those an invoice of the same write takes (`invoiced`: written new and invoiced with
    it). The account's generation entry is the caller's."""
    installment_repository.add_lattice(
        uow, ctx.tenant, built.billed.lattice, [i.locator for i in built.billed.installments]
    )
    uow.add(*installment_repository.installment_job_writes(ctx.tenant, built.job))
    uow.record_event(LATTICE_EVENT, {"installmentLatticeLocator": built.billed.lattice.locator})
    for installment in built.billed.installments:
        if installment.locator not in invoiced:
            uow.add(*installment_repository.installment_writes(ctx.tenant, installment))


ENTRY_SETTLEMENT = 1
"""What the due pager adds to an entry's unit of work after its handler (the entry settled): room a billing in
the entry's write leaves."""


class IssuesBilledIn:
    """The billing of a due step's issues in their own writes (policies.issue_transaction's `billed_in`), for a
    batch of entries each naming a policy and its account (a batch of auto-renewals: `of_policies`, policy ->
    account): what the issue's billing job would write (the lattice, its installments, the job's record and
    event, the account's generation entry brought forward, the container's root bumped), in the issue's
    TransactWriteItems instead of a job of its own (issue 28: that job's 7 calls). The accounts, their roots
    and their generation entries are read for the whole batch the first time an issue asks (a BatchGetItem per
    100 records; the root of a policy billed on its own when its issue asks), and kept as each write that
    committed left them (the pager commits one entry after the other: the policies of one account follow each
    other's writes). A billing write of one of its accounts by anyone else meanwhile fails that issue's write,
    409, which the pager retries as any race it loses (a day later: runtime/due.py RETRY_AFTER).

    It declines (False: the issue enqueues its billing job, as before) an issue not of the batch, billed out
    of sequence, with an installment to invoice now (its job's invoice run does that) or that would not fit;
    and after a decline, or a write that did not commit, every later issue of that account (its job may have
    moved the versions kept)."""

    def __init__(self, ctx: CallContext, of_policies: dict[str, str]):
        self._ctx = ctx
        self._of_policies = of_policies
        self._accounts: dict[str, Account] | None = None
        self._roots: dict[tuple[str, str], int] = {}
        """(account, container) -> the root's version as last read or written."""
        self._generation: dict[str, due.DueEntry | None] = {}
        self._unsure: set[str] = set()
        """Accounts whose versions kept may be stale: billed by a job, or a write not known to have committed."""

    def _read(self) -> dict[str, Account]:
        if self._accounts is None:
            ctx = self._ctx
            read = accounts.accounts_by_locator(ctx, sorted(set(self._of_policies.values())))
            records = [
                key
                for account in read
                for key in (
                    repository.root_record_key(ctx.tenant, account, account),
                    due.entry_key(ctx, DueKind.INVOICE_GENERATE, account),
                )
            ]
            found = accounts.get_account_with(ctx, next(iter(read)), records)[1] if read else {}
            for account in read:
                self._roots[(account, account)] = repository.root_version_of(
                    found.get(repository.root_record_key(ctx.tenant, account, account))
                )
                self._generation[account] = due.entry_of(
                    ctx, found.get(due.entry_key(ctx, DueKind.INVOICE_GENERATE, account))
                )
            self._accounts = read
        return self._accounts

    def __call__(self, uow: UnitOfWork, transaction: Transaction, policy: Policy, terms: list[Term]) -> bool:
        ctx, locator = uow.ctx, policy.accountLocator
        if self._of_policies.get(policy.locator) != locator or locator in self._unsure:
            return False
        account = self._read().get(locator)
        if account is None:
            return False
        self._unsure.add(locator)  # until the write commits (then `_committed`), or for good after a decline
        built = billed_issue(ctx, transaction, policy, terms, account, policies.billing_job_locator(transaction))
        if built is None or any(i.generateTime <= ctx.now for i in built.billed.installments):
            return False
        container = built.billed.lattice.billingContainer
        if (locator, container) not in self._roots:  # a policy billed on its own: its root read now
            self._roots[(locator, container)] = repository.root_versions(ctx.tenant, locator, [container])[container]
        work = wiring.nested_unit_of_work(uow)
        account_root.bump_at(ctx, work, locator, {container: self._roots[(locator, container)]})
        generation = self._generation[locator]
        if built.billed.installments:  # put again where it stands earlier, as the job's write does
            earliest = min(i.generateTime for i in built.billed.installments)
            generation = due.bring_forward_from(
                work, generation, DueKind.INVOICE_GENERATE, locator, earliest, put_again=True
            )
        add_billed(ctx, work, built, set())
        if work.remaining < ENTRY_SETTLEMENT:
            return False
        work.after_commit(lambda: self._committed(locator, container, generation))
        work.commit()
        return True

    def _committed(self, account: str, container: str, generation: due.DueEntry | None) -> None:
        self._roots[(account, container)] += 1
        self._generation[account] = generation
        self._unsure.discard(account)


def _account_and_roots(ctx: CallContext, account: str, policy: str) -> dict[str, int]:
    """The account (into the request's reads), the configuration's current pointer (likewise: what an invoice
    run after the billing reads) and the versions of the billing roots of the account and of the policy (one
    of them the container billed): one BatchGetItem, before anything billing's write decides on."""
    pointer = configuration.current_pointer_key(ctx)
    containers = [account, policy]
    _, found = accounts.get_account_with(
        ctx,
        account,
        [pointer, *(repository.root_record_key(ctx.tenant, account, container) for container in containers)],
    )
    configuration.remember_current(ctx, found.get(pointer))
    return repository.root_versions_in(ctx.tenant, account, containers, found)


def billing_failed(
    ctx: CallContext,
    transaction_locator: str,
    policy_locator: str | None,
    job_locator: str,
    error: str,
    retries: int = 0,
) -> None:
    """Record that billing the transaction failed (the job fails; `retry_failed` enqueues it again)."""
    job = InstallmentJob(
        locator=job_locator,
        referenceLocator=transaction_locator,
        policyLocator=policy_locator,
        jobStatus=JobStatus.FAILED,
        processingErrors=error,
        retries=retries,
        createdAt=ctx.now,
        completedAt=ctx.now,
    )
    uow = wiring.unit_of_work(ctx)
    uow.add(*installment_repository.installment_job_writes(ctx.tenant, job))
    uow.commit()


def installment_jobs(ctx: CallContext, owner_kind: str, owner: str, page: PageRequest) -> Page[InstallmentJob]:
    return installment_repository.installment_jobs(ctx.tenant, owner_kind, owner, page)


def retry_failed(ctx: CallContext, policy_locator: str) -> list[InstallmentJob]:
    """Enqueue again the billing of every transaction of the policy whose billing failed."""
    policy = policies.get_policy(ctx, policy_locator)
    failed = [
        job
        for job in installment_repository.all_installment_jobs(ctx.tenant, "policy", policy.locator)
        if job.jobStatus == JobStatus.FAILED
    ]
    queued = []
    uow = wiring.unit_of_work(ctx)
    for job in failed:
        retried = job.model_copy(
            update={
                "jobStatus": JobStatus.QUEUED,
                "processingErrors": "",
                "completedAt": None,
                "retries": job.retries + 1,
            }
        )
        uow.add(*installment_repository.installment_job_writes(ctx.tenant, retried))
        jobs.enqueue(
            uow,
            JobType.BILLING_INSTALLMENTS,
            {
                "transactionLocator": job.referenceLocator,
                "policyLocator": policy.locator,
                "jobLocator": job.locator,
                "retries": retried.retries,
            },
            locator=derived_locator(ctx.now, f"billing-retry:{job.locator}:{retried.retries}"),
        )
        queued.append(retried)
    if queued:
        uow.commit()
    return queued


def of_transaction(ctx: CallContext, transaction: Transaction, stack: IssuedStack | None = None) -> Billing:
    """Who and what billing `transaction` bills; `stack` (its policy's, read already) spares reading the
    policy and the term."""
    policy = stack.policy if stack is not None else policies.get_policy(ctx, transaction.policyLocator)
    account = accounts.get_account(ctx, policy.accountLocator)
    start, end = _term_span(ctx, transaction, stack)
    return _billing(transaction, policy, account, start, end)


def _billing(transaction: Transaction, policy: Policy, account: Account, start: datetime, end: datetime) -> Billing:
    container = container_for(policy.billingLevel, account, policy.locator)
    return Billing(
        account=account,
        policy_locator=policy.locator,
        transaction_locator=transaction.locator,
        term_locator=transaction.termLocator,
        quote_locator=transaction.quoteLocator,
        container=container,
        term_start=start,
        term_end=end,
        effective=max(min(transaction.effectiveTime, end), start),
        currency=policy.currency,
        timezone=policy.timezone,
        duration_basis=policy.durationBasis,
        plan_name=policy.installmentPlanName,
        preferences=transaction.preferences or policy.preferences,
        reversal=transaction.transactionCategory in (TransactionCategory.CANCELLATION, TransactionCategory.REVERSAL),
    )


def billed_charges(
    ctx: CallContext,
    billing_plans: BillingPlans,
    billing: Billing,
    charges: list[Charge],
    locator: str,
    *,
    named_at: datetime | None = None,
) -> Billed:
    """The lattice of `billing` and the installments that spread `charges` over it (nothing stored). The
    installments' locators derive from `named_at` (the transaction's issue time: the same in every attempt
    of its billing job, so a retry writes a chunk an earlier attempt wrote under the same keys) or now."""
    plan_name, schedule = plans.schedule(billing_plans, billing.plan_name, billing.preferences)
    term = lattice.term_frames(billing.term_start, billing.term_end, schedule, billing.timezone)
    frames = lattice.from_effective(term, billing.effective, schedule, billing.timezone)
    defer = billing_plans.backdated_installments_billing == BackdatedInstallmentsBilling.DEFER_DUE_DATE
    frames = allocation.backdated(frames, ctx.now, defer_due_date=defer, due_lead_days=schedule.due_lead_days)
    window_start, window_end = frames[0].start, frames[-1].end
    scheduled = [
        charge for charge in charges if charge.invoicing not in (ChargeInvoicing.NEXT, ChargeInvoicing.IMMEDIATE)
    ]
    billables = [
        allocation.Billable(
            charge_locator=charge.locator,
            amount=charge.amount,
            coverage_start=window_start,
            coverage_end=window_end,
            spread=charge.handling != "flat",
        )
        for charge in scheduled
    ]
    shares = allocation.spread(
        billables, frames, billing.currency, basis=billing.duration_basis, time_zone=billing.timezone
    )
    weights = allocation.normalized_weights(frames, basis=billing.duration_basis, time_zone=billing.timezone)
    record = InstallmentLattice(
        locator=locator,
        accountLocator=billing.account.locator,
        policyLocator=billing.policy_locator,
        billingContainer=billing.container,
        transactionLocator=billing.transaction_locator,
        termLocator=billing.term_locator,
        quoteLocator=billing.quote_locator,
        currency=billing.currency,
        timezone=billing.timezone,
        termStartTime=billing.term_start,
        termEndTime=billing.term_end,
        effectiveTime=billing.effective,
        reversalLattice=billing.reversal,
        installmentPlanName=plan_name,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        frames=[_frame(frame, weight) for frame, weight in zip(frames, weights)],
    )
    by_charge = {charge.locator: charge for charge in charges}
    installments = [
        _installment(
            ctx,
            record,
            billing.transaction_locator,
            frame,
            share,
            by_charge,
            billing.container,
            schedule.autopay,
            named_at=named_at,
        )
        for frame, share in zip(frames, shares)
        if share
    ]
    for mode in (ChargeInvoicing.NEXT, ChargeInvoicing.IMMEDIATE):
        whole = {charge.locator: charge.amount for charge in charges if charge.invoicing == mode and charge.amount}
        if whole:  # billed whole with the first frame's times; an immediate one is invoiced now
            first = frames[0] if mode == ChargeInvoicing.NEXT else replace(frames[0], generate_time=ctx.now)
            installments.append(
                _installment(
                    ctx,
                    record,
                    billing.transaction_locator,
                    first,
                    whole,
                    by_charge,
                    billing.container,
                    schedule.autopay,
                    mode,
                    named_at=named_at,
                )
            )
    return Billed(record, installments)


def _term_span(
    ctx: CallContext, transaction: Transaction, stack: IssuedStack | None = None
) -> tuple[datetime, datetime]:
    """The start and end of the transaction's term (looked up among the `stack`'s terms, when given). An
    unissued renewal's term does not exist yet: the span its segments will have. Reversing a renewal
    deletes its term: the reversal's refund is billed over the span the reversed transactions' segments
    had in that term."""
    if stack is not None:
        term = next((t for t in stack.terms if t.locator == transaction.termLocator), None)
    else:
        try:
            term = policies.get_term(ctx, transaction.termLocator)
        except NotFound:
            term = None
    if term is not None:
        return term.startTime, term.endTime
    reversed_ = [transactions.get_transaction(ctx, locator) for locator in transaction.reversedTransactionLocators]
    spans = [
        segment for each in reversed_ if each.termLocator == transaction.termLocator for segment in each.segments
    ] or list(transaction.segments)
    if not spans:
        raise codes.not_found("term", transaction.termLocator)
    return min(s.startTime for s in spans), max(s.endTime for s in spans)


def _billing_level(chosen: BillingLevel | None, account: Account) -> BillingLevel:
    """A policy's (or quote's) billing level; `inherit` (or none) takes the account's."""
    if chosen in (BillingLevel.ACCOUNT, BillingLevel.POLICY):
        return BillingLevel(chosen)
    return BillingLevel.POLICY if account.billingLevel == BillingLevel.POLICY else BillingLevel.ACCOUNT


def _frame(frame: lattice.Frame, weight: Decimal) -> LatticeFrame:
    seconds = Decimal((frame.end - frame.start).total_seconds())
    return LatticeFrame(
        installmentStartTime=frame.start,
        installmentEndTime=frame.end,
        coverageStartTime=frame.start,
        coverageEndTime=frame.end,
        installmentDuration=seconds,
        coverageDuration=seconds,
        normalizedWeight=weight,
        generateTime=frame.generate_time,
        dueTime=frame.due_time,
        autopayTime=frame.autopay_time,
    )


_OF_LATTICE = ("accountLocator", "policyLocator", "termLocator", "quoteLocator", "currency", "timezone")
"""What an installment takes from its lattice as it is."""


def _installment(
    ctx: CallContext,
    record: InstallmentLattice,
    transaction_locator: str,
    frame: lattice.Frame,
    share: dict[str, Decimal],
    charges: dict[str, Charge],
    container: str,
    autopay: bool,
    invoicing: ChargeInvoicing = ChargeInvoicing.SCHEDULED,
    *,
    named_at: datetime | None = None,
) -> Installment:
    moment = (named_at or ctx.now) + timedelta(milliseconds=frame.index)  # they list in frame order
    seed = f"installment:{record.locator}:{frame.index}:{frame.start.isoformat()}"
    locator = derived_locator(moment, seed if invoicing == ChargeInvoicing.SCHEDULED else f"{seed}:{invoicing}")
    seconds = Decimal((frame.end - frame.start).total_seconds())
    items = [
        InstallmentItem(
            locator=derived_locator(moment, f"installmentItem:{locator}:{charge_locator}"),
            installmentLocator=locator,
            chargeLocator=charge_locator,
            elementLocator=charges[charge_locator].elementLocator,
            elementStaticLocator=charges[charge_locator].elementStaticLocator,
            chargeType=charges[charge_locator].chargeType,
            chargeCategory=str(charges[charge_locator].chargeCategory),
            amount=amount,
            createdAt=ctx.now,
            createdBy=ctx.user_locator,
        )
        for charge_locator, amount in share.items()
    ]
    return Installment(
        **{name: getattr(record, name) for name in _OF_LATTICE},
        locator=locator,
        installmentLatticeLocator=record.locator,
        transactionLocator=transaction_locator,
        installmentFrameIndex=frame.index,
        installmentStartTime=frame.start,
        installmentEndTime=frame.end,
        coverageStartTime=frame.start,
        coverageEndTime=frame.end,
        installmentDuration=seconds,
        coverageDuration=seconds,
        generateTime=frame.generate_time,
        dueTime=frame.due_time,
        autopayTime=frame.autopay_time,
        installmentItems=items,
        billingContainer=container,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
        invoicing=invoicing,
        autopay=autopay,
    )


def _write_installments(
    ctx: CallContext,
    account: str,
    record: InstallmentLattice,
    installments: list[Installment],
    job: InstallmentJob,
    root: dict[str, int] | None = None,
    safety_net_of: str | None = None,
) -> bool:
    """The lattice with its installments, the root bump, the account's generation entry and the event,
    in one TransactWriteItems when they fit (a lattice of up to ~30 installments): answers False, writing
    nothing, when the lattice exists already (billed before: its put fails). A larger lattice's
    installments go first in chunks (a chunk an earlier attempt wrote is skipped), then the lattice: until
    it commits, nothing lists the lattice, and its installments are invoiced like any other once it does;
    its existence is checked first, since a retry at another time derives other installment locators.
    `root`: the container's root version as the caller read it first (else read here). `safety_net_of`: the
    transaction whose billing safety net entry the lattice's write removes (billed without its job)."""
    if root is None:
        uow = account_root.open_write(ctx, account, [record.billingContainer])
    else:
        uow = wiring.unit_of_work(ctx)
        account_root.bump_at(ctx, uow, account, root)
    if installments:
        # put even where an entry stands earlier (there again, with a new token): a run of that entry that
        # read the account's next generate time before these installments were written then finds it moved
        # and leaves it, instead of removing (or moving past them) the entry they count on
        earliest = min(i.generateTime for i in installments)
        due.bring_forward(uow, DueKind.INVOICE_GENERATE, account, earliest, put_again=True)
    if safety_net_of is not None:
        due.cancel(uow, DueKind.TRANSACTION_BILLING, safety_net_of)
    installment_repository.add_lattice(uow, ctx.tenant, record, [i.locator for i in installments])
    uow.add(*installment_repository.installment_job_writes(ctx.tenant, job))
    uow.record_event(LATTICE_EVENT, {"installmentLatticeLocator": record.locator})
    writes = [installment_repository.installment_writes(ctx.tenant, installment) for installment in installments]
    if sum(len(each) for each in writes) <= uow.remaining:
        uow.add(*(write for each in writes for write in each))
    else:
        if installment_repository.lattice_exists(ctx.tenant, record.locator):
            return False
        _write_in_chunks(ctx, writes)
    try:
        uow.commit()
    except AlreadyExists:
        return False  # an earlier attempt committed the lattice
    return True


def _write_in_chunks(ctx: CallContext, writes: list[list[Any]]) -> None:
    """The writes of each installment, as many installments to a TransactWriteItems as it holds (a chunk
    that exists already is skipped)."""
    uow = wiring.unit_of_work(ctx)
    for each in writes:
        if len(each) > uow.remaining:
            _commit_new(uow)
            uow = wiring.unit_of_work(ctx)
        uow.add(*each)
    _commit_new(uow)


def _commit_new(uow: UnitOfWork) -> None:
    try:
        uow.commit()
    except AlreadyExists:
        pass


def lattice_of(ctx: CallContext, locator: str) -> InstallmentLattice:
    found = repository.get(ctx.tenant, "lattice", locator, InstallmentLattice)
    if found is None:
        raise codes.not_found("installmentLattice", locator)
    return found


def latest_lattice_of_quote(ctx: CallContext, quote_locator: str) -> InstallmentLattice:
    found = repository.all_of(ctx.tenant, "quote", quote_locator, "LAT", "lattice", InstallmentLattice)
    if not found:
        raise codes.not_found("installmentLattice", f"of quote {quote_locator}")
    return found[-1]


def lattices_of_policy(ctx: CallContext, policy_locator: str, page: PageRequest) -> Page[InstallmentLattice]:
    return repository.page_of(ctx.tenant, "policy", policy_locator, "LAT", "lattice", InstallmentLattice, page)


def installment(ctx: CallContext, locator: str) -> Installment:
    found = repository.get(ctx.tenant, "installment", locator, Installment)
    if found is None:
        raise codes.not_found("installment", locator)
    return found


def installments_of(ctx: CallContext, owner_kind: str, owner: str, page: PageRequest) -> Page[Installment]:
    return installment_repository.installments_of(ctx.tenant, owner_kind, owner, page)


def container_for(chosen: BillingLevel | None, account: Account, own: str) -> str:
    return own if _billing_level(chosen, account) == BillingLevel.POLICY else account.locator
