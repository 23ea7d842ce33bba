"""Invoices (DECISIONS.md "Billing"): installments become invoices at their generate time (generator.py
groups them, fees.py adds the invoice fee), numbered as the account type says; an invoice is settled
into the credit balance when it owes nothing; early invoicing invoices installments before their time.
Every write carries the bumps of the billing roots of the containers it changes (account_root.py)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import Account
from chalicelib.billing import account_root, ledger, repository
from chalicelib.billing.installments import repository as installment_repository
from chalicelib.billing.installments.models import ChargeInvoicing, Installment, InstallmentLattice
from chalicelib.billing.invoices import consolidation, fees, generator
from chalicelib.billing.invoices import repository as invoice_repository
from chalicelib.billing.invoices.models import Application, Invoice, InvoiceGenerationJob, InvoiceState, InvoicingJob
from chalicelib.billing.models import HoldTarget, JobStatus, SourceType
from chalicelib.billing.payments import allocation as payments
from chalicelib.configuration import numbers
from chalicelib.configuration import service as configuration
from chalicelib.configuration.billing_plans import (
    CancellationConsolidation,
    GroupingMatch,
    InstallmentGrouping,
    InvoiceFeeHandling,
    InvoicingPlan,
)
from chalicelib.core import codes, money
from chalicelib.core.clock import isoformat, parse_datetime
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError, FieldError
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.documents import service as documents
from chalicelib.policies import service as policies
from chalicelib.policies.models import Transaction, TransactionCategory
from chalicelib.runtime import due, jobs, observability, wiring
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.wiring import UnitOfWork

INVOICE_ENTITY = "invoice"


INSTALLMENTS_PER_INVOICE = 40
"""An invoice and the installments it invoices are one write (2 actions each, and 2 for each policy) up to
this many installments when it holds them; a larger one (a fleet's: one invoice per container and due time,
whatever its size) is staged over several writes (`_stage_invoice`)."""


def consolidate_on_cancellation(ctx: CallContext, transaction: Transaction) -> list[Invoice]:
    """After a cancellation is billed: its policy's uninvoiced installments on one invoice now, as the
    account's invoicing plan's `consolidateInvoicesOnCancellation` says (invoices/consolidation.py)."""
    found = _consolidating(ctx, transaction)
    if found is None:
        return []
    account, plan = found
    uninvoiced = [
        i
        for i in installment_repository.all_installments_of(ctx.tenant, "policy", transaction.policyLocator)
        if i.invoiceLocator is None
    ]
    chosen = consolidation.consolidated(
        uninvoiced, plan.consolidate_invoices_on_cancellation, transaction.effectiveTime, ctx.now
    )
    return _invoice(ctx, account, chosen, riders=False, grouping=InstallmentGrouping(matching=GroupingMatch.ALL))


def consolidates_on_cancellation(ctx: CallContext, transaction: Transaction) -> bool:
    """Whether billing the transaction is followed by `consolidate_on_cancellation`'s invoice: a cancellation
    whose account's invoicing plan consolidates."""
    return _consolidating(ctx, transaction) is not None


def _consolidating(ctx: CallContext, transaction: Transaction) -> tuple[Account, InvoicingPlan] | None:
    """The account and its invoicing plan, when the transaction is a cancellation the plan consolidates."""
    if transaction.transactionCategory != TransactionCategory.CANCELLATION:
        return None
    account = accounts.get_account(ctx, policies.get_policy(ctx, transaction.policyLocator).accountLocator)
    plan = configuration.billing_plans(ctx).invoicing_plan(account.invoicingPlanName)
    if plan is None or plan.consolidate_invoices_on_cancellation == CancellationConsolidation.NONE:
        return None
    return account, plan


GENERATION_WRITES = 4
"""What a generation adds to the write of its last invoice besides the invoice: the generation job, the excess
credit job, and the due entry's settlement or move (when the unit of work is the entry's)."""


def generate_invoices(
    ctx: CallContext,
    account_locator: str,
    up_to: datetime | None = None,
    *,
    uow: UnitOfWork | None = None,
    roots: dict[str, int] | None = None,
) -> list[Invoice]:
    """Invoice the account's installments whose generate time is at most `up_to` (default: now), at
    `ctx.now`. A second run at the same time finds nothing left to invoice and creates nothing. The last
    invoice and the generation's record are one write (one for the common single invoice) when it has room;
    with `uow` (a due entry's) they are added to it for the caller to commit, and the rest commits here. The
    account, its billing root and the configuration's pointer are one read, none when the caller read them
    (`roots`: versions of billing roots of the account, its own among them, as the caller's reads and
    writes left them; the account and the pointer in the request's reads)."""
    if roots is not None and account_locator in roots:
        account, root = accounts.get_account(ctx, account_locator), roots
    else:
        account, root = _account_and_root(ctx, account_locator)
    if repository.is_held(ctx.tenant, account.locator, HoldTarget.INVOICING):
        return []  # releasing the hold makes the account's invoice generation due again
    due_now = installment_repository.uninvoiced(ctx.tenant, account_locator, isoformat(up_to or ctx.now))
    invoices, joined = _invoice_into(ctx, account, due_now, uow or wiring.unit_of_work(ctx), root=root)
    if invoices:
        write = joined or wiring.unit_of_work(ctx)
        _add_generation_records(ctx, write, account, invoices)
        if write is not uow:
            write.commit()
    return invoices


def _add_generation_records(ctx: CallContext, uow: UnitOfWork, account: Account, invoices: list[Invoice]) -> None:
    """What a generation of `invoices` adds besides them (GENERATION_WRITES): its record and, for each of their
    currencies, the account's excess-credit job (its credit balance applied to them)."""
    invoice_repository.add_generation_job(
        uow,
        ctx.tenant,
        InvoiceGenerationJob(
            locator=new_locator(),
            accountLocator=account.locator,
            generateTime=ctx.now,
            invoiceLocators=[i.locator for i in invoices],
            createdAt=ctx.now,
            createdBy=ctx.user_locator,
            completedAt=ctx.now,
        ),
    )
    for currency in sorted({i.currency for i in invoices}):
        ledger.excess_credit_job(ctx, uow, account, currency, apply_to_invoices=True)


def invoice_billed_in(
    ctx: CallContext,
    uow: UnitOfWork,
    account: Account,
    billed: list[Installment],
    generation: due.DueEntry | None,
    *,
    leave: int,
) -> set[str] | None:
    """The account's invoice generation of a write that bills installments (`billed`, new in it: an issue's
    lattice) when they are all the account has to invoice now: the invoices of those due now (with the
    account's pending riders, as a run would invoice them, written new and invoiced: answered) and the
    generation's records added to `uow` (which bumps the account's root, the container of them all), the account's
    generation entry (`generation`, as the caller read it) brought forward to the earliest of them left
    uninvoiced; so no run of the entry follows the write. The caller writes the installments not answered.
    None, adding nothing, when a run must do it: the entry is due by now (what it finds besides these), a
    container is not the account, an invoice would not be one write, or the write would not leave `leave`
    actions (the caller's). The caller has checked the account's invoicing hold."""
    if generation is not None and generation.due_at <= ctx.now:
        return None
    if any(i.billingContainer != account.locator for i in billed):
        return None
    due_now = [i for i in billed if i.generateTime <= ctx.now]
    later = [i for i in billed if i.generateTime > ctx.now]
    work = wiring.nested_unit_of_work(uow)
    invoiced: set[str] = set()
    if due_now:
        plan = configuration.billing_plans(ctx).invoicing_plan(account.invoicingPlanName)
        riders = [
            *installment_repository.pending_riders(ctx.tenant, account.locator),
            *(i for i in later if i.invoicing == ChargeInvoicing.NEXT),
        ]
        groups = generator.groups(
            due_now, ctx.now, plan.installment_grouping if plan else InstallmentGrouping(), riders
        )
        besides = work.capacity - 1 - work.remaining + leave + GENERATION_WRITES
        for group in groups:
            if len(group) > INSTALLMENTS_PER_INVOICE or not invoice_repository.fits_one_invoice_write(
                group, besides=besides
            ):
                return None  # before any number is reserved
            besides += invoice_repository.invoice_write_size(group)
        model = configuration.current_model(ctx, resolved=True)[1]
        numbering = invoice_numbering_plan(ctx, account)
        new = {i.locator for i in billed}
        own_fees: dict[str, Decimal | None] = {}
        invoices = []
        for group in groups:
            invoice = generator.invoice(group, ctx.now, ctx.user_locator, lambda _seed: new_locator())
            if plan is not None and plan.invoice_fee_handling != InvoiceFeeHandling.WAIVE:
                for policy in invoice.policyLocators:
                    if policy not in own_fees:
                        own_fees[policy] = policies.get_policy(ctx, policy).invoiceFeeAmount
                amount = fees.fee(plan, invoice.currency, [own_fees[p] for p in invoice.policyLocators])
                invoice = fees.with_fee(invoice, amount, new_locator())
            _add_generated(ctx, work, model, numbering, invoice, group, account, new)
            invoices.append(invoice)
            invoiced.update(i.locator for i in group if i.locator in new)
        _add_generation_records(ctx, work, account, invoices)
    left = [i.generateTime for i in later if i.locator not in invoiced]
    if left:
        due.bring_forward_from(work, generation, DueKind.INVOICE_GENERATE, account.locator, min(left))
    if work.remaining < leave:
        return None
    work.commit()
    return invoiced


def _add_generated(
    ctx: CallContext,
    uow: UnitOfWork,
    model: dict[str, Any],
    numbering: str | None,
    invoice: Invoice,
    invoiced: list[Installment],
    account: Account,
    new: Collection[str],
) -> None:
    """`_write_invoice` without its roots' bumps (the caller's write bumps the account's, the container)."""
    credit = payments.settle_into_credit(invoice, ctx.now) if invoice.totalAmount <= 0 else None
    add_invoice(ctx, uow, model, numbering, invoice, invoiced, account, new=new)
    if credit is not None:
        _settled_as_written(ctx, uow, invoice, credit)


def next_generate_time(ctx: CallContext, account_locator: str) -> datetime | None:
    """When the account's next uninvoiced installment is to be generated, after now."""
    found = installment_repository.next_uninvoiced_time(ctx.tenant, account_locator, isoformat(ctx.now))
    return parse_datetime(found) if found else None


def generation_jobs(ctx: CallContext, account_locator: str, page: PageRequest) -> Page[InvoiceGenerationJob]:
    account = accounts.get_account(ctx, account_locator)
    return invoice_repository.generation_jobs(ctx.tenant, account.locator, page)


def _invoice(
    ctx: CallContext,
    account: Account,
    due: list[Installment],
    *,
    riders: bool = True,
    grouping: InstallmentGrouping | None = None,
) -> list[Invoice]:
    """Invoice `due` (uninvoiced installments of the account) at `ctx.now`, grouped as the account's
    invoicing plan says (or by `grouping`), with the account's pending `next` installments riding on
    them (`riders`); each invoice committed."""
    return _invoice_into(ctx, account, due, None, riders=riders, grouping=grouping)[0]


def _account_and_root(ctx: CallContext, account_locator: str) -> tuple[Account, dict[str, int]]:
    """The account and the version of its own billing root, read with the configuration's current pointer (one
    BatchGetItem; the pointer then is the request's): what an invoice run reads first."""
    pointer = configuration.current_pointer_key(ctx)
    root = repository.root_record_key(ctx.tenant, account_locator, account_locator)
    account, found = accounts.get_account_with(ctx, account_locator, [pointer, root])
    configuration.remember_current(ctx, found.get(pointer))
    return account, {account.locator: repository.root_version_of(found.get(root))}


def _invoice_into(
    ctx: CallContext,
    account: Account,
    due: list[Installment],
    last: UnitOfWork | None,
    *,
    riders: bool = True,
    grouping: InstallmentGrouping | None = None,
    root: dict[str, int] | None = None,
) -> tuple[list[Invoice], UnitOfWork | None]:
    """`_invoice`, the last invoice added to `last` (not committed) when `last` holds it and
    GENERATION_WRITES more: the invoices, and `last` when it got the last invoice (else None). `root`: the
    version of the account's root as the caller read it (before the installments)."""
    if not due:
        return [], None
    account_locator = account.locator
    model = configuration.current_model(ctx, resolved=True)[1]
    numbering = invoice_numbering_plan(ctx, account)
    # the account's root too: an invoice that puts credit on the balance bumps it (one call all the same)
    versions = account_root.versions(
        ctx, account_locator, [account_locator, *sorted({i.billingContainer for i in due})], root
    )
    plan = configuration.billing_plans(ctx).invoicing_plan(account.invoicingPlanName)
    taken = {i.locator for i in due}
    waiting = (
        [i for i in installment_repository.pending_riders(ctx.tenant, account_locator) if i.locator not in taken]
        if riders
        else []
    )
    own_fees: dict[str, Decimal | None] = {}
    groups = generator.groups(
        due, ctx.now, grouping or (plan.installment_grouping if plan else InstallmentGrouping()), waiting
    )
    if any(not _fits_one_write(group) for group in groups):
        _prefetch_policies(ctx, plan, groups, own_fees)
    created, joined = [], None
    for index, group in enumerate(groups):
        invoice = generator.invoice(group, ctx.now, ctx.user_locator, lambda _seed: new_locator())
        if plan is not None and plan.invoice_fee_handling != InvoiceFeeHandling.WAIVE:
            for policy in invoice.policyLocators:
                if policy not in own_fees:
                    own_fees[policy] = policies.get_policy(ctx, policy).invoiceFeeAmount
            amount = fees.fee(plan, invoice.currency, [own_fees[p] for p in invoice.policyLocators])
            invoice = fees.with_fee(invoice, amount, new_locator())
        staged = not _fits_one_write(group)
        if (
            last is not None
            and index == len(groups) - 1
            and (
                last.remaining >= invoice_repository.INVOICE_WRITE_RECORDS + GENERATION_WRITES
                if staged
                else invoice_repository.fits_one_invoice_write(
                    group, besides=last.capacity - 1 - last.remaining + GENERATION_WRITES
                )
            )
        ):
            joined = last
        created.append(_write_invoice(ctx, model, numbering, invoice, group, versions, account, joined, staged=staged))
    return created, joined


def _fits_one_write(group: list[Installment]) -> bool:
    """Whether the invoice of `group` and its installments are one TransactWriteItems (else it is staged)."""
    return len(group) <= INSTALLMENTS_PER_INVOICE and invoice_repository.fits_one_invoice_write(group)


def _prefetch_policies(
    ctx: CallContext, plan: InvoicingPlan | None, groups: list[list[Installment]], own_fees: dict[str, Decimal | None]
) -> None:
    """The invoice fee amounts of a fleet's policies, read together (one BatchGetItem per hundred) instead of
    one by one, when the plan charges a fee."""
    if plan is None or plan.invoice_fee_handling == InvoiceFeeHandling.WAIVE:
        return
    wanted = sorted({i.policyLocator for group in groups for i in group} - own_fees.keys())
    for locator, found in policies.policies_by_locator(ctx, wanted).items():
        own_fees[locator] = found.invoiceFeeAmount


def _settled_as_written(ctx: CallContext, uow: UnitOfWork, invoice: Invoice, credit: Decimal) -> None:
    """A zero or negative invoice is settled by its own write: its settle event, and what it owes the account
    on the credit balance."""
    uow.record_event("billing.invoice.settle", _invoice_event(invoice))
    if credit:
        ledger.move_credit(
            ctx,
            uow,
            invoice.accountLocator,
            invoice.currency,
            credit,
            "negative invoice",
            SourceType.CREDIT_BALANCE,
            invoice.locator,
        )


def _write_invoice(
    ctx: CallContext,
    model: dict[str, Any],
    numbering: str | None,
    invoice: Invoice,
    invoiced: list[Installment],
    versions: dict[str, int],
    account: Account,
    into: UnitOfWork | None = None,
    *,
    staged: bool = False,
) -> Invoice:
    """Write the invoice with the bump of its container's root (and of the account's when it puts credit on
    the balance) from `versions`, which then holds their versions after the commit; with `into`, add it there
    for the caller to commit (no later invoice of the run reads `versions`). `staged`: more than one write
    holds (a fleet's invoice, `_stage_invoice`)."""
    uow = into or wiring.unit_of_work(ctx)
    credit = None
    if invoice.totalAmount <= 0:
        credit = payments.settle_into_credit(invoice, ctx.now)
    bumped = {root: versions[root] for root in (invoice.billingContainer, *([account.locator] if credit else []))}
    account_root.bump_at(ctx, uow, account.locator, bumped)
    if staged:
        _stage_invoice(ctx, uow, invoice, invoiced)
    add_invoice(ctx, uow, model, numbering, invoice, invoiced, account, staged=staged)
    if credit is not None:
        _settled_as_written(ctx, uow, invoice, credit)
    if into is None:
        uow.commit()
    versions.update({root: version + 1 for root, version in bumped.items()})
    return invoice


def _stage_invoice(ctx: CallContext, uow: UnitOfWork, invoice: Invoice, invoiced: list[Installment]) -> None:
    """A fleet's invoice, more than one TransactWriteItems holds: what grows with it is written first under a
    new token, unseen by every reader (billing/repository.py `visible`) until `uow`'s write, which bumps the
    billing root, commits the token with the invoice's record: each installment's rewrite staged beside it and
    its uninvoiced marker's delete staged on it (on condition that the marker stands), the invoice's item pages
    (invoices/repository.py `write_pages`: outside transactions, a new set unseen until the record names it)
    and its references under its policies and quotes (a list finds no record behind a
    reference until then). A run that loses the root's race fails with 409 there and is retried; what it staged
    stays unseen. After the commit the installments are rolled forward, as many to a write as it holds.

    A run that fails (a staged write's condition: another run invoiced an installment meanwhile; or its final write
    on the root: another billing write of the account, an overlapping run's commit) removes the records it wrote
    that nothing else names, its item pages and references (`invoice_repository.discard_staged`), before the error
    goes on. What it staged on shared records (an installment's `staged` rewrite, a marker's `stagedDelete`) is
    left: no reader shows it (its token is never committed), and the next staging of those records overwrites it
    and its roll forward removes it (the installment rewritten whole, the marker deleted)."""
    token = new_locator()
    for installment in invoiced:
        installment.updatedAt, installment.updatedBy = ctx.now, ctx.user_locator
    written = invoice_repository.staged_keys(ctx.tenant, invoice)
    try:
        invoice_repository.write_pages(ctx.tenant, invoice)
        repository.write_staged(
            ctx.tenant,
            [
                *(
                    installment_repository.staged_invoiced_installment_writes(ctx.tenant, installment, token)
                    for installment in invoiced
                ),
                *([write] for write in invoice_repository.staged_invoice_writes(ctx.tenant, invoice)),
            ],
        )
    except DomainError as error:
        if error.status < 500:  # surely not applied (a 5xx: perhaps it was, and the entry's retry goes on)
            invoice_repository.discard_staged(ctx.tenant, written)
        raise
    uow.after_failure(lambda: invoice_repository.discard_staged(ctx.tenant, written))
    uow.add(repository.staged_commit_write(ctx.tenant, invoice.accountLocator, token))

    def roll_forward() -> None:
        repository.write_staged(
            ctx.tenant,
            [installment_repository.rolled_invoiced_installment_writes(ctx.tenant, i) for i in invoiced],
        )

    uow.after_commit(roll_forward)


def add_invoice(
    ctx: CallContext,
    uow: UnitOfWork,
    model: dict[str, Any],
    numbering: str | None,
    invoice: Invoice,
    invoiced: list[Installment],
    account: Account,
    *,
    migrated: bool = False,
    new: Collection[str] = (),
    staged: bool = False,
) -> None:
    """Add to `uow` (which bumps the roots) a new invoice of the `invoiced` installments: its number, its
    due and autopay entries (an owed invoice has neither), its event and its document. `migrated`: the
    installments are new too, a migration's (written with it, never uninvoiced); `new`: those of them that
    are (billed in the same write, `invoice_billed_in`); `staged`: its installments, pages and references are
    written already (`_stage_invoice`)."""
    if numbering:
        invoice.invoiceNumber = numbers.reserve_number(ctx, uow, model, numbering, INVOICE_ENTITY, invoice.locator)
    for installment in [] if staged else invoiced:
        installment.updatedAt, installment.updatedBy = ctx.now, ctx.user_locator
        uow.add(
            *(
                installment_repository.migrated_installment_writes
                if migrated or installment.locator in new
                else installment_repository.invoiced_installment_writes
            )(ctx.tenant, installment)
        )
    uow.add(*invoice_repository.invoice_writes(ctx.tenant, invoice, staged=staged))
    if invoice.invoiceState == InvoiceState.OPEN and invoice.owedFor is None:
        due.schedule(uow, DueKind.INVOICE_DUE, invoice.locator, invoice.dueTime)  # unsettled then: delinquent
    if not invoice.suppressAutopay:
        arm_autopay(uow, invoice)
    uow.record_event("billing.invoice.generate", {**_invoice_event(invoice), "generateTime": isoformat(ctx.now)})
    uow.after_commit(
        lambda: observability.count(
            "InvoicesGenerated", {"currency": invoice.currency}, invoice_locator=invoice.locator
        )
    )
    documents.add_invoice_document(ctx, uow, model, account.type, invoice.locator, _rendering_data(invoice, account))


@dataclass
class MigratedInvoice:
    """An invoice a migration brings (chalicelib/migration), of its installments, with the source's times."""

    seed: str
    """What its locators derive from: the same in every run of the migration's account."""
    installments: list[Installment]
    startTime: datetime
    endTime: datetime
    dueTime: datetime
    generateTime: datetime
    timezone: str | None = None
    discarded: bool = False
    """The source discarded it: it is migrated discarded (models.InvoiceState.DISCARDED)."""


def migrated_invoices(ctx: CallContext, given: list[MigratedInvoice]) -> list[Invoice]:
    """The invoices of a migration's installments (each installment gets its invoice's locator), open, with
    the source's times (settled when one totals zero, discarded as the source's, owing nothing); payments
    settle them before they are written."""
    built = []
    for each in given:

        def locate(seed: str, at: MigratedInvoice = each) -> str:
            return derived_locator(at.generateTime, f"{at.seed}:{seed}")

        invoice = generator.invoice(each.installments, each.generateTime, ctx.user_locator, locate).model_copy(
            update={
                "startTime": each.startTime,
                "endTime": each.endTime,
                "dueTime": each.dueTime,
                "generateTime": each.generateTime,
                "generatedTime": each.generateTime,
                "autopayTime": each.dueTime,
                "suppressAutopay": True,
                "createdAt": each.generateTime,
            }
        )
        if each.timezone:
            invoice.timezone = each.timezone
        if each.discarded:
            invoice.invoiceState, invoice.totalRemainingAmount = InvoiceState.DISCARDED, Decimal(0)
            for item in invoice.invoiceItems:
                item.remainingAmount = Decimal(0)
        elif invoice.totalAmount == 0:
            invoice.invoiceState, invoice.settledTime = InvoiceState.SETTLED, each.generateTime
        built.append(invoice)
    return built


def add_migrated(
    ctx: CallContext,
    uow: UnitOfWork,
    account: Account,
    lattices: list[tuple[InstallmentLattice, list[Installment]]],
    invoices: list[tuple[Invoice, list[Installment]]],
    containers: Iterable[str] = (),
    *,
    new_roots: bool = False,
) -> dict[str, int]:
    """Add to `uow` a migration's billing records of the account: the lattices of its transactions with their
    installments (which billing then does not build), each on one of `invoices` (migrated_invoices), due
    (when open) and numbered as billing's own, and the bumps of the roots of the account, of their
    containers and of the other `containers` the migration changes; answers the versions the roots had.
    `new_roots`: every one of those roots is new (the account is written in the same write): none is read, each
    is put on condition that it does not exist."""
    model = configuration.current_model(ctx, resolved=True)[1]
    numbering = invoice_numbering_plan(ctx, account)
    roots = sorted({account.locator, *(lattice.billingContainer for lattice, _ in lattices), *containers})
    versions = account_root.versions(ctx, account.locator, roots, dict.fromkeys(roots, 0) if new_roots else None)
    account_root.bump_at(ctx, uow, account.locator, versions)
    for lattice, installments in lattices:
        installment_repository.add_lattice(
            uow, ctx.tenant, lattice, [installment.locator for installment in installments]
        )
    for invoice, invoiced in invoices:
        add_invoice(ctx, uow, model, numbering, invoice, invoiced, account, migrated=True)
    return versions


def _rendering_data(invoice: Invoice, account: Account) -> dict[str, Any]:
    """The invoice as its documents render it (documents adds the platform's summary shape)."""
    return {
        **invoice.model_dump(exclude_none=True),
        "kind": "invoice",
        "account": {"locator": account.locator, "type": account.type, "data": account.data},
    }


def invoice_rendering_data(ctx: CallContext, locator: str) -> dict[str, Any]:
    """What documents' ad-hoc render of the invoice reads (wired in app.py: documents is below billing)."""
    found = invoice(ctx, locator)
    return _rendering_data(found, accounts.get_account(ctx, found.accountLocator))


def _invoice_event(invoice: Invoice) -> dict[str, Any]:
    return {
        "invoiceLocator": invoice.locator,
        "accountLocator": invoice.accountLocator,
        "invoiceType": invoice.invoiceType,
        "policyLocators": {"listCompleted": True, "items": invoice.policyLocators},
    }


def invoice(ctx: CallContext, locator: str) -> Invoice:
    found = repository.get(ctx.tenant, "invoice", locator, Invoice)
    if found is None:
        raise codes.not_found("invoice", locator)
    return found


def invoices_of_account(ctx: CallContext, account: str, locators: Iterable[str]) -> list[Invoice]:
    """The account's invoices among `locators` (others are not the account's: left out)."""
    return repository.get_many(ctx.tenant, account, "invoice", locators, Invoice)


def invoice_with_installments(ctx: CallContext, locator: str) -> tuple[Invoice, list[Installment]]:
    found = invoice(ctx, locator)
    return found, repository.get_many(
        ctx.tenant, found.accountLocator, "installment", found.installmentLocators, Installment
    )


def invoices_of(
    ctx: CallContext, owner_kind: str, owner: str, page: PageRequest, *, include_zero: bool
) -> Page[Invoice]:
    if owner_kind == "account":
        return invoice_repository.account_invoices(ctx.tenant, owner, page, include_zero=include_zero)
    kind = "INV" if include_zero else invoice_repository.NONZERO_INVOICES
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


def arm_autopay(uow: UnitOfWork, record: Invoice) -> None:
    """The invoice's autopay entry at its autopay time (billing/payments/autopay.py runs it), or none when autopay
    is suppressed or nothing is owed."""
    if (
        record.suppressAutopay
        or record.autopayTime is None
        or record.invoiceState != InvoiceState.OPEN
        or record.totalRemainingAmount <= 0
    ):
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
    if current.invoiceState == InvoiceState.DISCARDED:
        raise codes.INVOICE_DISCARDED(f"Invoice {locator} is discarded: it owes nothing to settle")
    if current.totalRemainingAmount > 0:
        left = money.round_money(current.totalRemainingAmount, current.currency)
        raise codes.INVOICE_AMOUNT_REMAINING(
            f"Invoice {locator} has {left} {current.currency} remaining: only an invoice of zero or negative "
            f"total is settled; pay it, or write the remainder off (PATCH /invoices/{locator}/writeOff)"
        )
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
    plan = invoice_numbering_plan(ctx, account)
    if plan is None:
        raise codes.NO_NUMBERING_PLAN["invoice"](f"Account type {account.type} has no invoiceNumberingPlan")
    uow = wiring.unit_of_work(ctx)
    assigned = numbers.renumber(
        ctx, uow, INVOICE_ENTITY, locator, current.invoiceNumber, numbers.NextOfPlan(model, plan)
    )
    return _save_invoice(ctx, current, current.model_copy(update={"invoiceNumber": assigned}), [], uow=uow)


def _save_invoice(
    ctx: CallContext,
    current: Invoice,
    changed: Invoice,
    events: list[tuple[str, dict[str, Any]]],
    *,
    credit: Decimal = Decimal(0),
    uow: UnitOfWork | None = None,
) -> Invoice:
    uow = uow or wiring.unit_of_work(ctx)
    account = current.accountLocator
    roots = [current.billingContainer, *([account] if credit else [])]
    account_root.bump(ctx, uow, account, roots)
    uow.add(*invoice_repository.invoice_update_writes(ctx.tenant, changed, current.invoiceState == InvoiceState.OPEN))
    if credit:
        ledger.move_credit(
            ctx,
            uow,
            changed.accountLocator,
            changed.currency,
            credit,
            "settled invoice",
            SourceType.CREDIT_BALANCE,
            changed.locator,
        )
    for event_type, data in events:
        uow.record_event(event_type, data)
    if not events:
        uow.record_event("billing.invoice.update", _invoice_event(changed))
    uow.commit()
    return invoice_repository.as_written(changed).model_copy(update={"version": changed.version + 1})


def applications_of_invoice(ctx: CallContext, locator: str, *, include_reversed: bool) -> list[Application]:
    found = invoice(ctx, locator)
    return [
        a
        for a in invoice_repository.applications_of(ctx.tenant, found.accountLocator, locator)
        if include_reversed or not a.reversed
    ]


def invoice_numbering_plan(ctx: CallContext, account: Account) -> str | None:
    account_type = configuration.billing_plans(ctx).account_type(account.type)
    return account_type.invoice_numbering_plan if account_type else None


class EarlyInvoicing(Protocol):
    """What `request_early_invoicing` reads of the request: the EarlyInvoicingRequest a route parsed
    (invoices/schemas.py)."""

    @property
    def accountLocator(self) -> str | None: ...

    @property
    def installmentLocators(self) -> list[str]: ...

    @property
    def timezone(self) -> str | None: ...

    @property
    def invoiceDueTime(self) -> datetime | None: ...

    @property
    def invoiceThroughTime(self) -> datetime | None: ...

    @property
    def ignoreHolds(self) -> bool: ...


def request_early_invoicing(ctx: CallContext, request: EarlyInvoicing) -> InvoicingJob:
    """Check what an early invoicing names and queue its job: the named installments (uninvoiced, of one
    account), or, naming none, the account's uninvoiced installments starting before `invoiceThroughTime`."""
    account_locator = request.accountLocator or (
        repository.account_of(ctx.tenant, "installment", request.installmentLocators[0])
        if request.installmentLocators
        else None
    )
    if account_locator is None:
        raise codes.REQUEST_INVALID(
            "Name the account or its installments",
            field_errors=[FieldError("accountLocator", "required without installments")],
        )
    account = accounts.get_account(ctx, account_locator)
    candidates = _early_candidates(ctx, account.locator, request.installmentLocators, request.invoiceThroughTime)
    job = InvoicingJob(
        locator=new_locator(),
        accountLocator=account.locator,
        jobStatus=JobStatus.QUEUED,
        createdAt=ctx.now,
        invoicingType="early",
        installmentsToBeInvoiced=[i.locator for i in candidates],
        timezone=request.timezone,
        invoiceDueTime=request.invoiceDueTime,
        invoiceThroughTime=request.invoiceThroughTime,
        ignoreHolds=request.ignoreHolds,
    )
    uow = account_root.open_write(ctx, account.locator, [account.locator])
    invoice_repository.add_invoicing_job(uow, ctx.tenant, job)
    jobs.enqueue(
        uow,
        JobType.BILLING_EARLY_INVOICING,
        {"accountLocator": account.locator, "jobLocator": job.locator},
        locator=job.locator,
    )
    uow.commit()
    return job


def _early_candidates(ctx: CallContext, account: str, named: list[str], through: datetime | None) -> list[Installment]:
    if not named:
        if through is None:
            raise codes.REQUEST_INVALID(
                "Name the installments, or invoiceThroughTime",
                field_errors=[FieldError("invoiceThroughTime", "required")],
            )
        return [i for i in installment_repository.uninvoiced(ctx.tenant, account) if i.installmentStartTime < through]
    found = {i.locator: i for i in repository.get_many(ctx.tenant, account, "installment", named, Installment)}
    for index, locator in enumerate(named):
        if locator not in found or found[locator].invoiceLocator:
            raise codes.INSTALLMENT_NOT_INVOICEABLE(
                f"Installment {locator} is not an uninvoiced installment of account {account}",
                field_errors=[FieldError(f"installmentLocators[{index}]", "not invoiceable")],
            )
    return [found[locator] for locator in dict.fromkeys(named)]


def run_early_invoicing(ctx: CallContext, account_locator: str, job_locator: str) -> InvoicingJob:
    """Invoice now what the job names and is still uninvoiced (with its due time when it gives one)."""
    job = invoice_repository.invoicing_job(ctx.tenant, account_locator, job_locator)
    if job is None:
        raise codes.not_found("invoicingJob", job_locator)
    if job.jobStatus == JobStatus.FINISHED:
        return job
    account = accounts.get_account(ctx, account_locator)
    still = [
        i
        for i in repository.get_many(
            ctx.tenant, account.locator, "installment", job.installmentsToBeInvoiced, Installment
        )
        if not i.invoiceLocator
    ]
    if job.invoiceDueTime is not None:
        for installment in still:
            installment.dueTime = job.invoiceDueTime
    held = not job.ignoreHolds and repository.is_held(ctx.tenant, account.locator, HoldTarget.INVOICING)
    invoices = [] if held else _invoice(ctx, account, still)
    done = job.model_copy(
        update={
            "jobStatus": JobStatus.FINISHED,
            "completedAt": ctx.now,
            "invoiceLocators": [i.locator for i in invoices],
            "processingErrors": "the account's invoicing is held" if held else None,
        }
    )
    uow = wiring.unit_of_work(ctx)
    invoice_repository.save_invoicing_job(uow, ctx.tenant, done)
    uow.commit()
    return done


def invoicing_job(ctx: CallContext, job_locator: str) -> InvoicingJob:
    account = repository.account_of(ctx.tenant, "invoicingJob", job_locator)
    found = invoice_repository.invoicing_job(ctx.tenant, account, job_locator) if account else None
    if found is None:
        raise codes.not_found("invoicingJob", job_locator)
    return found


def invoicing_jobs(ctx: CallContext, account_locator: str, page: PageRequest) -> Page[InvoicingJob]:
    account = accounts.get_account(ctx, account_locator)
    return invoice_repository.invoicing_jobs(ctx.tenant, account.locator, page)


def invoice_event(invoice: Invoice) -> dict[str, Any]:
    """The data of a `billing.invoice.*` event (settle, unsettle) for other billing modules."""
    return _invoice_event(invoice)
