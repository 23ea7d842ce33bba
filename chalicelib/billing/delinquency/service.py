"""Delinquency (DECISIONS.md "Billing"; socotra-semantics.md §4.5), driven by the due index:

- an open invoice's due entry (`billing.invoiceDue`, put when billing generates it) finds it unsettled:
  its policies' delinquency plans open a delinquency `inGrace` from the due time for `gracePeriodDays`
  (policy status `delinquent`), with its configured events at their offsets; with `delinquencyLevel:
  policy` a policy's later unsettled invoices join its delinquency still in grace;
- a payment that settles every invoice of a delinquency in grace settles it (`settle_paid`, in the
  payment's own unit of work): its grace end and events are cancelled, the policies are not delinquent;
- the grace end (`billing.delinquencyGraceEnd`) lapses each policy: a transaction of the plan's
  `lapseTransactionType` effective at the grace start, advanced to `advanceLapseTo` through the
  transactions service (an issued lapse is billed like any cancellation: its refund into credit);
- an active delinquency hold on the account pauses all of it: events are cancelled (`delinquencyHeld`)
  and the grace end waits; releasing the hold puts the grace end and those events again (holds/service.py);
- a reversal that re-opens an invoice past its due time re-opens its settled delinquency, or opens a new
  one from the reversal (`reopen_unsettled`).

Every write carries the bump of the billing root of the delinquency's container (its invoices'), so it
never interleaves with invoicing and payments of that container; a hold, which changes the delinquencies
of the whole account, bumps the account's root and theirs (billing/repository.py). A due run repeated at
the same time finds the work done and does nothing.

A fleet's delinquency (an account of many policies: about 3 actions a policy) is more than one write holds: its
opening, its lapse's marks, a payment's settlement of it and a reversal's re-opening of it (or opening of a new one)
are then written in steps, each behind the billing root, the due entry that finishes what a step cut short settled
last (`_opened_in_steps`, `_unmark_in_steps`, `_unmark_settled`, `_remark_reopened`, `_open_fresh`: the grace end
is put due now until the marks are written); a policy is never marked by a delinquency that is not committed and in
grace. A 409 between the opening's steps (a payment of part of the invoice) makes the rest read again and go on at
once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from chalicelib.accounts import service as accounts
from chalicelib.billing import account_root
from chalicelib.billing import repository as billing
from chalicelib.billing.delinquency import calculator, repository
from chalicelib.billing.delinquency.models import (
    OPEN_STATES,
    CancellationType,
    ConfiguredDelinquencyEvent,
    Delinquency,
    DelinquencyCreateJob,
    DelinquencyEvent,
    DelinquencyEventJob,
    DelinquencyEventState,
    DelinquencyReference,
    DelinquencySettings,
    DelinquencyState,
    GraceJob,
)
from chalicelib.billing.installments import service as installments
from chalicelib.billing.invoices import service as invoicing
from chalicelib.billing.invoices.models import Invoice, InvoiceState
from chalicelib.billing.models import HoldTarget, JobStatus
from chalicelib.configuration import service as configuration
from chalicelib.configuration.billing_plans import BUILTIN_LAPSE_TRANSACTION_TYPE, DelinquencyLevel, DelinquencyPlan
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import ConcurrentModification, DomainError, FieldError
from chalicelib.core.ids import new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.policies import service as policies
from chalicelib.policies.models import Policy, Term, Transaction, TransactionState
from chalicelib.runtime import due, wiring
from chalicelib.runtime.due import DueEntry
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.wiring import UnitOfWork
from chalicelib.transactions import service as transactions
from chalicelib.transactions.models import ParamsInstruction

CREATE_EVENT, SETTLE_EVENT, LAPSE_EVENT = (
    "billing.delinquency.create",
    "billing.delinquency.settle",
    "billing.delinquency.lapse",
)
UPDATE_EVENT = "billing.delinquency.update"
"""Our own (the catalogue has no event for a moved grace end)."""
EVENT_EVENT = "billing.delinquency.delinquencyevent"
# --- reads ----------------------------------------------------------------------------------------


def delinquency(ctx: CallContext, locator: str) -> Delinquency:
    found = repository.delinquency(ctx.tenant, locator)
    if found is None:
        raise codes.not_found("delinquency", locator)
    return found


def delinquencies_of_account(ctx: CallContext, account_locator: str, page: PageRequest) -> Page[Delinquency]:
    return repository.delinquencies_of_account(ctx.tenant, account_locator, page)


def active_delinquencies(ctx: CallContext, account_locator: str) -> list[Delinquency]:
    """The account's delinquencies still waiting for a payment or a lapse (every page)."""
    found, page = [], PageRequest(0, 100)
    while True:
        listed = repository.delinquencies_of_account(ctx.tenant, account_locator, page)
        found += [d for d in listed.items if d.delinquencyState in (*OPEN_STATES, DelinquencyState.LAPSE_TRIGGERED)]
        if listed.list_completed:
            return found
        page = PageRequest(page.offset + page.count, page.count)


def delinquencies_of(ctx: CallContext, owner_kind: str, owner: str, page: PageRequest) -> Page[Delinquency]:
    """Of a policy or an invoice."""
    return repository.delinquencies_of(ctx.tenant, owner_kind, owner, page)


def events_of(
    ctx: CallContext, delinquency_locator: str, page: PageRequest
) -> tuple[Delinquency, Page[DelinquencyEvent]]:
    record = delinquency(ctx, delinquency_locator)
    events = repository.events_of(ctx.tenant, record.accountLocator, record.locator)
    return record, Page.window(events, page)


def delinquency_event(ctx: CallContext, locator: str) -> DelinquencyEvent:
    found = repository.delinquency_event(ctx.tenant, locator)
    if found is None:
        raise codes.not_found("delinquencyEvent", locator)
    return found


def create_jobs(ctx: CallContext, invoice_locator: str, page: PageRequest) -> Page[DelinquencyCreateJob]:
    return repository.create_jobs(ctx.tenant, invoice_locator, page)


def grace_jobs(ctx: CallContext, delinquency_locator: str, page: PageRequest) -> Page[GraceJob]:
    return repository.grace_jobs(ctx.tenant, delinquency_locator, page)


def event_jobs(ctx: CallContext, delinquency_locator: str, page: PageRequest) -> Page[DelinquencyEventJob]:
    return repository.event_jobs(ctx.tenant, delinquency_locator, page)


# --- an invoice falls due -------------------------------------------------------------------------------


def invoice_due(ctx: CallContext, uow: UnitOfWork, invoice_locator: str) -> list[str]:
    """At the invoice's due time (ctx.now), in `uow` (the due entry's): unsettled, it opens a delinquency
    for its policies, or joins the one in grace of a policy whose plan's level is `policy`. Answers the
    delinquencies it opened or joined (none: settled, or no policy of it has a delinquency plan)."""
    owner = billing.container_of(ctx.tenant, "invoice", invoice_locator)
    if owner is None:
        return []
    account, container = owner
    versions = account_root.versions(ctx, account, [container])
    found = billing.get_many(ctx.tenant, account, "invoice", [invoice_locator], Invoice)
    if not found:
        return []
    invoice = found[0]
    if invoice.invoiceState != InvoiceState.OPEN or invoice.totalRemainingAmount <= 0:
        _created(ctx, uow, account, versions, invoice, [])
        return []
    work = wiring.nested_unit_of_work(uow)
    marks: dict[str, list[str]] = {}
    touched = _open_or_join(ctx, work, [invoice], invoice.dueTime, marks)
    _mark(ctx, work, marks)
    _created(ctx, work, account, versions, invoice, touched)
    if work.remaining >= ENTRY_SETTLEMENT:
        work.commit()
        return [d.locator for d in touched]
    return _opened_in_steps(ctx, uow, account, container, versions, invoice)  # a fleet's: one write is too small


def _created(
    ctx: CallContext,
    uow: UnitOfWork,
    account: str,
    versions: dict[str, int],
    invoice: Invoice,
    touched: list[Delinquency],
) -> None:
    """The root's bump and the invoice's create job: the end of the write of an invoice falling due."""
    account_root.bump_at(ctx, uow, account, versions)
    uow.add(
        *repository.create_job_writes(
            ctx.tenant,
            DelinquencyCreateJob(
                locator=new_locator(),
                invoiceLocator=invoice.locator,
                dueTime=invoice.dueTime,
                jobStatus=JobStatus.FINISHED,
                delinquencyLocators=[d.locator for d in touched],
                createdAt=ctx.now,
                updatedAt=ctx.now,
            ),
        )
    )


T = TypeVar("T")

MARKS_RESERVE = 2
"""What a write of policy marks keeps free: its root's bump is in it already; the entry's settlement and one more."""


def _opened_in_steps(
    ctx: CallContext,
    uow: UnitOfWork,
    account: str,
    container: str,
    versions: dict[str, int],
    invoice: Invoice,
) -> list[str]:
    """`invoice_due` of an invoice whose delinquency and policy marks are more than one write holds (a fleet's,
    about 3 actions a policy): in steps, each behind the container's billing root (at the version the last one
    left), so no other billing write of the container (a payment settling the delinquency) comes between them:

    1. the delinquencies (records, their invoices' references, events, grace end), unless an earlier attempt of
       this entry committed them (an invoice falls due once: a delinquency naming it is that attempt's, found by
       one Query of its references, read on this path only);
    2. the policies' marks (`delinquent`) with the references listing the delinquency under each policy, as
       many policies to a write as it holds, only for those still in grace (a policy already marked: nothing);
    3. in the entry's own `uow` (its settlement committed with it): the root's bump and the create job.

    A crash or a 409 between them leaves the entry due: its retry finds the delinquencies of step 1 and goes on
    with step 2. A policy is never marked by a delinquency that is not committed and in grace (its marks follow
    the record, behind the root); until the retry, a policy of it may show not delinquent yet."""
    existing = repository.delinquencies_of(ctx.tenant, "invoice", invoice.locator, PageRequest(0, 100)).items
    roots = dict(versions)
    if existing:
        touched = existing
    else:
        first = wiring.unit_of_work(ctx)
        account_root.bump_at(ctx, first, account, roots)
        touched = _open_or_join(ctx, first, [invoice], invoice.dueTime, {}, policy_references=False)
        first.commit()
        roots = {name: version + 1 for name, version in roots.items()}
    in_grace = [d for d in touched if d.delinquencyState in OPEN_STATES]

    def behind_root(committed: int) -> UnitOfWork:
        write = wiring.unit_of_work(ctx)
        account_root.bump_at(ctx, write, account, _shifted(roots, committed))
        return write

    def mark(write: UnitOfWork, policy: str) -> None:
        _mark_listed(ctx, write, policy, [d for d in in_grace if policy in d.policy_locators])

    for attempt in range(MARKING_ATTEMPTS):
        wanted = list(dict.fromkeys(p for d in in_grace for p in d.policy_locators))
        read = policies.policies_by_locator(ctx, wanted)  # read together (each then read from the request's reads)
        wanted = [
            p
            for p in wanted
            if p not in read
            or any(d.locator not in read[p].delinquencyLocators for d in in_grace if p in d.policy_locators)
        ]
        try:
            committed = _in_writes(wanted, behind_root, mark)
            break
        except ConcurrentModification:
            if attempt + 1 == MARKING_ATTEMPTS:
                raise  # the entry's retry (a day later) goes on from here
            # another billing write of the container came between two steps (a payment, paying part of the invoice)
            # or a policy changed: the roots, then the delinquencies and policies read again, the rest marked now
            ctx.reads.clear()
            roots = account_root.versions(ctx, account, [container])
            fresh = repository.delinquencies(ctx.tenant, account, [d.locator for d in in_grace])
            in_grace = [d for d in fresh if d.delinquencyState in OPEN_STATES]
    _created(ctx, uow, account, _shifted(roots, committed), invoice, touched)
    return [d.locator for d in touched]


MARKING_ATTEMPTS = 3
"""Runs of `_opened_in_steps`' marks in one due run before the entry waits its retry: a payment between two steps
(or a policy changed under one) makes the rest read their records again and go on at once."""


def _in_writes(items: list[T], new_write: Callable[[int], UnitOfWork], add: Callable[[UnitOfWork, T], None]) -> int:
    """Each of `items` added by `add` to writes `new_write(n)` makes (n: how many were committed before it), as
    many to a write as it holds with MARKS_RESERVE free, each committed when full and the last at the end: how
    many were committed."""
    write, held, committed = None, 0, 0
    for item in items:
        if write is None:
            write, held = new_write(committed), 0
        part = wiring.nested_unit_of_work(write)
        add(part, item)
        if part.remaining < MARKS_RESERVE and held:
            write.commit()
            committed += 1
            write, held = new_write(committed), 0
            part = wiring.nested_unit_of_work(write)
            add(part, item)
        part.commit()
        held += 1
    if write is not None:
        write.commit()
        committed += 1
    return committed


def _mark_listed(ctx: CallContext, uow: UnitOfWork, policy: str, records: list[Delinquency]) -> None:
    """The policy marked in grace by `records` and each listed under it (a put: the same item again on a retry)."""
    for record in records:
        uow.add(*repository.reference_writes(ctx.tenant, record, [_reference(record.locator, "policy", policy)]))
    policies.mark_delinquencies(ctx, uow, policy, in_grace=[d.locator for d in records])


def _open_or_join(
    ctx: CallContext,
    uow: UnitOfWork,
    invoices: list[Invoice],
    start: datetime,
    marks: dict[str, list[str]],
    *,
    policy_references: bool = True,
    grace_end_due: datetime | None = None,
) -> list[Delinquency]:
    """The delinquencies of unsettled `invoices` (of one account), a new one's grace from `start`: at
    `delinquencyLevel: policy` a policy's delinquency in grace takes them, else one opens for the plan's
    policies of them all; at `invoice` level one opens per invoice and plan. Collects in `marks` the
    delinquencies each policy is now in grace by (one policy write each, whatever the invoices). Without
    `policy_references` a new delinquency is not listed under its policies (the caller lists it with their marks);
    `grace_end_due`: when a new one's grace end entry is due, if not at its grace end (`_open`)."""
    joined: dict[str, tuple[Delinquency, list[str]]] = {}
    opening: dict[tuple[str, str], tuple[DelinquencyPlan, dict[str, Policy], list[Invoice]]] = {}
    read = _policies_of(ctx, invoices)  # a fleet's invoice: a thousand policies, read together
    in_grace = _in_grace_of_all(ctx, invoices, read)
    for invoice in invoices:
        for policy in (read[locator] for locator in invoice.policyLocators):
            plan = _delinquency_plan(ctx, policy)
            if plan is None:
                continue
            by_policy = plan.delinquency_level == DelinquencyLevel.POLICY
            current = in_grace.get(policy.locator) if by_policy else None
            if current is not None:
                added = joined.setdefault(current.locator, (current, []))[1]
                added.extend([] if invoice.locator in added else [invoice.locator])
                continue
            _, held, of = opening.setdefault((plan.name, "" if by_policy else invoice.locator), (plan, {}, []))
            held[policy.locator] = policy
            of.extend([] if invoice in of else [invoice])
    touched = []
    for record, added in joined.values():
        references = [_reference(record.locator, "invoice", locator) for locator in added]
        record = record.model_copy(
            update={
                "references": [*record.references, *references],
                "updatedAt": ctx.now,
                "updatedBy": ctx.user_locator,
            }
        )
        record = repository.write_delinquency(uow, ctx.tenant, record)
        uow.add(*repository.reference_writes(ctx.tenant, record, references))
        touched.append(record)
    for plan, held, of in opening.values():
        record = _open(
            ctx,
            uow,
            of,
            plan,
            list(held.values()),
            start,
            policy_references=policy_references,
            grace_end_due=grace_end_due,
        )
        touched.append(record)
        for locator in held:
            marks.setdefault(locator, []).append(record.locator)
    return touched


def _mark(ctx: CallContext, uow: UnitOfWork, marks: dict[str, list[str]]) -> None:
    for policy, locators in marks.items():
        policies.mark_delinquencies(ctx, uow, policy, in_grace=locators)


def _in_grace_of(ctx: CallContext, account: str, policy: Policy) -> Delinquency | None:
    """The policy's delinquency in grace (it records them), if any."""
    found = repository.delinquencies(ctx.tenant, account, policy.delinquencyLocators)
    return next((d for d in found if d.delinquencyState in OPEN_STATES), None)


def _policies_of(ctx: CallContext, invoices: list[Invoice]) -> dict[str, Policy]:
    """The policies of `invoices`, by locator: one read for one (`get_policy`), one BatchGetItem per hundred for
    more (each read at most once per request either way); 404 for one the tenant does not have."""
    wanted = list(dict.fromkeys(locator for invoice in invoices for locator in invoice.policyLocators))
    if len(wanted) == 1:
        return {wanted[0]: policies.get_policy(ctx, wanted[0])}
    found = policies.policies_by_locator(ctx, wanted)
    return {locator: found.get(locator) or policies.get_policy(ctx, locator) for locator in wanted}


def _delinquency_plan(ctx: CallContext, policy: Policy) -> DelinquencyPlan | None:
    return configuration.billing_plans(ctx, policy.configVersion).delinquency_plan(policy.delinquencyPlanName)


def _in_grace_of_all(ctx: CallContext, invoices: list[Invoice], held: dict[str, Policy]) -> dict[str, Delinquency]:
    """The delinquency in grace of each of the policies of `invoices` whose plan is at `delinquencyLevel:
    policy` (by policy locator): the delinquencies they record read together (one BatchGetItem per hundred,
    none when none records any)."""
    if not invoices:
        return {}
    account = invoices[0].accountLocator
    by_policy = [
        policy
        for policy in held.values()
        if policy.delinquencyLocators
        and (plan := _delinquency_plan(ctx, policy)) is not None
        and plan.delinquency_level == DelinquencyLevel.POLICY
    ]
    if len(by_policy) == 1:
        current = _in_grace_of(ctx, account, by_policy[0])
        return {by_policy[0].locator: current} if current is not None else {}
    found = {
        d.locator: d
        for d in repository.delinquencies(ctx.tenant, account, [d for p in by_policy for d in p.delinquencyLocators])
    }
    return {
        policy.locator: current
        for policy in by_policy
        if (
            current := next(
                (
                    found[d]
                    for d in policy.delinquencyLocators
                    if d in found and found[d].delinquencyState in OPEN_STATES
                ),
                None,
            )
        )
        is not None
    }


def _reference(delinquency_locator: str, kind: str, locator: str) -> DelinquencyReference:
    return DelinquencyReference(
        locator=new_locator(), delinquencyLocator=delinquency_locator, referenceLocator=locator, referenceType=kind
    )


def _open(
    ctx: CallContext,
    uow: UnitOfWork,
    invoices: list[Invoice],
    plan: DelinquencyPlan,
    held: list[Policy],
    start: datetime,
    *,
    policy_references: bool = True,
    grace_end_due: datetime | None = None,
) -> Delinquency:
    """A delinquency in grace of `held` and `invoices` (its policies are marked by the caller, and listed under
    them by it without `policy_references`); its grace end's entry due at `grace_end_due` if given (a fleet's
    opened by a reversal, due now until its marks are written: `grace_ended` writes the rest), else at its end."""
    locator = new_locator()
    invoice = invoices[0]
    end = calculator.grace_end(start, plan.grace_period_days, invoice.timezone)
    record = Delinquency(
        locator=locator,
        accountLocator=invoice.accountLocator,
        billingContainer=invoice.billingContainer,
        delinquencyState=DelinquencyState.IN_GRACE,
        settings=DelinquencySettings(
            lapseTransactionType=plan.lapse_transaction_type,
            gracePeriodDays=plan.grace_period_days,
            advanceLapseTo=plan.advance_lapse_to,
            delinquencyLevel=plan.delinquency_level,
        ),
        timezone=invoice.timezone,
        references=[
            *(_reference(locator, "policy", p.locator) for p in held),
            *(_reference(locator, "invoice", i.locator) for i in invoices),
        ],
        graceStartedAt=start,
        graceEndAt=end,
        configuredDelinquencyEvents=[
            ConfiguredDelinquencyEvent(name=e.name, offsetDays=e.offset_days, offsetBasis=e.offset_basis)
            for e in plan.events.values()
        ],
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    record = repository.write_delinquency(
        uow, ctx.tenant, record, new=True, listed=None if policy_references else record.invoice_locators
    )
    due.schedule(uow, DueKind.DELINQUENCY_GRACE_END, locator, end if grace_end_due is None else grace_end_due)
    uow.record_event(CREATE_EVENT, _event_data(record))
    for configured in plan.events.values():
        event = DelinquencyEvent(
            locator=new_locator(),
            delinquencyLocator=locator,
            accountLocator=record.accountLocator,
            billingContainer=record.billingContainer,
            name=configured.name,
            delinquencyEventState=DelinquencyEventState.ACTIVE,
            triggerTime=calculator.trigger_time(configured, start, end, record.timezone),
            createdAt=ctx.now,
            createdBy=ctx.user_locator,
            updatedAt=ctx.now,
            updatedBy=ctx.user_locator,
        )
        uow.add(
            *repository.event_writes(ctx.tenant, event, new=True),
            *repository.event_job_writes(
                ctx.tenant,
                DelinquencyEventJob(
                    locator=new_locator(),
                    delinquencyEventLocator=event.locator,
                    delinquencyLocator=locator,
                    jobStatus=JobStatus.QUEUED,
                    triggerTime=event.triggerTime,
                    createdAt=ctx.now,
                    updatedAt=ctx.now,
                ),
            ),
        )
        due.schedule(uow, DueKind.DELINQUENCY_EVENT, event.locator, max(event.triggerTime, ctx.now))
        uow.record_event(f"{EVENT_EVENT}.create", _event_data(record, event))
    return record


def _event_data(record: Delinquency, event: DelinquencyEvent | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "delinquencyLocator": record.locator,
        "policyLocators": {"listCompleted": True, "items": record.policy_locators},
    }
    if event is not None:
        data["delinquencyEventLocator"] = event.locator
    return data


# --- payments settle ----------------------------------------------------------------------------------


def settle_paid(ctx: CallContext, uow: UnitOfWork, account: str, settled_invoices: Iterable[str]) -> None:
    """Adds to `uow` (a payment's, which bumps the billing root) the settlement of every delinquency in
    grace whose invoices the payment leaves all settled (`settled_invoices`: those it settled)."""
    settled = set(settled_invoices)
    if not settled:
        return
    waiting = [
        d for d in repository.open_delinquencies(ctx.tenant, account) if settled.intersection(d.invoice_locators)
    ]
    others = sorted({i for d in waiting for i in d.invoice_locators} - settled)
    still_open = {
        i.locator
        for i in billing.get_many(ctx.tenant, account, "invoice", others, Invoice)
        if i.invoiceState == InvoiceState.OPEN
    }
    ended: dict[str, list[str]] = {}
    for record in waiting:
        if any(invoice in still_open for invoice in record.invoice_locators):
            continue
        fleet = len(record.policy_locators) > MARKS_IN_PAYMENT
        _end(ctx, uow, record, DelinquencyState.SETTLED, CancellationType.DELINQUENCY_SETTLED, grace_end_settled=fleet)
        uow.record_event(SETTLE_EVENT, _event_data(record))
        if fleet:  # its marks are more than the payment's write holds: removed after it (`_unmark_settled`)
            due.schedule(uow, DueKind.DELINQUENCY_GRACE_END, record.locator, ctx.now)
            uow.after_commit(partial(_unmark_settled, ctx, account, record))
            continue
        for policy in record.policy_locators:
            ended.setdefault(policy, []).append(record.locator)
    for policy, locators in ended.items():
        policies.mark_delinquencies(ctx, uow, policy, ended=locators)


MARKS_IN_PAYMENT = 20
"""The most policies a delinquency a payment settles has for their marks to be removed in the payment's own write
(about 2 actions each, beside the payment's, its invoices' and their events)."""


def _unmark_settled(ctx: CallContext, account: str, record: Delinquency) -> None:
    """After the write of the payment that settled a fleet's delinquency: its policies' marks removed in writes of
    their own (`_unmark_in_steps`). That write also put the delinquency's grace end due now: should this not get
    to the end (a 409, a crash), the due run's `grace_ended` removes the rest, so a policy stays marked by a
    settled delinquency only until then."""
    try:
        _unmark_in_steps(ctx, account, record)
    except DomainError:
        return


# --- reversals unsettle -------------------------------------------------------------------------------

LAPSED_STATES = (DelinquencyState.LAPSE_TRIGGERED, DelinquencyState.LAPSE_TRANSACTION_CREATED)


def reopen_unsettled(ctx: CallContext, uow: UnitOfWork, account: str, reopened: Iterable[Invoice]) -> None:
    """Adds to `uow` (a reversal's: payment, write-off or credit distribution, which bumps the billing root)
    the delinquency of each invoice it re-opened past its due time and that no delinquency in grace holds:
    - its settled delinquency whose grace end still lies ahead is in grace again, as if never settled: the
      grace end and the events its settlement cancelled come back at their times (events whose time
      passed meanwhile trigger now), its policies delinquent again;
    - otherwise (paid before its due time, or its delinquency's grace end passed) a new delinquency opens
      (or joins one in grace at `delinquencyLevel: policy`) in grace from the reversal;
    - an invoice whose delinquency lapsed its policies opens nothing more."""
    past_due = [i for i in reopened if i.invoiceState == InvoiceState.OPEN and i.dueTime <= ctx.now]
    if not past_due:
        return
    held = {i for d in repository.open_delinquencies(ctx.tenant, account) for i in d.invoice_locators}
    marks: dict[str, list[str]] = {}
    fresh = []
    for invoice in past_due:
        if invoice.locator in held:
            continue
        records = repository.delinquencies_of(ctx.tenant, "invoice", invoice.locator, PageRequest(0, 100)).items
        if any(d.delinquencyState in LAPSED_STATES for d in records):
            continue
        settled = [d for d in records if d.delinquencyState == DelinquencyState.SETTLED and d.graceEndAt > ctx.now]
        if settled:
            held.update(_reopen(ctx, uow, settled[-1], marks).invoice_locators)
        else:
            fresh.append(invoice)
    if fresh:
        _open_fresh(ctx, uow, fresh, marks)
    _mark(ctx, uow, marks)


def _open_fresh(ctx: CallContext, uow: UnitOfWork, invoices: list[Invoice], marks: dict[str, list[str]]) -> None:
    """`reopen_unsettled`'s new delinquency (or join) of `invoices`, in grace from now, its policies' marks collected
    in `marks`; of a fleet's invoices (more than MARKS_IN_PAYMENT policies: more than the reversal's write holds,
    about 3 actions a policy) a new delinquency is written in the reversal's write without its policies' marks and
    references, its grace end due now, and they are written after it in steps (`_remark_reopened`, as a re-opening's
    are), its grace end then put at its time; a step cut short leaves that grace end due now to mark the rest."""
    if len({p for invoice in invoices for p in invoice.policyLocators}) <= MARKS_IN_PAYMENT:
        _open_or_join(ctx, uow, invoices, ctx.now, marks)
        return
    opened: dict[str, list[str]] = {}
    touched = _open_or_join(ctx, uow, invoices, ctx.now, opened, policy_references=False, grace_end_due=ctx.now)
    for record in touched:
        if any(record.locator in locators for locators in opened.values()):
            uow.after_commit(
                partial(_remark_reopened, ctx, record.accountLocator, record.container, record.locator, listed=True)
            )


def _reopen(ctx: CallContext, uow: UnitOfWork, record: Delinquency, marks: dict[str, list[str]]) -> Delinquency:
    """The settled `record` in grace again in `uow`; its policies' marks collected in `marks`, or, a fleet's
    (more than MARKS_IN_PAYMENT policies: more than the reversal's write holds), written after it in steps
    (`_remark_reopened`), its grace end put due now until they are all written (`grace_ended` finishes them)."""
    reopened = record.model_copy(
        update={"delinquencyState": DelinquencyState.IN_GRACE, "updatedAt": ctx.now, "updatedBy": ctx.user_locator}
    )
    reopened = repository.write_delinquency(uow, ctx.tenant, reopened)
    fleet = len(record.policy_locators) > MARKS_IN_PAYMENT
    due.schedule(uow, DueKind.DELINQUENCY_GRACE_END, record.locator, ctx.now if fleet else record.graceEndAt)
    _rearm_events(ctx, uow, reopened, CancellationType.DELINQUENCY_SETTLED)
    uow.record_event(UPDATE_EVENT, _event_data(reopened))
    if fleet:
        uow.after_commit(partial(_remark_reopened, ctx, record.accountLocator, record.container, record.locator))
        return reopened
    for policy in record.policy_locators:
        marks.setdefault(policy, []).append(record.locator)
    return reopened


def _remark_reopened(ctx: CallContext, account: str, container: str, locator: str, *, listed: bool = False) -> None:
    """After the write of the reversal that re-opened a fleet's settled delinquency (or opened a new one, `listed`:
    the references listing it under its policies written with their marks): its policies marked again in writes of
    their own, all behind the container's billing root at the version read first (a payment settling it again
    meanwhile stops them), then its grace end put back at its time. Should this not get to the end (a 409, a
    crash), that grace end, due now, marks the rest (`grace_ended`)."""
    try:
        roots = account_root.versions(ctx, account, [container])  # the root before the record
        record = repository.delinquency(ctx.tenant, locator, account)
        if record is None or record.delinquencyState not in OPEN_STATES:
            return
        committed = _marked_in_steps(ctx, account, record, roots, listed=listed)
        last = wiring.unit_of_work(ctx)
        account_root.bump_at(ctx, last, account, _shifted(roots, committed))
        due.schedule(last, DueKind.DELINQUENCY_GRACE_END, record.locator, record.graceEndAt)
        last.commit()
    except DomainError:
        return


def _shifted(roots: dict[str, int], committed: int) -> dict[str, int]:
    return {name: version + committed for name, version in roots.items()}


def _marked_in_steps(
    ctx: CallContext, account: str, record: Delinquency, roots: dict[str, int], *, listed: bool = False
) -> int:
    """The mark of `record` (in grace) written on each of its policies that lacks it (`listed`: with the reference
    listing `record` under the policy, a put), as many policies to a write as it holds, the n-th write behind the
    billing roots at `roots` + n (nothing else of the container's billing comes between them): how many writes
    committed."""
    unmarked = [
        policy.locator
        for policy in policies.policies_by_locator(ctx, record.policy_locators).values()
        if record.locator not in policy.delinquencyLocators
    ]

    def behind_root(committed: int) -> UnitOfWork:
        write = wiring.unit_of_work(ctx)
        account_root.bump_at(ctx, write, account, _shifted(roots, committed))
        return write

    def mark(write: UnitOfWork, policy: str) -> None:
        if listed:
            _mark_listed(ctx, write, policy, [record])
        else:
            policies.mark_delinquencies(ctx, write, policy, in_grace=[record.locator])

    return _in_writes(unmarked, behind_root, mark)


def _rearm_events(ctx: CallContext, uow: UnitOfWork, record: Delinquency, reason: CancellationType) -> None:
    """The events cancelled for `reason` active again at their trigger times (now, for those passed) and
    their jobs queued again; events cancelled for another reason (a request) stay cancelled."""
    rearmed = {
        job.delinquencyEventLocator: job
        for job in repository.all_event_jobs(ctx.tenant, record.locator)
        if job.cancelled and job.cancellationType == reason
    }
    for event in repository.events_of(ctx.tenant, record.accountLocator, record.locator):
        job = rearmed.get(event.locator)
        if job is None or event.delinquencyEventState != DelinquencyEventState.CANCELLED:
            continue
        active = event.model_copy(
            update={
                "delinquencyEventState": DelinquencyEventState.ACTIVE,
                "updatedAt": ctx.now,
                "updatedBy": ctx.user_locator,
            }
        )
        uow.add(
            *repository.event_writes(ctx.tenant, active),
            *repository.event_job_writes(
                ctx.tenant,
                job.model_copy(
                    update={
                        "jobStatus": JobStatus.QUEUED,
                        "cancelled": False,
                        "cancellationType": None,
                        "updatedAt": ctx.now,
                    }
                ),
            ),
        )
        due.schedule(uow, DueKind.DELINQUENCY_EVENT, event.locator, max(event.triggerTime, ctx.now))
        uow.record_event(f"{EVENT_EVENT}.activate", _event_data(record, active))


def _end(
    ctx: CallContext,
    uow: UnitOfWork,
    record: Delinquency,
    state: DelinquencyState,
    reason: CancellationType | None,
    *,
    grace_end_settled: bool = False,
    **changes: Any,
) -> Delinquency:
    """The delinquency in `state`, its grace end cancelled (unless the caller's due entry of it settles it:
    `grace_end_settled`), and with a `reason` the events still waiting (a lapsed delinquency is still
    unsettled: its events after the grace end still trigger)."""
    changed = record.model_copy(
        update={"delinquencyState": state, "updatedAt": ctx.now, "updatedBy": ctx.user_locator, **changes}
    )
    changed = repository.write_delinquency(uow, ctx.tenant, changed)
    if not grace_end_settled:
        due.cancel(uow, DueKind.DELINQUENCY_GRACE_END, record.locator)
    if reason is not None:
        _cancel_events(ctx, uow, record, reason)
    return changed


def _cancel_events(ctx: CallContext, uow: UnitOfWork, record: Delinquency, reason: CancellationType) -> None:
    jobs = {job.delinquencyEventLocator: job for job in repository.all_event_jobs(ctx.tenant, record.locator)}
    for event in repository.events_of(ctx.tenant, record.accountLocator, record.locator):
        if event.delinquencyEventState != DelinquencyEventState.ACTIVE:
            continue
        uow.add(
            *repository.event_writes(
                ctx.tenant,
                event.model_copy(
                    update={
                        "delinquencyEventState": DelinquencyEventState.CANCELLED,
                        "updatedAt": ctx.now,
                        "updatedBy": ctx.user_locator,
                    }
                ),
            )
        )
        job = jobs.get(event.locator)
        if job is not None:
            uow.add(
                *repository.event_job_writes(
                    ctx.tenant,
                    job.model_copy(
                        update={
                            "jobStatus": JobStatus.FINISHED,
                            "cancelled": True,
                            "cancellationType": reason,
                            "updatedAt": ctx.now,
                        }
                    ),
                )
            )
        due.cancel(uow, DueKind.DELINQUENCY_EVENT, event.locator)
        uow.record_event(f"{EVENT_EVENT}.cancel", _event_data(record, event))


# --- holds --------------------------------------------------------------------------------------------


def hold_account(ctx: CallContext, uow: UnitOfWork, account: str) -> None:
    """Adds to `uow` (a delinquency hold's activation, which bumps the account's root) the cancellation of
    the waiting events of the account's delinquencies in grace (`delinquencyHeld`), with the bumps of their
    containers' roots; their grace ends wait for the hold's release."""
    records = repository.open_delinquencies(ctx.tenant, account)
    account_root.bump_containers(ctx, uow, account, [record.container for record in records])
    for record in records:
        _cancel_events(ctx, uow, record, CancellationType.DELINQUENCY_HELD)


def release_account(ctx: CallContext, uow: UnitOfWork, account: str) -> None:
    """Adds to `uow` (a delinquency hold's release, which bumps the account's root) the grace end of each of
    the account's delinquencies in grace again, and the events the hold cancelled (`delinquencyHeld`): each
    at its time, or now when it passed during the hold; with the bumps of their containers' roots."""
    records = repository.open_delinquencies(ctx.tenant, account)
    account_root.bump_containers(ctx, uow, account, [record.container for record in records])
    for record in records:
        due.schedule(uow, DueKind.DELINQUENCY_GRACE_END, record.locator, max(record.graceEndAt, ctx.now))
        _rearm_events(ctx, uow, record, CancellationType.DELINQUENCY_HELD)


# --- the grace ends -------------------------------------------------------------------------------------


def grace_ended(
    ctx: CallContext,
    delinquency_locator: str,
    entry_uow: UnitOfWork | None = None,
    bill: Callable[[Transaction], None] | None = None,
) -> str:
    """At the delinquency's grace end: its policies lapse (each a transaction of the plan's lapse type
    effective at the grace start, advanced to `advanceLapseTo`), unless it is settled or the account's
    delinquency is held. Answers the outcome. When the plan advances lapses to issued, the whole lapse is one
    write (`_lapsed_in_one_write`), added to `entry_uow` when given (the grace end's due entry's: committed by
    its pager with the entry's settlement). Else, or when a lapse would not be issued at once, it commits its
    own units of work: first the delinquency `lapseTriggered` (a rerun does not lapse it again), then each
    lapse through the transactions service, then `lapseTransactionCreated` with the lapse transactions (and
    the errors of those that failed), added to `entry_uow` when given. `bill`: how the caller bills each lapse
    of the one write once it committed (billing/job_handlers.py: invoicing sits beside delinquency, not below
    it); without it, or step by step, each issue enqueues its billing job."""
    home = repository.delinquency_home(ctx.tenant, delinquency_locator)
    if home is None:
        return "missing"
    account, container = home
    # the root before the record, which the write is then conditional on (the alias names the container)
    roots = account_root.versions(ctx, account, [container]) if container is not None else None
    record, generation = _with_account(ctx, account, delinquency_locator)
    if record is None:
        return "missing"
    if record.delinquencyState == DelinquencyState.SETTLED and len(record.policy_locators) > MARKS_IN_PAYMENT:
        _unmark_in_steps(ctx, account, record)  # a fleet's, settled by a payment: the marks it left (settle_paid)
        return record.delinquencyState.value
    if record.delinquencyState in OPEN_STATES:
        if roots is None:  # an alias that does not name the container: the record read again after its root
            roots = account_root.versions(ctx, account, [record.container])
            record = repository.delinquency(ctx.tenant, delinquency_locator, account) or record
            if record.delinquencyState not in OPEN_STATES:
                return record.delinquencyState.value
        if entry_uow is not None and record.graceEndAt > ctx.now and len(record.policy_locators) > MARKS_IN_PAYMENT:
            # a fleet's re-opened (or opened) by a reversal, its grace end put due now until its marks are written:
            # the rest (with the references listing it under them: puts, so a re-opened one's are written again)
            committed = _marked_in_steps(ctx, account, record, roots, listed=True)
            account_root.bump_at(ctx, entry_uow, account, _shifted(roots, committed))
            due.schedule(entry_uow, DueKind.DELINQUENCY_GRACE_END, record.locator, record.graceEndAt)
            return "marked"
        uow = wiring.unit_of_work(ctx)
        account_root.bump_at(ctx, uow, account, roots)
        held = billing.held_targets(ctx.tenant, account)  # one read, for delinquency and for invoicing
        if HoldTarget.DELINQUENCY in held:
            uow.add(*repository.grace_job_writes(ctx.tenant, _grace_job(ctx, record, "held")))
            uow.commit()
            return "held"
        if TransactionState(record.settings.advanceLapseTo) == TransactionState.ISSUED:
            billed_in = (
                None if bill is None or HoldTarget.INVOICING in held else partial(_billed_in, ctx, record, generation)
            )
            outcome = _lapsed_in_one_write(ctx, record, roots, entry_uow, bill, billed_in)
            if outcome is not None:
                return outcome
        record = _end(
            ctx,
            uow,
            record,
            DelinquencyState.LAPSE_TRIGGERED,
            None,
            grace_end_settled=entry_uow is not None,
            lapseTransactionEffectiveDate=record.graceStartedAt,
        )
        uow.record_event(LAPSE_EVENT, _event_data(record))
        unmarked = wiring.nested_unit_of_work(uow)
        for policy in record.policy_locators:
            policies.mark_delinquencies(ctx, unmarked, policy, ended=[record.locator])
        if unmarked.remaining >= ENTRY_SETTLEMENT:
            unmarked.commit()
            uow.commit()
        else:  # a fleet's: the record first, then its policies' marks removed in writes of their own
            uow.commit()
            _unmark_in_steps(ctx, account, record)
    elif record.delinquencyState == DelinquencyState.LAPSE_TRIGGERED and len(record.policy_locators) > 1:
        _unmark_in_steps(ctx, account, record)  # a rerun: marks an earlier run did not live to remove
    if record.delinquencyState != DelinquencyState.LAPSE_TRIGGERED:
        return record.delinquencyState.value
    references, errors = [], []
    issued_here = bill is not None and TransactionState(record.settings.advanceLapseTo) == TransactionState.ISSUED
    for reference in record.references:
        if reference.referenceType == "policy" and reference.transactionLocator is None:
            try:
                lapse = _lapse_billed(ctx, record, reference, bill) if issued_here and bill is not None else None
                lapse = lapse or _lapse(ctx, record, reference)
                reference = reference.model_copy(update={"transactionLocator": lapse})
            except DomainError as error:
                errors.append(f"{reference.referenceLocator}: {error.code}: {error.message}")
        references.append(reference)
    uow = entry_uow or wiring.unit_of_work(ctx)
    account_root.bump(ctx, uow, account, [record.container])
    lapsed = record.model_copy(
        update={
            "delinquencyState": DelinquencyState.LAPSE_TRANSACTION_CREATED,
            "references": references,
            "processingErrors": "; ".join(errors) or None,
            "updatedAt": ctx.now,
            "updatedBy": ctx.user_locator,
        }
    )
    lapsed = repository.write_delinquency(uow, ctx.tenant, lapsed)
    uow.add(*repository.grace_job_writes(ctx.tenant, _grace_job(ctx, lapsed, "lapsed", "; ".join(errors) or None)))
    if entry_uow is None:
        uow.commit()
    return "lapsed"


def _unmark_in_steps(ctx: CallContext, account: str, record: Delinquency) -> None:
    """The mark of `record` (lapse triggered, or settled) removed from each of its policies that still has it, as
    many policies to a write as it holds, each write behind the container's billing root (read now). A crash
    between them leaves some policies still marked: the grace end's rerun (its entry is settled with the lapse's
    last write only; a settlement puts it due at once) removes the rest."""
    wanted = record.policy_locators
    marked = [
        policy
        for policy in policies.policies_by_locator(ctx, wanted).values()
        if record.locator in policy.delinquencyLocators
    ]

    def behind_root(_committed: int) -> UnitOfWork:
        write = wiring.unit_of_work(ctx)
        account_root.bump(ctx, write, account, [record.container])
        return write

    def unmark(write: UnitOfWork, policy: Policy) -> None:
        policies.mark_delinquencies(ctx, write, policy.locator, ended=[record.locator])

    _in_writes(marked, behind_root, unmark)


def _with_account(ctx: CallContext, account: str, locator: str) -> tuple[Delinquency | None, DueEntry | None]:
    """The delinquency, read with its account, the configuration's current pointer and the account's invoice
    generation entry (one BatchGetItem; the account and the pointer then in the request's reads, where the
    lapse's plugins and its billing ask for them): the record and the entry (a lapse billed in its write moves
    it)."""
    key = repository.delinquency_key(ctx.tenant, account, locator)
    pointer = configuration.current_pointer_key(ctx)
    generation = due.entry_key(ctx, DueKind.INVOICE_GENERATE, account)
    found = accounts.get_account_with(ctx, account, [key, pointer, generation])[1]
    configuration.remember_current(ctx, found.get(pointer))
    return repository.delinquency_of(ctx.tenant, found.get(key)), due.entry_of(ctx, found.get(generation))


ENTRY_SETTLEMENT = 1
"""What the due pager adds to the entry's unit of work once its handler returned (the entry settled)."""


def _lapsed_in_one_write(
    ctx: CallContext,
    record: Delinquency,
    roots: dict[str, int],
    entry_uow: UnitOfWork | None,
    bill: Callable[[Transaction], None] | None,
    billed_in: BilledIn | None = None,
) -> str | None:
    """`grace_ended`'s lapse when the plan advances it to issued: the delinquency lapsed, each policy's
    cancellation created and issued (its root's delinquency mark with it) and the grace end's settlement
    (`entry_uow`, else the entry's cancellation) in one write, behind the billing root at `roots`: all of
    it commits or none, so no `lapseTriggered` step is written first. None, with nothing added to
    `entry_uow`, when a lapse would not be issued at once or fails: the caller lapses step by step then,
    recording each failure; likewise when the lapses of its policies do not fit in one write. `bill`: run on
    each issued lapse once the write committed (its billing safety net's due entry, in the write, enqueues the
    billing job should it not get there); `billed_in`: how the lapse of a delinquency of one policy is billed in
    the write itself instead (`_billed_in`), when it fits."""
    outer = entry_uow or wiring.unit_of_work(ctx)
    uow = wiring.nested_unit_of_work(outer)
    account_root.bump_at(ctx, uow, record.accountLocator, roots)
    triggered = record.model_copy(
        update={
            "delinquencyState": DelinquencyState.LAPSE_TRIGGERED,
            "updatedAt": ctx.now,
            "updatedBy": ctx.user_locator,
            "lapseTransactionEffectiveDate": record.graceStartedAt,
        }
    )
    if entry_uow is None:
        due.cancel(uow, DueKind.DELINQUENCY_GRACE_END, record.locator)
    uow.record_event(LAPSE_EVENT, _event_data(triggered))
    references, lapsed_policies = [], set()
    billed: list[Transaction] = []  # the lapse billed in the write (`billed_in`), not after it
    lapsing = [r for r in triggered.references if r.referenceType == "policy" and r.transactionLocator is None]
    for reference in triggered.references:
        if reference.referenceType == "policy" and reference.transactionLocator is None:
            billed_here = partial(billed_in, billed) if billed_in is not None and len(lapsing) == 1 else None
            try:
                issued = _lapse_issued(
                    ctx, uow, triggered, reference, billed_by_caller=bill is not None, billed_in=billed_here
                )
            except DomainError:
                return None
            if issued is None or uow.remaining < ENTRY_SETTLEMENT:  # not issued, or more than one write holds
                return None
            if bill is not None and not billed:
                uow.after_commit(partial(bill, issued))
            reference = reference.model_copy(update={"transactionLocator": issued.locator})
            lapsed_policies.add(reference.referenceLocator)
        references.append(reference)
    for policy in triggered.policy_locators:
        if policy not in lapsed_policies:
            policies.mark_delinquencies(ctx, uow, policy, ended=[record.locator])
    lapsed = triggered.model_copy(
        update={"delinquencyState": DelinquencyState.LAPSE_TRANSACTION_CREATED, "references": references}
    )
    lapsed = repository.write_delinquency(uow, ctx.tenant, lapsed)
    uow.add(*repository.grace_job_writes(ctx.tenant, _grace_job(ctx, lapsed, "lapsed")))
    if uow.remaining < ENTRY_SETTLEMENT:  # the lapses of many policies: one write each, step by step
        return None
    uow.commit()
    if entry_uow is None:
        outer.commit()
    return "lapsed"


LAPSE_RECORDS = 8
"""What the write of a lapse holds after its issue and its billing: the delinquency's records, its grace job's,
the entry's settlement (room a billing in the write leaves)."""


BilledIn = Callable[[list[Transaction], UnitOfWork, Transaction, Policy, list[Term]], bool]
"""`_billed_in` given its context, record and generation entry: appends what it billed to its first argument."""


def _billed_in(
    ctx: CallContext,
    record: Delinquency,
    generation: DueEntry | None,
    billed: list[Transaction],
    uow: UnitOfWork,
    transaction: Transaction,
    policy: Policy,
    terms: list[Term],
) -> bool:
    """The lapse's billing in its own write (policies.issue_transaction's `billed_in`), as its billing job and the
    invoice run after it would do it: its lattice and installments, the invoices of those due now (the refund,
    installments written invoiced, as a migration's are) and the account's generation entry moved on to the
    rest (invoices/service.py `invoice_billed_in`); nothing added, and False, when that is not all the account
    has to invoice now, its invoicing plan consolidates on cancellation, the container is not the account or it
    would not fit beside LAPSE_RECORDS: billed after the write then, as before. Appends `transaction` to
    `billed` when it added it."""
    if record.container != record.accountLocator or invoicing.consolidates_on_cancellation(ctx, transaction):
        return False
    account = accounts.get_account(ctx, record.accountLocator)
    built = installments.billed_issue(
        ctx, transaction, policy, terms, account, policies.billing_job_locator(transaction)
    )
    if built is None:
        return False
    work = wiring.nested_unit_of_work(uow)
    # the lattice's own records (itself, its alias, 3 references, its job's 2, its event) and up to 3 for each
    # installment left uninvoiced
    lattice = 8 + 3 * len(built.billed.installments)
    invoiced = invoicing.invoice_billed_in(
        ctx, work, account, built.billed.installments, generation, leave=LAPSE_RECORDS + lattice
    )
    if invoiced is None:
        return False
    installments.add_billed(ctx, work, built, invoiced)
    if work.remaining < LAPSE_RECORDS:
        return False
    work.commit()
    billed.append(transaction)
    return True


def _lapse_issued(
    ctx: CallContext,
    uow: UnitOfWork,
    record: Delinquency,
    reference: DelinquencyReference,
    *,
    billed_by_caller: bool,
    billed_in: policies.BilledIn | None = None,
) -> Transaction | None:
    """The policy's lapse transaction created and issued in `uow` (transactions.create_and_issue_in), the
    delinquency's mark on the policy removed in the same root write; None when it would not be issued."""
    settings = record.settings
    builtin = settings.lapseTransactionType == BUILTIN_LAPSE_TRANSACTION_TYPE
    return transactions.create_and_issue_in(
        ctx,
        uow,
        reference.referenceLocator,
        [ParamsInstruction(action="params", effectiveTime=record.graceStartedAt)],
        route="cancel" if builtin else None,
        transaction_type=None if builtin else settings.lapseTransactionType,
        policy_change=lambda work, policy: policies.delinquencies_marked(ctx, work, policy, ended=[record.locator]),
        billed_by_caller=billed_by_caller,
        billed_in=billed_in,
    )


def _lapse_billed(
    ctx: CallContext, record: Delinquency, reference: DelinquencyReference, bill: Callable[[Transaction], None]
) -> str | None:
    """The policy's lapse created and issued in a write of its own (a fleet's lapses, step by step), billed by the
    caller's `bill` once it committed, as `_lapsed_in_one_write` bills them: its installments written and the
    account's invoice generation entry brought forward, so the due run invoices the refunds of every lapse of the
    delinquency together after them (one invoice per billing container and due time, DECISIONS "Billing"), not one
    a policy by a billing job each. Its locator; None when it would not be issued at once (`_lapse` then)."""
    uow = wiring.unit_of_work(ctx)
    issued = _lapse_issued(ctx, uow, record, reference, billed_by_caller=True)
    if issued is None:
        return None
    uow.after_commit(partial(bill, issued))
    uow.commit()
    return issued.locator


def _lapse(ctx: CallContext, record: Delinquency, reference: DelinquencyReference) -> str:
    """The policy's lapse transaction, created and advanced as the plan says (on the policy as its creation
    left it: not read again); its locator."""
    settings = record.settings
    instruction = ParamsInstruction(action="params", effectiveTime=record.graceStartedAt)
    builtin = settings.lapseTransactionType == BUILTIN_LAPSE_TRANSACTION_TYPE
    target = TransactionState(settings.advanceLapseTo)
    draft, advanced = transactions.create_and_advance(
        ctx,
        reference.referenceLocator,
        [instruction],
        target,
        route="cancel" if builtin else None,
        transaction_type=None if builtin else settings.lapseTransactionType,
    )
    if advanced is not draft and advanced.transactionState != settings.advanceLapseTo:  # a draft stays one
        raise codes.DELINQUENCY_INVALID_STATE(
            f"lapse transaction {draft.locator} stopped at {advanced.transactionState}, not {settings.advanceLapseTo}"
        )
    return draft.locator


def _grace_job(ctx: CallContext, record: Delinquency, outcome: str, errors: str | None = None) -> GraceJob:
    return GraceJob(
        locator=new_locator(),
        delinquencyLocator=record.locator,
        jobStatus=JobStatus.FAILED if errors else JobStatus.FINISHED,
        outcome=outcome,
        processingErrors=errors,
        createdAt=ctx.now,
        updatedAt=ctx.now,
    )


# --- delinquency events ---------------------------------------------------------------------------------


def event_due(ctx: CallContext, uow: UnitOfWork, event_locator: str) -> str:
    """At an event's trigger time, in `uow` (the due entry's): triggered while its delinquency is
    unsettled (in grace, or lapsed) and not held; cancelled (`delinquencyHeld`) when held. Answers the
    outcome."""
    event = repository.delinquency_event(ctx.tenant, event_locator)
    if event is None or event.delinquencyEventState != DelinquencyEventState.ACTIVE:
        return "none"
    account = event.accountLocator
    account_root.bump(ctx, uow, account, [event.container])
    record = repository.delinquency(ctx.tenant, event.delinquencyLocator)
    if record is None or record.delinquencyState == DelinquencyState.SETTLED:
        return "none"
    if billing.is_held(ctx.tenant, account, HoldTarget.DELINQUENCY):
        _cancel_events(ctx, uow, record, CancellationType.DELINQUENCY_HELD)
        return "held"
    triggered = event.model_copy(
        update={
            "delinquencyEventState": DelinquencyEventState.TRIGGERED,
            "triggeredAt": ctx.now,
            "updatedAt": ctx.now,
            "updatedBy": ctx.user_locator,
        }
    )
    uow.add(*repository.event_writes(ctx.tenant, triggered))
    job = next(
        (
            j
            for j in repository.all_event_jobs(ctx.tenant, record.locator)
            if j.delinquencyEventLocator == event.locator
        ),
        None,
    )
    if job is not None:
        uow.add(
            *repository.event_job_writes(
                ctx.tenant,
                job.model_copy(
                    update={
                        "jobStatus": JobStatus.FINISHED,
                        "updatedDelinquencyEventLocators": [event.locator],
                        "updatedAt": ctx.now,
                    }
                ),
            )
        )
    uow.record_event(f"{EVENT_EVENT}.trigger", _event_data(record, event))
    return "triggered"


# --- updates ------------------------------------------------------------------------------------------


def update_delinquency(ctx: CallContext, locator: str, grace_end_at: datetime | None) -> Delinquency:
    """Moves the grace end of a delinquency in grace (to a moment ahead); its events keep their times."""
    current = delinquency(ctx, locator)
    if grace_end_at is None:
        return current
    account = current.accountLocator
    uow = account_root.open_write(ctx, account, [current.container])
    current = delinquency(ctx, locator)
    if current.delinquencyState not in OPEN_STATES:
        raise codes.DELINQUENCY_INVALID_STATE(f"Delinquency {locator} is {current.delinquencyState.value}")
    if grace_end_at <= ctx.now or grace_end_at <= current.graceStartedAt:
        raise codes.DELINQUENCY_INVALID_TIME(
            "The grace end must be after now and after the grace start",
            field_errors=[FieldError("graceEndAt", "must lie ahead")],
        )
    changed = current.model_copy(
        update={"graceEndAt": grace_end_at, "updatedAt": ctx.now, "updatedBy": ctx.user_locator}
    )
    changed = repository.write_delinquency(uow, ctx.tenant, changed)
    due.schedule(uow, DueKind.DELINQUENCY_GRACE_END, locator, grace_end_at)
    uow.record_event(UPDATE_EVENT, _event_data(changed))
    uow.commit()
    return changed


def update_event(
    ctx: CallContext, locator: str, trigger_time: datetime | None, state: DelinquencyEventState | None
) -> DelinquencyEvent:
    """An active event moved to another trigger time ahead, or cancelled (`state: cancelled`); a
    triggered or cancelled one changes no more."""
    current = delinquency_event(ctx, locator)
    if trigger_time is None and state in (None, DelinquencyEventState.ACTIVE):
        return current
    account = current.accountLocator
    uow = account_root.open_write(ctx, account, [current.container])
    current = delinquency_event(ctx, locator)
    if current.delinquencyEventState != DelinquencyEventState.ACTIVE:
        raise codes.DELINQUENCY_INVALID_STATE(f"Delinquency event {locator} is {current.delinquencyEventState.value}")
    if state not in (None, DelinquencyEventState.ACTIVE, DelinquencyEventState.CANCELLED):
        raise codes.DELINQUENCY_INVALID_STATE(
            "An event is triggered by its time, not by a request",
            field_errors=[FieldError("delinquencyEventState", "active or cancelled")],
        )
    if trigger_time is not None and trigger_time <= ctx.now:
        raise codes.DELINQUENCY_INVALID_TIME(
            "The trigger time must lie ahead", field_errors=[FieldError("triggerTime", "must lie ahead")]
        )
    job = next(
        (
            j
            for j in repository.all_event_jobs(ctx.tenant, current.delinquencyLocator)
            if j.delinquencyEventLocator == locator
        ),
        None,
    )
    record = delinquency(ctx, current.delinquencyLocator)
    changed = current.model_copy(update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator})
    if state == DelinquencyEventState.CANCELLED:
        changed.delinquencyEventState = DelinquencyEventState.CANCELLED
        due.cancel(uow, DueKind.DELINQUENCY_EVENT, locator)
        if job is not None:
            uow.add(
                *repository.event_job_writes(
                    ctx.tenant,
                    job.model_copy(
                        update={
                            "jobStatus": JobStatus.FINISHED,
                            "cancelled": True,
                            "cancellationType": CancellationType.CANCELLATION_REQUESTED,
                            "updatedAt": ctx.now,
                        }
                    ),
                )
            )
        uow.record_event(f"{EVENT_EVENT}.cancel", _event_data(record, changed))
    elif trigger_time is not None:
        changed.triggerTime = trigger_time
        due.schedule(uow, DueKind.DELINQUENCY_EVENT, locator, trigger_time)
        if job is not None:
            uow.add(
                *repository.event_job_writes(
                    ctx.tenant, job.model_copy(update={"triggerTime": trigger_time, "updatedAt": ctx.now})
                )
            )
        uow.record_event(f"{EVENT_EVENT}.activate", _event_data(record, changed))
    uow.add(*repository.event_writes(ctx.tenant, changed))
    uow.commit()
    return changed
