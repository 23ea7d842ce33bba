"""Billing use cases (DECISIONS.md "Billing"): an issued transaction's charges become an installment
lattice and installments; installments become invoices at their generate time; payments settle
invoices, oldest due first, and what they leave goes to the account's credit balance.

Every billing write carries the bumps of the billing roots of the containers it changes (repository.py
says which), so two writers of one container never interleave: the later one fails with 409 and, in a
job, is retried.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import Account, BillingLevel
from chalicelib.billing import repository, staging
from chalicelib.billing.credit import repository as credit_records
from chalicelib.billing.credit.models import CreditDistribution, CreditDistributionState
from chalicelib.billing.delinquency import service as delinquencies
from chalicelib.billing.holds import service as holds
from chalicelib.billing.installments import allocation, lattice, plans
from chalicelib.billing.invoices import consolidation, fees, generator
from chalicelib.billing.models import (
    Application,
    ChargeInvoicing,
    ContainerType,
    CreditBalance,
    Installment,
    InstallmentItem,
    InstallmentJob,
    InstallmentLattice,
    Invoice,
    InvoiceCredit,
    InvoiceGenerationJob,
    InvoiceItem,
    InvoiceState,
    InvoicingJob,
    JobStatus,
    LatticeFrame,
    LedgerLine,
    Payment,
    PaymentState,
    PaymentTarget,
    SourceType,
)
from chalicelib.billing.payments import allocation as payments
from chalicelib.billing.payments import payment_lifecycle
from chalicelib.billing.writeoffs import repository as write_off_records
from chalicelib.billing.writeoffs import settling
from chalicelib.configuration import numbers, products
from chalicelib.configuration import service as configuration
from chalicelib.configuration.billing_plans import (
    BackdatedInstallmentsBilling,
    BillingPlans,
    CancellationConsolidation,
    GroupingMatch,
    InstallmentGrouping,
    InvoiceFeeHandling,
)
from chalicelib.core import codes, money
from chalicelib.core.clock import isoformat, parse_datetime
from chalicelib.core.context import CallContext
from chalicelib.core.errors import AlreadyExists, ErrorCode, FieldError, NotFound
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.core.paging import MAX_COUNT, Page, PageRequest
from chalicelib.documents import service as documents
from chalicelib.policies import service as policies
from chalicelib.policies.models import IssuedStack, Transaction, TransactionCategory
from chalicelib.priceable.models import Charge
from chalicelib.quotes import service as quotes
from chalicelib.runtime import due, jobs, observability, wiring
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.job_types import JobType
from chalicelib.transactions import service as transactions

LATTICE_EVENT = "billing.installmentlattice.create"
INVOICE_ENTITY = "invoice"
OWED = "owed"
"""The charge type and category of an owed invoice's one item (reverse_payment)."""
INSTALLMENTS_PER_INVOICE = 40
"""An invoice and the installments it invoices are one write (2 actions each, and 2 for each policy):
a due time with more installments (or policies) in one container makes several invoices."""


# --- installments ------------------------------------------------------------------------------------

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


def bill_transaction(ctx: CallContext, transaction_locator: str, job_locator: str | None = None) -> TransactionBilled:
    """Spread the charges of an issued transaction over its installment lattice (once: a second call
    finds the lattice and writes nothing), recording the job `job_locator` that did it. The accounts due
    now are none when every installment is to be generated later (its due entry does that at the time)."""
    stack = policies.transaction_stack(ctx, transaction_locator)
    by_locator = {t.locator: t for t in stack.transactions}
    asked = transaction = by_locator[transaction_locator]
    if transaction.aggregateTransactionLocator:  # issued out of sequence: billed with the reversals and
        # reapplications around it, which its aggregate (of the same policy) names (no job bills them alone)
        if transaction.aggregateTransactionLocator not in by_locator:
            raise codes.not_found("transaction", transaction.aggregateTransactionLocator)
        transaction = by_locator[transaction.aggregateTransactionLocator]
    parts = [by_locator[part] for part in transaction.aggregatedTransactionLocators if part in by_locator]
    locator = lattice_locator(transaction)
    billing = _of_transaction(ctx, transaction, stack)
    charges = [charge for part in (transaction, *parts) for charge in part.charges]
    billed = _billed(ctx, configuration.billing_plans(ctx, transaction.configVersion), billing, charges, locator,
                     named_at=transaction.issuedTime)
    job = InstallmentJob(
        locator=job_locator or locator, referenceLocator=transaction.locator, policyLocator=transaction.policyLocator,
        quoteLocator=transaction.quoteLocator, latticeLocator=locator,
        installmentLocators=[i.locator for i in billed.installments], jobStatus=JobStatus.FINISHED,
        createdAt=transaction.issuedTime or ctx.now, completedAt=ctx.now)
    if not _write_installments(ctx, billing.account.locator, billed.lattice, billed.installments, job):
        return TransactionBilled(asked, [])
    due_now = any(installment.generateTime <= ctx.now for installment in billed.installments)
    return TransactionBilled(asked, [billing.account.locator] if due_now else [])


def consolidate_on_cancellation(ctx: CallContext, transaction: Transaction) -> list[Invoice]:
    """After a cancellation is billed: its policy's uninvoiced installments on one invoice now, as the
    account's invoicing plan's `consolidateInvoicesOnCancellation` says (invoices/consolidation.py)."""
    if transaction.transactionCategory != TransactionCategory.CANCELLATION:
        return []
    account = accounts.get_account(ctx, policies.get_policy(ctx, transaction.policyLocator).accountLocator)
    plan = configuration.billing_plans(ctx).invoicing_plan(account.invoicingPlanName)
    if plan is None or plan.consolidate_invoices_on_cancellation == CancellationConsolidation.NONE:
        return []
    uninvoiced = [i for i in repository.all_installments_of(ctx.tenant, "policy", transaction.policyLocator)
                  if i.invoiceLocator is None]
    chosen = consolidation.consolidated(uninvoiced, plan.consolidate_invoices_on_cancellation,
                                        transaction.effectiveTime, ctx.now)
    return _invoice(ctx, account, chosen, riders=False, grouping=InstallmentGrouping(matching=GroupingMatch.ALL))


def billing_failed(ctx: CallContext, transaction_locator: str, policy_locator: str | None, job_locator: str,
                   error: str, retries: int = 0) -> None:
    """Record that billing the transaction failed (the job fails; `retry_failed` enqueues it again)."""
    job = InstallmentJob(locator=job_locator, referenceLocator=transaction_locator, policyLocator=policy_locator,
                         jobStatus=JobStatus.FAILED, processingErrors=error, retries=retries, createdAt=ctx.now,
                         completedAt=ctx.now)
    uow = wiring.unit_of_work(ctx)
    uow.add(*repository.installment_job_writes(ctx.tenant, job))
    uow.commit()


def installment_jobs(ctx: CallContext, owner_kind: str, owner: str, page: PageRequest) -> Page[InstallmentJob]:
    return repository.installment_jobs(ctx.tenant, owner_kind, owner, page)


def retry_failed(ctx: CallContext, policy_locator: str) -> list[InstallmentJob]:
    """Enqueue again the billing of every transaction of the policy whose billing failed."""
    policy = policies.get_policy(ctx, policy_locator)
    failed = [job for job in repository.all_installment_jobs(ctx.tenant, "policy", policy.locator)
              if job.jobStatus == JobStatus.FAILED]
    queued = []
    uow = wiring.unit_of_work(ctx)
    for job in failed:
        retried = job.model_copy(update={"jobStatus": JobStatus.QUEUED, "processingErrors": "", "completedAt": None,
                                         "retries": job.retries + 1})
        uow.add(*repository.installment_job_writes(ctx.tenant, retried))
        jobs.enqueue(uow, JobType.BILLING_INSTALLMENTS, {
            "transactionLocator": job.referenceLocator, "policyLocator": policy.locator, "jobLocator": job.locator,
            "retries": retried.retries},
            locator=derived_locator(ctx.now, f"billing-retry:{job.locator}:{retried.retries}"))
        queued.append(retried)
    if queued:
        uow.commit()
    return queued


def _of_transaction(ctx: CallContext, transaction: Transaction, stack: IssuedStack | None = None) -> Billing:
    """Who and what billing `transaction` bills; `stack` (its policy's, read already) spares reading the
    policy and the term."""
    policy = stack.policy if stack is not None else policies.get_policy(ctx, transaction.policyLocator)
    account = accounts.get_account(ctx, policy.accountLocator)
    start, end = _term_span(ctx, transaction, stack)
    container = _container(policy.billingLevel, account, policy.locator)
    return Billing(account=account, policy_locator=policy.locator, transaction_locator=transaction.locator,
                   term_locator=transaction.termLocator, quote_locator=transaction.quoteLocator, container=container,
                   term_start=start, term_end=end, effective=max(min(transaction.effectiveTime, end), start),
                   currency=policy.currency, timezone=policy.timezone, duration_basis=policy.durationBasis,
                   plan_name=policy.installmentPlanName,
                   preferences=transaction.preferences or policy.preferences,
                   reversal=transaction.transactionCategory in (TransactionCategory.CANCELLATION,
                                                                TransactionCategory.REVERSAL))


def _billed(ctx: CallContext, billing_plans: BillingPlans, billing: Billing, charges: list[Charge],
            locator: str, *, named_at: datetime | None = None) -> Billed:
    """The lattice of `billing` and the installments that spread `charges` over it (nothing stored). The
    installments' locators derive from `named_at` (the transaction's issue time: the same in every attempt
    of its billing job, so a retry writes a chunk an earlier attempt wrote under the same keys) or now."""
    plan_name, schedule = plans.schedule(billing_plans, billing.plan_name, billing.preferences)
    term = lattice.term_frames(billing.term_start, billing.term_end, schedule, billing.timezone)
    frames = lattice.from_effective(term, billing.effective, schedule, billing.timezone)
    defer = billing_plans.backdated_installments_billing == BackdatedInstallmentsBilling.DEFER_DUE_DATE
    frames = allocation.backdated(frames, ctx.now, defer_due_date=defer, due_lead_days=schedule.due_lead_days)
    window_start, window_end = frames[0].start, frames[-1].end
    scheduled = [charge for charge in charges if charge.invoicing not in (ChargeInvoicing.NEXT,
                                                                           ChargeInvoicing.IMMEDIATE)]
    billables = [allocation.Billable(
        charge_locator=charge.locator, amount=charge.amount, coverage_start=window_start, coverage_end=window_end,
        spread=charge.handling != "flat") for charge in scheduled]
    shares = allocation.spread(billables, frames, billing.currency, basis=billing.duration_basis,
                               time_zone=billing.timezone)
    weights = allocation.normalized_weights(frames, basis=billing.duration_basis, time_zone=billing.timezone)
    record = InstallmentLattice(
        locator=locator, accountLocator=billing.account.locator, policyLocator=billing.policy_locator,
        billingContainer=billing.container, transactionLocator=billing.transaction_locator,
        termLocator=billing.term_locator, quoteLocator=billing.quote_locator, currency=billing.currency,
        timezone=billing.timezone, termStartTime=billing.term_start, termEndTime=billing.term_end,
        effectiveTime=billing.effective,
        reversalLattice=billing.reversal, installmentPlanName=plan_name, createdAt=ctx.now,
        createdBy=ctx.user_locator, frames=[_frame(frame, weight) for frame, weight in zip(frames, weights)])
    by_charge = {charge.locator: charge for charge in charges}
    installments = [_installment(ctx, record, billing.transaction_locator, frame, share, by_charge, billing.container,
                                 schedule.autopay, named_at=named_at) for frame, share in zip(frames, shares) if share]
    for mode in (ChargeInvoicing.NEXT, ChargeInvoicing.IMMEDIATE):
        whole = {charge.locator: charge.amount for charge in charges if charge.invoicing == mode and charge.amount}
        if whole:  # billed whole with the first frame's times; an immediate one is invoiced now
            first = frames[0] if mode == ChargeInvoicing.NEXT else replace(frames[0], generate_time=ctx.now)
            installments.append(_installment(ctx, record, billing.transaction_locator, first, whole, by_charge,
                                             billing.container, schedule.autopay, mode, named_at=named_at))
    return Billed(record, installments)


def _term_span(ctx: CallContext, transaction: Transaction,
               stack: IssuedStack | None = None) -> tuple[datetime, datetime]:
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
    spans = [segment for each in reversed_ if each.termLocator == transaction.termLocator
             for segment in each.segments] or list(transaction.segments)
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
        installmentStartTime=frame.start, installmentEndTime=frame.end, coverageStartTime=frame.start,
        coverageEndTime=frame.end, installmentDuration=seconds, coverageDuration=seconds, normalizedWeight=weight,
        generateTime=frame.generate_time, dueTime=frame.due_time, autopayTime=frame.autopay_time)


def _installment(ctx: CallContext, record: InstallmentLattice, transaction_locator: str, frame: lattice.Frame,
                 share: dict[str, Decimal], charges: dict[str, Charge], container: str, autopay: bool,
                 invoicing: ChargeInvoicing = ChargeInvoicing.SCHEDULED, *,
                 named_at: datetime | None = None) -> Installment:
    moment = (named_at or ctx.now) + timedelta(milliseconds=frame.index)  # they list in frame order
    seed = f"installment:{record.locator}:{frame.index}:{frame.start.isoformat()}"
    locator = derived_locator(moment, seed if invoicing == ChargeInvoicing.SCHEDULED else f"{seed}:{invoicing}")
    seconds = Decimal((frame.end - frame.start).total_seconds())
    items = [InstallmentItem(
        locator=derived_locator(moment, f"installmentItem:{locator}:{charge_locator}"), installmentLocator=locator,
        chargeLocator=charge_locator, elementLocator=charges[charge_locator].elementLocator,
        elementStaticLocator=charges[charge_locator].elementStaticLocator,
        chargeType=charges[charge_locator].chargeType, chargeCategory=str(charges[charge_locator].chargeCategory),
        amount=amount, createdAt=ctx.now, createdBy=ctx.user_locator) for charge_locator, amount in share.items()]
    return Installment(
        locator=locator, installmentLatticeLocator=record.locator, accountLocator=record.accountLocator,
        policyLocator=record.policyLocator, transactionLocator=transaction_locator, termLocator=record.termLocator,
        quoteLocator=record.quoteLocator, currency=record.currency, timezone=record.timezone,
        installmentFrameIndex=frame.index, installmentStartTime=frame.start, installmentEndTime=frame.end,
        coverageStartTime=frame.start, coverageEndTime=frame.end, installmentDuration=seconds,
        coverageDuration=seconds, generateTime=frame.generate_time, dueTime=frame.due_time,
        autopayTime=frame.autopay_time, installmentItems=items, billingContainer=container,
        createdAt=ctx.now, createdBy=ctx.user_locator, updatedAt=ctx.now, updatedBy=ctx.user_locator,
        invoicing=invoicing, autopay=autopay)


def _write_installments(ctx: CallContext, account: str, record: InstallmentLattice,
                        installments: list[Installment], job: InstallmentJob) -> bool:
    """The lattice with its installments, the root bump, the account's generation entry and the event,
    in one TransactWriteItems when they fit (a lattice of up to ~30 installments): answers False, writing
    nothing, when the lattice exists already (billed before: its put fails). A larger lattice's
    installments go first in chunks (a chunk an earlier attempt wrote is skipped), then the lattice: until
    it commits, nothing lists the lattice, and its installments are invoiced like any other once it does;
    its existence is checked first, since a retry at another time derives other installment locators."""
    uow = wiring.unit_of_work(ctx)
    repository.bump_roots(uow, ctx.tenant, account, repository.root_versions(ctx.tenant, account,
                                                                             [record.billingContainer]))
    if installments:
        # put even where an entry stands earlier (there again, with a new token): a run of that entry that
        # read the account's next generate time before these installments were written then finds it moved
        # and leaves it, instead of removing (or moving past them) the entry they count on
        earliest = min(i.generateTime for i in installments)
        due.bring_forward(uow, DueKind.INVOICE_GENERATE, account, earliest, put_again=True)
    repository.add_lattice(uow, ctx.tenant, record, [i.locator for i in installments])
    uow.add(*repository.installment_job_writes(ctx.tenant, job))
    uow.record_event(LATTICE_EVENT, {"installmentLatticeLocator": record.locator})
    writes = [repository.installment_writes(ctx.tenant, installment) for installment in installments]
    if sum(len(each) for each in writes) <= uow.remaining:
        uow.add(*(write for each in writes for write in each))
    else:
        if repository.lattice_exists(ctx.tenant, record.locator):
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


def _commit_new(uow: Any) -> None:
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
    return repository.installments_of(ctx.tenant, owner_kind, owner, page)


# --- invoices ----------------------------------------------------------------------------------------

def generate_invoices(ctx: CallContext, account_locator: str, up_to: datetime | None = None) -> list[Invoice]:
    """Invoice the account's installments whose generate time is at most `up_to` (default: now), at
    `ctx.now`. A second run at the same time finds nothing left to invoice and creates nothing."""
    account = accounts.get_account(ctx, account_locator)
    if holds.invoicing_held(ctx, account.locator):
        return []  # releasing the hold makes the account's invoice generation due again
    invoices = _invoice(ctx, account, repository.uninvoiced(ctx.tenant, account_locator, isoformat(up_to or ctx.now)))
    if invoices:
        uow = wiring.unit_of_work(ctx)
        repository.add_generation_job(uow, ctx.tenant, InvoiceGenerationJob(
            locator=new_locator(), accountLocator=account.locator, generateTime=ctx.now,
            invoiceLocators=[i.locator for i in invoices], createdAt=ctx.now, createdBy=ctx.user_locator,
            completedAt=ctx.now))
        for currency in sorted({i.currency for i in invoices}):
            _excess_credit_job(ctx, uow, account, currency, apply_to_invoices=True)
        uow.commit()
    return invoices


def next_generate_time(ctx: CallContext, account_locator: str) -> datetime | None:
    """When the account's next uninvoiced installment is to be generated, after now."""
    found = repository.next_uninvoiced_time(ctx.tenant, account_locator, isoformat(ctx.now))
    return parse_datetime(found) if found else None


def generation_jobs(ctx: CallContext, account_locator: str, page: PageRequest) -> Page[InvoiceGenerationJob]:
    account = accounts.get_account(ctx, account_locator)
    return repository.generation_jobs(ctx.tenant, account.locator, page)


def _invoice(ctx: CallContext, account: Account, due: list[Installment], *, riders: bool = True,
             grouping: InstallmentGrouping | None = None) -> list[Invoice]:
    """Invoice `due` (uninvoiced installments of the account) at `ctx.now`, grouped as the account's
    invoicing plan says (or by `grouping`), with the account's pending `next` installments riding on
    them (`riders`)."""
    if not due:
        return []
    account_locator = account.locator
    model = configuration.current_model(ctx, resolved=True)[1]
    numbering = _invoice_numbering_plan(ctx, account)
    # the account's root too: an invoice that puts credit on the balance bumps it (one call all the same)
    versions = repository.root_versions(ctx.tenant, account_locator,
                                        [account_locator, *sorted({i.billingContainer for i in due})])
    plan = configuration.billing_plans(ctx).invoicing_plan(account.invoicingPlanName)
    taken = {i.locator for i in due}
    waiting = [i for i in repository.pending_riders(ctx.tenant, account_locator) if i.locator not in taken] \
        if riders else []
    own_fees: dict[str, Decimal | None] = {}
    created = []
    for group in generator.groups(due, ctx.now, grouping or (plan.installment_grouping if plan else
                                                             InstallmentGrouping()), waiting):
        for chunk in _chunks(group):
            invoice = generator.invoice(chunk, ctx.now, ctx.user_locator, lambda _seed: new_locator())
            if plan is not None and plan.invoice_fee_handling != InvoiceFeeHandling.WAIVE:
                for policy in invoice.policyLocators:
                    if policy not in own_fees:
                        own_fees[policy] = policies.get_policy(ctx, policy).invoiceFeeAmount
                amount = fees.fee(plan, invoice.currency, [own_fees[p] for p in invoice.policyLocators])
                invoice = fees.with_fee(invoice, amount, new_locator())
            created.append(_write_invoice(ctx, model, numbering, invoice, chunk, versions, account))
    return created


def _chunks(group: list[Installment]) -> Iterable[list[Installment]]:
    """The installments of one invoice's group, at most INSTALLMENTS_PER_INVOICE a chunk and no more than
    the write of one invoice holds (a larger group makes several invoices)."""
    chunk: list[Installment] = []
    for installment in group:
        grown = [*chunk, installment]
        if chunk and (len(grown) > INSTALLMENTS_PER_INVOICE or not repository.fits_one_invoice_write(grown)):
            yield chunk
            chunk = []
        chunk.append(installment)
    yield chunk


def _write_invoice(ctx: CallContext, model: dict[str, Any], numbering: str | None, invoice: Invoice,
                   invoiced: list[Installment], versions: dict[str, int], account: Account) -> Invoice:
    """Write the invoice with the bump of its container's root (and of the account's when it puts credit on
    the balance) from `versions`, which then holds their versions after the commit."""
    uow = wiring.unit_of_work(ctx)
    credit = None
    if invoice.totalAmount <= 0:
        credit = payments.settle_into_credit(invoice, ctx.now)
    bumped = {root: versions[root] for root in (invoice.billingContainer, *([account.locator] if credit else []))}
    repository.bump_roots(uow, ctx.tenant, account.locator, bumped)
    _add_invoice(ctx, uow, model, numbering, invoice, invoiced, account)
    if credit is not None:
        uow.record_event("billing.invoice.settle", _invoice_event(invoice))
        if credit:
            _credit(ctx, uow, invoice.accountLocator, invoice.currency, credit, "negative invoice",
                    SourceType.CREDIT_BALANCE, invoice.locator)
    uow.commit()
    versions.update({root: version + 1 for root, version in bumped.items()})
    return invoice


def _add_invoice(ctx: CallContext, uow: Any, model: dict[str, Any], numbering: str | None, invoice: Invoice,
                 invoiced: list[Installment], account: Account) -> None:
    """Add to `uow` (which bumps the roots) a new invoice of the `invoiced` installments: its number, its
    due and autopay entries (an owed invoice has neither), its event and its document."""
    if numbering:
        invoice.invoiceNumber = numbers.reserve_number(ctx, uow, model, numbering, INVOICE_ENTITY, invoice.locator)
    for installment in invoiced:
        installment.updatedAt, installment.updatedBy = ctx.now, ctx.user_locator
        uow.add(*repository.invoiced_installment_writes(ctx.tenant, installment))
    uow.add(*repository.invoice_writes(ctx.tenant, invoice))
    if invoice.invoiceState == InvoiceState.OPEN and invoice.owedFor is None:
        due.schedule(uow, DueKind.INVOICE_DUE, invoice.locator, invoice.dueTime)  # unsettled then: delinquent
    if not invoice.suppressAutopay:
        arm_autopay(uow, invoice)
    uow.record_event("billing.invoice.generate", {**_invoice_event(invoice), "generateTime": isoformat(ctx.now)})
    uow.after_commit(lambda: observability.count("InvoicesGenerated", {"currency": invoice.currency},
                                                 invoice_locator=invoice.locator))
    documents.add_invoice_document(ctx, uow, model, account.type, invoice.locator,
                                   _rendering_data(invoice, account))


def _rendering_data(invoice: Invoice, account: Account) -> dict[str, Any]:
    """The invoice as its documents render it (documents adds the platform's summary shape)."""
    return {**invoice.model_dump(exclude_none=True), "kind": "invoice",
            "account": {"locator": account.locator, "type": account.type, "data": account.data}}


def invoice_rendering_data(ctx: CallContext, locator: str) -> dict[str, Any]:
    """What documents' ad-hoc render of the invoice reads (wired in app.py: documents is below billing)."""
    found = invoice(ctx, locator)
    return _rendering_data(found, accounts.get_account(ctx, found.accountLocator))


def _invoice_event(invoice: Invoice) -> dict[str, Any]:
    return {"invoiceLocator": invoice.locator, "accountLocator": invoice.accountLocator,
            "invoiceType": invoice.invoiceType,
            "policyLocators": {"listCompleted": True, "items": invoice.policyLocators}}


def _credit(ctx: CallContext, uow: Any, account: str, currency: str, amount: Decimal, note: str,
            source_type: str, source: str) -> None:
    """Move the account's credit balance by `amount` (negative: down), with its ledger line."""
    balance = repository.credit_balance(ctx.tenant, account, currency)
    _credit_moves(ctx, uow, account, currency, balance.balance, [(amount, note, source_type, source)])


def _credit_moves(ctx: CallContext, uow: Any, account: str, currency: str, held: Decimal,
                  moves: Sequence[tuple[Decimal, str, str, str]]) -> None:
    """Move the account's credit balance (`held` now) by each (amount, note, source type, source) of
    `moves`, a ledger line each, in one write of the balance."""
    lines = [LedgerLine(locator=new_locator(), currency=currency, accountingType="credit" if amount > 0 else "debit",
                        amount=abs(amount), note=note, sourceType=source_type, sourceLocator=source, time=ctx.now)
             for amount, note, source_type, source in moves]
    uow.add(*repository.credit_writes(ctx.tenant, CreditBalance(
        accountLocator=account, currency=currency, balance=held + sum((m[0] for m in moves), Decimal(0))), *lines))


def invoice(ctx: CallContext, locator: str) -> Invoice:
    found = repository.get(ctx.tenant, "invoice", locator, Invoice)
    if found is None:
        raise codes.not_found("invoice", locator)
    return found


def invoice_with_installments(ctx: CallContext, locator: str) -> tuple[Invoice, list[Installment]]:
    found = invoice(ctx, locator)
    return found, repository.get_many(ctx.tenant, found.accountLocator, "installment", found.installmentLocators,
                                      Installment)


def invoices_of(ctx: CallContext, owner_kind: str, owner: str, page: PageRequest, *,
                include_zero: bool) -> Page[Invoice]:
    if owner_kind == "account":
        return repository.account_invoices(ctx.tenant, owner, page, include_zero=include_zero)
    kind = "INV" if include_zero else repository.NONZERO_INVOICES
    return repository.page_of(ctx.tenant, owner_kind, owner, kind, "invoice", Invoice, page)


def invoices_with_number(ctx: CallContext, number: str) -> list[Invoice]:
    owner = numbers.number_owner(ctx, INVOICE_ENTITY, number)
    found = repository.get(ctx.tenant, "invoice", owner, Invoice) if owner else None
    if found is None:
        raise codes.not_found("invoice", f"numbered {number}")
    return [found]


def update_invoice(ctx: CallContext, locator: str, autopay_time: datetime, suppress_autopay: bool) -> Invoice:
    current = invoice(ctx, locator)
    changed = current.model_copy(update={"autopayTime": autopay_time, "suppressAutopay": suppress_autopay})
    uow = wiring.unit_of_work(ctx)
    arm_autopay(uow, changed)
    return _save_invoice(ctx, current, changed, [], uow=uow)


def arm_autopay(uow: Any, record: Invoice) -> None:
    """The invoice's autopay entry at its autopay time (billing/payments/autopay.py runs it), or none when autopay
    is suppressed or nothing is owed."""
    if record.suppressAutopay or record.autopayTime is None or record.invoiceState != InvoiceState.OPEN \
            or record.totalRemainingAmount <= 0:
        due.cancel(uow, DueKind.INVOICE_AUTOPAY, record.locator)
    else:
        due.schedule(uow, DueKind.INVOICE_AUTOPAY, record.locator, record.autopayTime)


def settle_invoice(ctx: CallContext, locator: str) -> tuple[Invoice, Decimal]:
    """Settle a zero or negative invoice into the credit balance (spec: settle is for those, `forced` or
    not); one with a positive remaining amount is refused with 409, since settling it would leave money
    owed that no record accounts for: a payment or a write-off settles it. Answers the invoice and what it
    put on the credit balance."""
    current = invoice(ctx, locator)
    if current.invoiceState == InvoiceState.SETTLED:
        raise codes.INVOICE_SETTLED(f"Invoice {locator} is settled")
    if current.totalRemainingAmount > 0:
        left = money.round_money(current.totalRemainingAmount, current.currency)
        raise codes.INVOICE_AMOUNT_REMAINING(
            f"Invoice {locator} has {left} {current.currency} remaining: only an invoice of zero or negative "
            f"total is settled; pay it, or write the remainder off (PATCH /invoices/{locator}/writeOff)")
    changed = current.model_copy(deep=True)
    credit = payments.settle_into_credit(changed, ctx.now)
    saved = _save_invoice(ctx, current, changed, [("billing.invoice.settle", _invoice_event(changed))], credit=credit)
    return saved, credit


def set_invoice_number(ctx: CallContext, locator: str, number: str) -> Invoice:
    numbers.check_chosen(number, field="invoiceNumber", what="invoice number")
    current = invoice(ctx, locator)
    if number == current.invoiceNumber:
        return current
    uow = wiring.unit_of_work(ctx)
    assigned = numbers.renumber(ctx, uow, INVOICE_ENTITY, locator, current.invoiceNumber, number)
    return _save_invoice(ctx, current, current.model_copy(update={"invoiceNumber": assigned}), [], uow=uow)


def generate_invoice_number(ctx: CallContext, locator: str) -> Invoice:
    current = invoice(ctx, locator)
    account = accounts.get_account(ctx, current.accountLocator)
    model = configuration.current_model(ctx, resolved=True)[1]
    plan = _invoice_numbering_plan(ctx, account)
    if plan is None:
        raise codes.NO_NUMBERING_PLAN["invoice"](f"Account type {account.type} has no invoiceNumberingPlan")
    uow = wiring.unit_of_work(ctx)
    assigned = numbers.renumber(ctx, uow, INVOICE_ENTITY, locator, current.invoiceNumber,
                                numbers.NextOfPlan(model, plan))
    return _save_invoice(ctx, current, current.model_copy(update={"invoiceNumber": assigned}), [], uow=uow)


def _save_invoice(ctx: CallContext, current: Invoice, changed: Invoice, events: list[tuple[str, dict[str, Any]]],
                  *, credit: Decimal = Decimal(0), uow: Any = None) -> Invoice:
    uow = uow or wiring.unit_of_work(ctx)
    account = current.accountLocator
    roots = [current.billingContainer, *([account] if credit else [])]
    repository.bump_roots(uow, ctx.tenant, account, repository.root_versions(ctx.tenant, account, roots))
    uow.add(*repository.invoice_update_writes(ctx.tenant, changed, current.invoiceState == InvoiceState.OPEN))
    if credit:
        _credit(ctx, uow, changed.accountLocator, changed.currency, credit, "settled invoice",
                SourceType.CREDIT_BALANCE, changed.locator)
    for event_type, data in events:
        uow.record_event(event_type, data)
    if not events:
        uow.record_event("billing.invoice.update", _invoice_event(changed))
    uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})


def applications_of_invoice(ctx: CallContext, locator: str, *, include_reversed: bool) -> list[Application]:
    found = invoice(ctx, locator)
    return [a for a in repository.applications_of(ctx.tenant, found.accountLocator, locator)
            if include_reversed or not a.reversed]


def credits_of_invoice(ctx: CallContext, locator: str, *,
                       include_reversed: bool) -> tuple[Invoice, list[InvoiceCredit]]:
    """The invoice and what settled (some of) it, oldest first: the applications of payments and credit
    distributions, and the write-offs (a write-off's amount is what it still holds of the invoice; all
    of it reversed, it is `reversed` with what it had settled)."""
    found = invoice(ctx, locator)
    applied = repository.applications_of(ctx.tenant, found.accountLocator, locator)
    written = found.writeOffLocators
    credits = [InvoiceCredit(
        locator=a.sourceLocator, creditType="payment" if a.sourceType == SourceType.PAYMENT else "creditDistribution",
        creditState="reversed" if a.reversed else "posted", amount=a.amount, createdAt=a.createdAt,
        reversedAt=a.reversedAt) for a in applied]
    for write_off in write_off_records.get_many(ctx.tenant, found.accountLocator, written) if written else []:
        allocation = next(a for a in write_off.allocations if a.invoiceLocator == locator)
        held = allocation.held_amount
        credits.append(InvoiceCredit(
            locator=write_off.locator, creditType=write_off.creditType.value,
            creditState="distributed" if held else "reversed", amount=held or allocation.amount,
            createdAt=write_off.createdAt, reversedAt=None if held else write_off.reversedAt))
    credits.sort(key=lambda c: c.createdAt)
    return found, [c for c in credits if include_reversed or c.creditState != "reversed"]


def payments_of_invoice(ctx: CallContext, locator: str, page: PageRequest, *,
                        include_reversed: bool) -> Page[Payment]:
    found = invoice(ctx, locator)
    sources = [a.sourceLocator for a in applications_of_invoice(ctx, locator, include_reversed=include_reversed)
               if a.sourceType == SourceType.PAYMENT]
    paid = repository.get_many(ctx.tenant, found.accountLocator, "payment", sources, Payment)
    return _window(paid, page)


def invoices_of_payment(ctx: CallContext, locator: str, page: PageRequest, *,
                        include_reversed: bool) -> Page[Invoice]:
    found = payment(ctx, locator)
    pairs = [tuple(ref.split("/", 1)) for ref in found.applications]
    applied = [a for a in repository.applications(ctx.tenant, found.accountLocator, pairs)  # type: ignore[arg-type]
               if include_reversed or not a.reversed]
    invoices = repository.get_many(ctx.tenant, found.accountLocator, "invoice",
                                   sorted({a.invoiceLocator for a in applied}), Invoice)
    return _window(invoices, page)


def _window(items: list[Any], page: PageRequest) -> Page[Any]:
    return Page(items[page.offset:page.offset + page.count], page.offset + page.count >= len(items))


# --- payments and the credit balance ------------------------------------------------------------------

def create_payment(ctx: CallContext, fields: Any, locator: str | None = None) -> Payment:
    """A draft payment: amount, type, currency and targets checked (all targets of its account and
    currency). `locator`: chosen by the caller (autopay derives it, so a rerun finds the payment)."""
    account_locator = fields.accountLocator or _account_of_targets(ctx, fields.targets)
    account = accounts.get_account(ctx, account_locator)
    model = configuration.current_model(ctx, resolved=True)[1]
    currency = (fields.currency or model.get("defaultCurrency") or "USD").upper()
    payment_type = _payment_type(ctx, fields.type)
    _check_amount(fields.amount, currency)
    check_currency(ctx, account.locator, currency, codes.PAYMENT_INVALID_CURRENCY)
    targets = [PaymentTarget.model_validate(t.model_dump()) for t in fields.targets]
    _check_targets(ctx, account.locator, currency, targets)
    record = Payment(
        locator=locator or new_locator(), accountLocator=account.locator, paymentState=PaymentState.DRAFT,
        type=payment_type,
        currency=currency, amount=fields.amount, data=fields.data or {}, targets=targets,
        transactionMethod=fields.transactionMethod, transactionNumber=fields.transactionNumber,
        createdAt=ctx.now, createdBy=ctx.user_locator, updatedAt=ctx.now, updatedBy=ctx.user_locator)
    uow = wiring.unit_of_work(ctx)
    record = payment_lifecycle.number_on(ctx, uow, record, payment_lifecycle.CREATION)
    repository.bump_roots(uow, ctx.tenant, account.locator,
                          repository.root_versions(ctx.tenant, account.locator, [account.locator]))
    repository.add_payment(uow, ctx.tenant, record)
    uow.record_event("billing.payment.create", _payment_event(record))
    uow.commit()
    return record


def _account_of_targets(ctx: CallContext, targets: list[Any]) -> str:
    for target in targets:
        if target.containerType == ContainerType.ACCOUNT:
            return str(target.containerLocator)
        if target.containerType == ContainerType.INVOICE:
            owner = repository.account_of(ctx.tenant, "invoice", target.containerLocator)
            if owner:
                return owner
    raise codes.PAYMENT_ACCOUNT_REQUIRED("Name the payment's accountLocator, or target an account or invoice",
                                         field_errors=[FieldError("accountLocator", "required")])


def _is_amount(amount: Decimal, currency: str) -> bool:
    """Positive, below the limit of money and in the currency's minor unit."""
    return amount.is_finite() and 0 < amount < money.MAX_AMOUNT and money.round_money(amount, currency) == amount


def _check_amount(amount: Decimal, currency: str) -> None:
    if not _is_amount(amount, currency):
        raise codes.PAYMENT_INVALID_AMOUNT(
            f"A payment's amount is positive with at most {money.minor_units(currency)} decimals in {currency}",
            field_errors=[FieldError("amount", "must be a positive amount of the currency")])


def check_currency(ctx: CallContext, account: str, currency: str, code: ErrorCode) -> None:
    """400 `code` for money in a currency the account is not billed in: the tenant's default currency and
    the currencies of the account's policies and quotes are its currencies (the default costs no read; another
    one pages the account's policies, then its quotes, until one is in it)."""
    default = (configuration.current_model(ctx, resolved=True)[1].get("defaultCurrency") or "USD").upper()
    if currency == default:
        return
    for listed in (policies.policies_of_account, quotes.quotes_of_account):
        page, offset = None, 0
        while page is None or not page.list_completed:
            page = listed(ctx, account, PageRequest(offset, MAX_COUNT))
            if any(each.currency == currency for each in page.items):
                return
            offset += MAX_COUNT
    raise code(f"Account {account} is billed in {default} and the currencies of its policies and quotes, "
               f"not in {currency}", field_errors=[FieldError("currency", "not a currency of the account")])


def _check_targets(ctx: CallContext, account: str, currency: str, targets: list[PaymentTarget]) -> None:
    invoice_locators = [t.containerLocator for t in targets if t.containerType == ContainerType.INVOICE]
    found = {i.locator: i for i in repository.get_many(ctx.tenant, account, "invoice", invoice_locators, Invoice)}
    for index, target in enumerate(targets):
        field = f"targets[{index}]"
        if target.amount is not None and not _is_amount(target.amount, currency):
            raise codes.PAYMENT_INVALID_TARGET("A target's amount is positive, in the currency's minor unit",
                                               field_errors=[FieldError(f"{field}.amount", "invalid amount")])
        if target.containerType == ContainerType.ACCOUNT and target.containerLocator != account:
            raise codes.PAYMENT_INVALID_TARGET(f"Target account {target.containerLocator} is not the payment's",
                                               field_errors=[FieldError(field, "another account")])
        if target.containerType == ContainerType.INVOICE:
            target_invoice = found.get(target.containerLocator)
            if target_invoice is None or target_invoice.currency != currency:
                raise codes.PAYMENT_INVALID_TARGET(
                    f"Invoice {target.containerLocator} is not one of account {account} in {currency}",
                    field_errors=[FieldError(field, "not an invoice of the payment's account and currency")])
        if target.containerType in (ContainerType.SUBPAYMENT, ContainerType.INVOICE_ITEM):
            raise codes.PAYMENT_INVALID_TARGET(f"A payment cannot target a {target.containerType.value} here",
                                               field_errors=[FieldError(field, "unsupported target type")])


def payment(ctx: CallContext, locator: str) -> Payment:
    found = repository.get(ctx.tenant, "payment", locator, Payment)
    if found is None:
        raise codes.not_found("payment", locator)
    return found


def payments_of_account(ctx: CallContext, account_locator: str | None, page: PageRequest) -> Page[Payment]:
    """The account's payments, or without one the tenant's, oldest first. 404 for an account the tenant does not
    have (a list naming it in its query is not a parent's list)."""
    if account_locator is None:
        return repository.tenant_payments(ctx.tenant, page)
    account = accounts.get_account(ctx, account_locator)
    return repository.account_payments(ctx.tenant, account.locator, page)


def credits_of_account(ctx: CallContext, account_locator: str | None, page: PageRequest) -> Page[Payment]:
    """The account's posted (and reversed) payments, or without one the tenant's, oldest first."""
    if account_locator is None:
        return repository.tenant_credits(ctx.tenant, page)
    account = accounts.get_account(ctx, account_locator)
    return repository.account_credits(ctx.tenant, account.locator, page)


def update_payment(ctx: CallContext, locator: str, changes: Any) -> Payment:
    current = payment(ctx, locator)
    _require_state(current, (PaymentState.DRAFT,), "be changed")
    updated = current.model_copy(deep=True)
    if changes.type is not None:
        updated.type = _payment_type(ctx, changes.type)
    if changes.currency is not None:
        updated.currency = changes.currency.upper()
        check_currency(ctx, updated.accountLocator, updated.currency, codes.PAYMENT_INVALID_CURRENCY)
    if changes.amount is not None:
        updated.amount = changes.amount
    _check_amount(updated.amount, updated.currency)
    updated.data = {k: v for k, v in {**updated.data, **(changes.setData or {})}.items()
                    if k not in (changes.removeData or {})}
    removed = set(changes.removeTargets or [])
    updated.targets = [t for t in updated.targets if t.containerLocator not in removed] + [
        PaymentTarget.model_validate(t.model_dump()) for t in changes.addTargets or []]
    for name in ("transactionMethod", "transactionNumber"):
        if getattr(changes, name) is not None:
            setattr(updated, name, getattr(changes, name))
    _check_targets(ctx, updated.accountLocator, updated.currency, updated.targets)
    return _save_payment(ctx, updated, "billing.payment.update")


def _payment_type(ctx: CallContext, name: str) -> str:
    """The configured payment type's name as configured; 400 for one the configuration lacks."""
    found = configuration.billing_plans(ctx).payment_type(name)
    if found is None or found.abstract:
        raise codes.PAYMENT_UNKNOWN_TYPE(f"No payment type {name!r} is configured",
                                         field_errors=[FieldError("type", "unknown payment type")])
    return found.name


def _invoice_numbering_plan(ctx: CallContext, account: Account) -> str | None:
    account_type = configuration.billing_plans(ctx).account_type(account.type)
    return account_type.invoice_numbering_plan if account_type else None


def validate_payment(ctx: CallContext, locator: str) -> Payment:
    current = payment(ctx, locator)
    _require_state(current, (PaymentState.DRAFT,), "be validated")
    _check_targets(ctx, current.accountLocator, current.currency, current.targets)
    uow = wiring.unit_of_work(ctx)
    validated = payment_lifecycle.number_on(ctx, uow, current, payment_lifecycle.VALIDATION)
    return _save_payment(ctx, validated.model_copy(update={"paymentState": PaymentState.VALIDATED,
                                                           "validationResult": {"success": True}}),
                         "billing.payment.validate", uow=uow)


def reset_payment(ctx: CallContext, locator: str) -> Payment:
    current = payment(ctx, locator)
    _require_state(current, (PaymentState.VALIDATED,), "be reset")
    return _save_payment(ctx, current.model_copy(update={"paymentState": PaymentState.DRAFT,
                                                         "validationResult": None}), "billing.payment.reset")


def discard_payment(ctx: CallContext, locator: str) -> Payment:
    current = payment(ctx, locator)
    _require_state(current, (PaymentState.DRAFT, PaymentState.VALIDATED), "be discarded")
    return _save_payment(ctx, current.model_copy(update={"paymentState": PaymentState.DISCARDED}),
                         "billing.payment.discard")


def post_payment(ctx: CallContext, locator: str) -> Payment:
    """Apply a draft or validated payment to its targets (none: the account's open invoices, oldest due
    first); what is left raises the account's credit balance. Every invoice it settles is `settled`."""
    current = payment(ctx, locator)
    _require_state(current, (PaymentState.DRAFT, PaymentState.VALIDATED, PaymentState.REQUESTED), "be posted")
    _check_targets(ctx, current.accountLocator, current.currency, current.targets)
    account = current.accountLocator
    uow = wiring.unit_of_work(ctx)
    versions = repository.root_versions(ctx.tenant, account, [account])
    repository.bump_roots(uow, ctx.tenant, account, versions)
    open_invoices = [i for i in repository.open_invoices(ctx.tenant, account) if i.currency == current.currency]
    named = [t.containerLocator for t in current.targets if t.containerType == ContainerType.INVOICE]
    by_locator = {i.locator: i for i in open_invoices}
    by_locator.update({i.locator: i for i in repository.get_many(ctx.tenant, account, "invoice", named, Invoice)
                       if i.locator not in by_locator})
    before = {locator: state.invoiceState for locator, state in by_locator.items()}
    targets = current.targets or [PaymentTarget(containerLocator=account, containerType=ContainerType.ACCOUNT)]
    applied, left = payments.post(current.amount, targets, by_locator, open_invoices, ctx.now)
    repository.bump_container_roots(uow, ctx.tenant, account, [each.invoice.billingContainer for each in applied])
    settling.settle_shortfalls(ctx, uow, account, current.currency, [each.invoice for each in applied], by_locator,
                               open_invoices)
    posted = current.model_copy(update={"paymentState": PaymentState.POSTED, "postedAt": ctx.now,
                                        "postedVersion": versions[account] + 1, "creditedAmount": left})
    changes = []
    for each in applied:
        application = Application(locator=new_locator(), invoiceLocator=each.invoice.locator,
                                  sourceType=SourceType.PAYMENT, sourceLocator=current.locator, amount=each.amount,
                                  itemAmounts=each.item_amounts, createdAt=ctx.now)
        posted.applications.append(f"{each.invoice.locator}/{application.locator}")
        settled = each.invoice.invoiceState == InvoiceState.SETTLED
        changes.append(staging.InvoiceChange(
            each.invoice, before[each.invoice.locator] == InvoiceState.OPEN,
            added=[repository.application_item(ctx.tenant, account, application)],
            events=[("billing.invoice.settle", _invoice_event(each.invoice))] if settled else []))
    if left:
        _credit(ctx, uow, account, current.currency, left, "payment in excess of its targets", SourceType.PAYMENT,
                current.locator)
        _excess_credit_job(ctx, uow, account, current.currency, apply_to_invoices=False)
    delinquencies.settle_paid(ctx, uow, account, [each.invoice.locator for each in applied
                                                  if each.invoice.invoiceState == InvoiceState.SETTLED])
    uow.add(*repository.credit_ref_writes(ctx.tenant, posted))
    staged = staging.add(ctx, uow, account, changes, after=SAVED_PAYMENT)
    uow.after_commit(lambda: observability.count("PaymentsPosted", {"currency": posted.currency},
                                                 payment_locator=posted.locator))
    return _save_payment(ctx, posted, "billing.payment.post", uow=uow, bumped=True, staged=staged)


def reverse_payment(ctx: CallContext, locator: str, reason: str | None) -> Payment:
    """Take a posted payment back: every invoice it paid gets back what it took (a settled one is open
    again), and what it credited leaves the credit balance, which never goes negative: when the balance
    holds less than that (the credit was used since), the credit distributions executed since the
    posting are reversed too, the latest first, until it holds enough (their invoices open again), and
    what is still missing was disbursed: the account owes it, on an invoice of its own made now
    (`owedFor` the payment). Delinquencies re-open for every invoice it re-opens past its due time."""
    current = payment(ctx, locator)
    _require_state(current, (PaymentState.POSTED,), "be reversed")
    account = current.accountLocator
    uow = wiring.unit_of_work(ctx)
    repository.bump_roots(uow, ctx.tenant, account, repository.root_versions(ctx.tenant, account, [account]))
    credited = current.creditedAmount
    held = repository.credit_balance(ctx.tenant, account, current.currency).balance if credited else Decimal(0)
    funded = _distributions_funded(ctx, current, held)
    refs = [*current.applications, *(ref for d in funded for ref in d.applications)]
    applied = repository.applications(ctx.tenant, account, [tuple(ref.split("/", 1)) for ref in refs])  # type: ignore[misc]
    invoices = {i.locator: i for i in repository.get_many(ctx.tenant, account, "invoice",
                                                          [a.invoiceLocator for a in applied], Invoice)}
    repository.bump_container_roots(uow, ctx.tenant, account, [i.billingContainer for i in invoices.values()])
    was_open = {locator: i.invoiceState == InvoiceState.OPEN for locator, i in invoices.items()}
    changes = {locator: staging.InvoiceChange(target, was_open[locator]) for locator, target in invoices.items()}
    for application in applied:
        payments.take_back(invoices[application.invoiceLocator], application.itemAmounts, ctx.now)
        changes[application.invoiceLocator].rewritten.append(repository.application_item(
            ctx.tenant, account, application.model_copy(update={"reversed": True, "reversedAt": ctx.now})))
    unsettled = [target for target in invoices.values()
                 if not was_open[target.locator] and target.invoiceState == InvoiceState.OPEN]
    for target in unsettled:
        changes[target.locator].events.append(("billing.invoice.unsettle", _invoice_event(target)))
    delinquencies.reopen_unsettled(ctx, uow, account, unsettled)
    moves = []
    for record in funded:
        credit_records.save(uow, ctx.tenant, credit_records.DISTRIBUTION, account, record.model_copy(update={
            "creditDistributionState": CreditDistributionState.REVERSED, "reversedAt": ctx.now,
            "reversalReason": f"payment {current.locator} reversed", "updatedAt": ctx.now,
            "updatedBy": ctx.user_locator}), record.version)
        uow.record_event("billing.creditdistribution.reverse", {"creditLocator": record.locator})
        moves.append((record.appliedAmount, "credit distribution reversed", SourceType.CREDIT_BALANCE, record.locator))
    restored = held + sum((record.appliedAmount for record in funded), Decimal(0))
    owed = max(credited - restored, Decimal(0))
    if credited - owed:
        moves.append((owed - credited, "payment reversed", SourceType.PAYMENT, current.locator))
    if moves:
        _credit_moves(ctx, uow, account, current.currency, held, moves)
    if owed:
        _add_owed_invoice(ctx, uow, current, owed)
    staged = staging.add(ctx, uow, account, list(changes.values()), after=SAVED_PAYMENT)
    reversed_payment = current.model_copy(update={"paymentState": PaymentState.REVERSED, "reversedAt": ctx.now,
                                                  "reversedBy": ctx.user_locator, "reversalReason": reason})
    return _save_payment(ctx, reversed_payment, "billing.payment.reverse", uow=uow, bumped=True, staged=staged)


def _distributions_funded(ctx: CallContext, record: Payment, held: Decimal) -> list[CreditDistribution]:
    """The executed credit distributions of the account a reversal of `record` takes back because its
    credit balance (`held`) holds less than the payment credited: those executed since it was posted, in
    its currency, the latest first, as many as make up the difference (none, and nothing read, when the
    balance holds enough)."""
    short = record.creditedAmount - held
    if short <= 0:
        return []
    executed = [d for d in repository.all_of(ctx.tenant, "account", record.accountLocator,
                                             credit_records.LIST[credit_records.DISTRIBUTION],
                                             credit_records.DISTRIBUTION, CreditDistribution)
                if d.creditDistributionState == CreditDistributionState.EXECUTED and d.currency == record.currency
                and (d.executedVersion or 0) > (record.postedVersion or 0)]
    chosen = []
    for distribution in sorted(executed, key=lambda d: d.executedVersion or 0, reverse=True):
        if short <= 0:
            break
        if distribution.appliedAmount:
            chosen.append(distribution)
            short -= distribution.appliedAmount
    return chosen


def _add_owed_invoice(ctx: CallContext, uow: Any, reversed_payment: Payment, amount: Decimal) -> Invoice:
    """Add to `uow` an invoice of `amount` the account owes now: what was disbursed of the credit of the
    payment being reversed. It bills no installment and no policy (so no delinquency lapses a policy for
    it); it is numbered, rendered and paid like any other invoice."""
    account = accounts.get_account(ctx, reversed_payment.accountLocator)
    locator = new_locator()
    item = InvoiceItem(locator=new_locator(), invoiceLocator=locator, timezone=account.timezone,
                       chargeCategory=OWED, chargeType=OWED, amount=amount, remainingAmount=amount,
                       installmentItemLocators=[], transactionLocators=[])
    owed = Invoice(
        locator=locator, accountLocator=account.locator, billingContainer=account.locator,
        invoiceState=InvoiceState.OPEN, currency=reversed_payment.currency, timezone=account.timezone,
        startTime=ctx.now, endTime=ctx.now, dueTime=ctx.now, generatedTime=ctx.now, generateTime=ctx.now,
        suppressAutopay=True, totalAmount=amount, totalRemainingAmount=amount, invoiceItems=[item],
        installmentLocators=[], policyLocators=[], owedFor=reversed_payment.locator, createdAt=ctx.now,
        createdBy=ctx.user_locator)
    model = configuration.current_model(ctx, resolved=True)[1]
    _add_invoice(ctx, uow, model, _invoice_numbering_plan(ctx, account), owed, [], account)
    return owed


def _require_state(record: Payment, allowed: tuple[PaymentState, ...], what: str) -> None:
    if record.paymentState not in allowed:
        raise codes.PAYMENT_INVALID_STATE(
            f"Payment {record.locator} is {record.paymentState.value} and cannot {what}")


SAVED_PAYMENT = 2
"""The actions `_save_payment` adds to a unit of work: the payment and its event."""


def _save_payment(ctx: CallContext, record: Payment, event: str, *, uow: Any = None, bumped: bool = False,
                  staged: staging.Staged | None = None) -> Payment:
    """Save the payment with its event in `uow` (bumping the account's root unless `bumped`) and commit it,
    with the invoices' changes `staged` (billing/staging.py)."""
    uow = uow or wiring.unit_of_work(ctx)
    if not bumped:
        account = record.accountLocator
        repository.bump_roots(uow, ctx.tenant, account, repository.root_versions(ctx.tenant, account, [account]))
    changed = record.model_copy(update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator})
    repository.save_payment(uow, ctx.tenant, changed)
    uow.record_event(event, _payment_event(changed))
    if staged is not None:
        staging.commit(ctx, uow, staged)
    else:
        uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})


def _payment_event(record: Payment) -> dict[str, Any]:
    return {"paymentLocator": record.locator, "policyLocators": {"listCompleted": True, "items": []}}


def credit_balance(ctx: CallContext, account_locator: str, currency: str | None,
                   page: PageRequest) -> tuple[CreditBalance, list[LedgerLine]]:
    account = accounts.get_account(ctx, account_locator)
    chosen = (currency or configuration.current_model(ctx, resolved=True)[1].get("defaultCurrency") or "USD").upper()
    balance = repository.credit_balance(ctx.tenant, account.locator, chosen)
    return balance, repository.ledger_lines(ctx.tenant, account.locator, chosen, page).items


# --- previews ---------------------------------------------------------------------------------------------

PREVIEW = "preview"
"""The locator prefix of what a preview makes up (a lattice, installments): none of it is stored."""


def preview_quote(ctx: CallContext, quote_locator: str) -> list[Invoice]:
    """The invoices the priced quote would be billed on if it were issued now."""
    quote = quotes.priced_quote(ctx, quote_locator)
    account = accounts.get_account(ctx, quote.accountLocator)
    end = quote.endTime or quote.startTime
    billing = Billing(account=account, policy_locator=quote.policyLocator or "", transaction_locator="",
                      term_locator="", quote_locator=quote.locator,
                      container=_container(quote.billingLevel, account, quote.locator),
                      term_start=quote.startTime, term_end=end, effective=quote.startTime, currency=quote.currency,
                      timezone=quote.timezone, duration_basis=quote.durationBasis, plan_name=quote.installmentPlanName,
                      preferences=quote.preferences.model_dump(exclude_none=True) if quote.preferences else None)
    return _previewed(ctx, configuration.billing_plans(ctx, quote.configVersion), billing, quote.charges or [])


def preview_transaction(ctx: CallContext, transaction_locator: str) -> list[Invoice]:
    """The invoices the priced transaction's charges would add if it were issued now."""
    transaction, parts = transactions.priced_transaction(ctx, transaction_locator)
    billing = _of_transaction(ctx, transaction)
    charges = [charge for part in (transaction, *parts) for charge in part.charges]
    return _previewed(ctx, configuration.billing_plans(ctx, transaction.configVersion), billing, charges)


def preview_stateless(ctx: CallContext, request: Any) -> list[Invoice]:
    """The invoices charges given in the request would be billed on: nothing is read but the account
    and the configuration."""
    account = accounts.get_account(ctx, request.accountLocator)
    billing_plans = configuration.billing_plans(ctx)
    model = configuration.current_model(ctx, resolved=True)[1]
    product = next((products.product(model, name) for name in (model.get("products") or {})
                    if name.lower() == request.productName.lower()), None)
    if product is None:
        raise codes.INVALID_REFERENCE["quote"](f"No product {request.productName!r} is configured",
                                                 field_errors=[FieldError("productName", "unknown product")])
    if request.termEndTime <= request.termStartTime:
        raise codes.REQUEST_INVALID("The term ends after it starts",
                                    field_errors=[FieldError("termEndTime", "must be after termStartTime")])
    currency = (request.currency or model.get("defaultCurrency") or "USD").upper()
    categories = {name.lower(): str((body or {}).get("category") or name)
                  for name, body in (model.get("charges") or {}).items()}
    charges = []
    for index, given in enumerate(request.charges):
        if not given.amount.is_finite() or money.round_money(given.amount, currency) != given.amount:
            raise codes.REQUEST_INVALID(f"A charge's amount has at most {money.minor_units(currency)} decimals",
                                        field_errors=[FieldError(f"charges[{index}].amount", "not an amount")])
        element = given.elementStaticLocator or given.elementLocator or ""
        charges.append(Charge(locator=f"{PREVIEW}-{index}", elementLocator=given.elementLocator or element,
                              elementStaticLocator=element, chargeType=given.chargeType,
                              chargeCategory=categories.get(given.chargeType.lower(), given.chargeType),
                              rate=Decimal(0), amount=given.amount))
    preferences = {"installmentPreferences": request.installmentPreferences.model_dump(exclude_none=True)} \
        if request.installmentPreferences else None
    billing = Billing(account=account, policy_locator="", transaction_locator="", term_locator="",
                      quote_locator=None, container=account.locator, term_start=request.termStartTime,
                      term_end=request.termEndTime, effective=request.termStartTime, currency=currency,
                      timezone=request.timezone or account.timezone,
                      duration_basis=request.durationBasis or product.duration_basis, plan_name=None,
                      preferences=preferences)
    return _previewed(ctx, billing_plans, billing, charges)


def _container(chosen: BillingLevel | None, account: Account, own: str) -> str:
    return own if _billing_level(chosen, account) == BillingLevel.POLICY else account.locator


def _previewed(ctx: CallContext, billing_plans: BillingPlans, billing: Billing, charges: list[Charge]) -> list[Invoice]:
    if billing.term_end <= billing.term_start:
        return []
    billed = _billed(ctx, billing_plans, billing, charges, f"{PREVIEW}-lattice")
    plan = billing_plans.invoicing_plan(billing.account.invoicingPlanName)
    return generator.generate(billed.installments, ctx.now, ctx.user_locator,
                              grouping=plan.installment_grouping if plan else InstallmentGrouping())


# --- early invoicing -------------------------------------------------------------------------------------

def request_early_invoicing(ctx: CallContext, request: Any) -> InvoicingJob:
    """Check what an early invoicing names and queue its job: the named installments (uninvoiced, of one
    account), or, naming none, the account's uninvoiced installments starting before `invoiceThroughTime`."""
    account_locator = request.accountLocator or (
        repository.account_of(ctx.tenant, "installment", request.installmentLocators[0])
        if request.installmentLocators else None)
    if account_locator is None:
        raise codes.REQUEST_INVALID("Name the account or its installments",
                                    field_errors=[FieldError("accountLocator", "required without installments")])
    account = accounts.get_account(ctx, account_locator)
    candidates = _early_candidates(ctx, account.locator, request.installmentLocators, request.invoiceThroughTime)
    job = InvoicingJob(
        locator=new_locator(), accountLocator=account.locator, jobStatus=JobStatus.QUEUED, createdAt=ctx.now,
        invoicingType="early", installmentsToBeInvoiced=[i.locator for i in candidates],
        timezone=request.timezone, invoiceDueTime=request.invoiceDueTime,
        invoiceThroughTime=request.invoiceThroughTime, ignoreHolds=request.ignoreHolds)
    uow = wiring.unit_of_work(ctx)
    repository.bump_roots(uow, ctx.tenant, account.locator,
                          repository.root_versions(ctx.tenant, account.locator, [account.locator]))
    repository.add_invoicing_job(uow, ctx.tenant, job)
    jobs.enqueue(uow, JobType.BILLING_EARLY_INVOICING, {"accountLocator": account.locator, "jobLocator": job.locator},
                 locator=job.locator)
    uow.commit()
    return job


def _early_candidates(ctx: CallContext, account: str, named: list[str], through: datetime | None) -> list[Installment]:
    if not named:
        if through is None:
            raise codes.REQUEST_INVALID("Name the installments, or invoiceThroughTime",
                                        field_errors=[FieldError("invoiceThroughTime", "required")])
        return [i for i in repository.uninvoiced(ctx.tenant, account) if i.installmentStartTime < through]
    found = {i.locator: i for i in repository.get_many(ctx.tenant, account, "installment", named, Installment)}
    for index, locator in enumerate(named):
        if locator not in found or found[locator].invoiceLocator:
            raise codes.INSTALLMENT_NOT_INVOICEABLE(
                f"Installment {locator} is not an uninvoiced installment of account {account}",
                field_errors=[FieldError(f"installmentLocators[{index}]", "not invoiceable")])
    return [found[locator] for locator in dict.fromkeys(named)]


def run_early_invoicing(ctx: CallContext, account_locator: str, job_locator: str) -> InvoicingJob:
    """Invoice now what the job names and is still uninvoiced (with its due time when it gives one)."""
    job = repository.invoicing_job(ctx.tenant, account_locator, job_locator)
    if job is None:
        raise codes.not_found("invoicingJob", job_locator)
    if job.jobStatus == JobStatus.FINISHED:
        return job
    account = accounts.get_account(ctx, account_locator)
    still = [i for i in repository.get_many(ctx.tenant, account.locator, "installment", job.installmentsToBeInvoiced,
                                            Installment) if not i.invoiceLocator]
    if job.invoiceDueTime is not None:
        for installment in still:
            installment.dueTime = job.invoiceDueTime
    held = not job.ignoreHolds and holds.invoicing_held(ctx, account.locator)
    invoices = [] if held else _invoice(ctx, account, still)
    done = job.model_copy(update={"jobStatus": JobStatus.FINISHED, "completedAt": ctx.now,
                                  "invoiceLocators": [i.locator for i in invoices],
                                  "processingErrors": "the account's invoicing is held" if held else None})
    uow = wiring.unit_of_work(ctx)
    repository.save_invoicing_job(uow, ctx.tenant, done)
    uow.commit()
    return done


def invoicing_job(ctx: CallContext, job_locator: str) -> InvoicingJob:
    account = repository.account_of(ctx.tenant, "invoicingJob", job_locator)
    found = repository.invoicing_job(ctx.tenant, account, job_locator) if account else None
    if found is None:
        raise codes.not_found("invoicingJob", job_locator)
    return found


def invoicing_jobs(ctx: CallContext, account_locator: str, page: PageRequest) -> Page[InvoicingJob]:
    account = accounts.get_account(ctx, account_locator)
    return repository.invoicing_jobs(ctx.tenant, account.locator, page)


def invoice_event(invoice: Invoice) -> dict[str, Any]:
    """The data of a `billing.invoice.*` event (settle, unsettle) for other billing modules."""
    return _invoice_event(invoice)


def move_credit(ctx: CallContext, uow: Any, account: str, currency: str, amount: Decimal, note: str,
                source_type: str, source: str) -> None:
    """Move the account's credit balance by `amount` in `uow` (for other billing modules)."""
    _credit(ctx, uow, account, currency, amount, note, source_type, source)


def _excess_credit_job(ctx: CallContext, uow: Any, account: Account | str, currency: str, *,
                       apply_to_invoices: bool) -> None:
    """Enqueue in `uow` what the account's excess credit plan does with its credit (credit/job_handlers.py):
    after a posting that left credit, disburse the excess; after invoice generation, apply the credit to the
    open invoices too. Nothing (and no read) for a tenant without excess credit plans."""
    plans = configuration.billing_plans(ctx)
    if not plans.excess_credit_plans:
        return
    found = accounts.get_account(ctx, account) if isinstance(account, str) else account
    plan = plans.excess_credit_plan(found.excessCreditPlanName)
    if plan is None or not (plan.disburse_excess or (apply_to_invoices and plan.auto_apply_excess_to_invoices)):
        return
    jobs.enqueue(uow, JobType.BILLING_EXCESS_CREDIT, {"accountLocator": found.locator, "currency": currency,
                                                      "applyToInvoices": apply_to_invoices})
