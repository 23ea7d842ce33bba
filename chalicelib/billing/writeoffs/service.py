"""Write-offs (spec part 3 "Write-offs"; DECISIONS.md "Billing"): settle invoices, invoice items or the
account's open balance without money, and give it back. A write-off is `distributed` at once (its
targets settled with its events); a reversal re-opens exactly what it settled, all
of it or (our extension) a given `amount` of it, the last settled first. Written-off money never
touches the credit balance: an account's ledger reads invoiced = paid + credited + written off +
remaining.

A write-off settles (and its reversal re-opens) any number of invoices: what one write does not hold is
staged (billing/staging.py). Every write bumps the billing roots of the containers whose invoices it
changes (billing/repository.py), read once it has read those invoices (whose writes are conditional on
their versions) and before their delinquencies, so a payment, invoicing or delinquency change of those
containers in between makes this one fail with 409 and change nothing; write-offs of two policies billed at
policy level do not meet.
"""

from __future__ import annotations

from decimal import Decimal

from chalicelib.accounts import service as accounts
from chalicelib.billing import account_root, staging
from chalicelib.billing import repository as billing_repository
from chalicelib.billing.delinquency import service as delinquencies
from chalicelib.billing.invoices import repository as invoice_repository
from chalicelib.billing.invoices import service as invoicing
from chalicelib.billing.invoices.models import Invoice, InvoiceState
from chalicelib.billing.models import ContainerType, InvoiceCredit, PaymentTarget, SourceType
from chalicelib.billing.writeoffs import allocation, settling
from chalicelib.billing.writeoffs import repository as write_offs
from chalicelib.billing.writeoffs.models import WriteOff, WriteOffCreditType, WriteOffState
from chalicelib.configuration import service as configuration
from chalicelib.core import codes, money
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError
from chalicelib.core.paging import Page, PageRequest
from chalicelib.runtime import wiring
from chalicelib.runtime.wiring import UnitOfWork

ZERO = Decimal(0)


def write_off(ctx: CallContext, locator: str) -> WriteOff:
    found = write_offs.get(ctx.tenant, locator)
    if found is None:
        raise codes.not_found("writeOff", locator)
    return found


def write_offs_of(ctx: CallContext, account_locator: str | None, page: PageRequest) -> Page[WriteOff]:
    """The account's write-offs (404 for an account the tenant lacks), or all of the tenant's."""
    account = accounts.get_account(ctx, account_locator).locator if account_locator else None
    return write_offs.page(ctx.tenant, account, page)


def create_write_off(ctx: CallContext, account_locator: str, targets: list[PaymentTarget]) -> WriteOff:
    """Settle the targets in order, each for its amount or all that remains on it."""
    account = accounts.get_account(ctx, account_locator).locator
    uow = wiring.unit_of_work(ctx)
    record, staged = distribute(ctx, uow, account, targets, WriteOffCreditType.WRITE_OFF, None)
    staging.commit(ctx, uow, staged)
    return record


def write_off_invoice(ctx: CallContext, invoice_locator: str) -> WriteOff:
    """Write off all that remains on the invoice (409 for a settled one)."""
    found = invoicing.invoice(ctx, invoice_locator)
    if found.invoiceState == InvoiceState.SETTLED:
        raise codes.INVOICE_SETTLED(f"Invoice {invoice_locator} is settled: nothing remains to write off")
    if found.invoiceState == InvoiceState.DISCARDED:
        raise codes.INVOICE_DISCARDED(f"Invoice {invoice_locator} is discarded: nothing remains to write off")
    return create_write_off(
        ctx, found.accountLocator, [PaymentTarget(containerLocator=found.locator, containerType=ContainerType.INVOICE)]
    )


def distribute(
    ctx: CallContext,
    uow: UnitOfWork,
    account: str,
    targets: list[PaymentTarget],
    credit_type: WriteOffCreditType,
    currency: str | None,
) -> tuple[WriteOff, staging.Staged]:
    """Add to `uow` a write-off of the targets, the changes of the invoices it settles (any number of them:
    what `uow` does not hold is staged, billing/staging.py) and the bumps of their containers' roots."""
    open_invoices = invoice_repository.open_invoices(ctx.tenant, account)
    by_locator = {i.locator: i for i in open_invoices}
    named = [t.containerLocator for t in targets if t.containerType == ContainerType.INVOICE]
    by_locator.update(
        {
            i.locator: i
            for i in billing_repository.get_many(
                ctx.tenant, account, "invoice", [n for n in named if n not in by_locator], Invoice
            )
        }
    )
    currency = currency or _currency(ctx, targets, by_locator)
    _check_targets(account, currency, targets, by_locator)
    before = {locator: invoice.invoiceState for locator, invoice in by_locator.items()}
    record, touched = settling.settle(
        ctx,
        uow,
        account,
        targets,
        credit_type,
        currency,
        by_locator,
        [i for i in open_invoices if i.currency == currency],
    )
    account_root.bump(ctx, uow, account, sorted({invoice.billingContainer for invoice in touched}))
    changes = [
        staging.InvoiceChange(
            invoice,
            before[invoice.locator] == InvoiceState.OPEN,
            events=[("billing.invoice.settle", invoicing.invoice_event(invoice))]
            if invoice.invoiceState == InvoiceState.SETTLED
            else [],
        )
        for invoice in touched
    ]
    delinquencies.settle_paid(
        ctx, uow, account, [invoice.locator for invoice in touched if invoice.invoiceState == InvoiceState.SETTLED]
    )
    return record, staging.add(ctx, uow, account, changes)


def reverse_write_off(ctx: CallContext, locator: str, amount: Decimal | None, reason: str | None) -> WriteOff:
    """Re-open what the write-off settled: all it still holds, or `amount` of it (the last settled first)."""
    current = write_off(ctx, locator)
    if current.writeOffState == WriteOffState.REVERSED:
        raise codes.WRITEOFF_INVALID_STATE(f"Write-off {locator} is reversed already")
    held = current.amount - current.reversedAmount
    given = held if amount is None else amount
    if not _is_amount(given, current.currency) or given > held:
        raise codes.WRITEOFF_INVALID_REVERSAL(
            f"Write-off {locator} holds {held}; a reversal gives back a positive amount of at most that",
            field_errors=[FieldError("amount", f"at most {held}")],
        )
    account = current.accountLocator
    uow = wiring.unit_of_work(ctx)
    changed = current.model_copy(deep=True)
    invoices = {
        i.locator: i
        for i in billing_repository.get_many(
            ctx.tenant, account, "invoice", [a.invoiceLocator for a in changed.allocations], Invoice
        )
    }
    account_root.bump(ctx, uow, account, sorted({invoice.billingContainer for invoice in invoices.values()}))
    before = {locator: invoice.invoiceState for locator, invoice in invoices.items()}
    changes = [
        staging.InvoiceChange(
            invoice,
            before[invoice.locator] == InvoiceState.OPEN,
            events=[("billing.invoice.unsettle", invoicing.invoice_event(invoice))]
            if before[invoice.locator] == InvoiceState.SETTLED and invoice.invoiceState == InvoiceState.OPEN
            else [],
        )
        for invoice in allocation.take_back(changed.allocations, given, invoices, ctx.now)
    ]
    delinquencies.reopen_unsettled(
        ctx, uow, account, [invoices[locator] for locator, state in before.items() if state == InvoiceState.SETTLED]
    )
    changed.reversedAmount += given
    if changed.reversedAmount == changed.amount:
        changed.writeOffState = WriteOffState.REVERSED
    changed.reversedAt, changed.reversalReason = ctx.now, reason or current.reversalReason
    changed.updatedAt, changed.updatedBy = ctx.now, ctx.user_locator
    staged = staging.add(ctx, uow, account, changes, after=2)  # the write-off and its event
    write_offs.save(uow, ctx.tenant, changed)
    uow.record_event("billing.writeoff.reverse", settling.event(changed))
    staging.commit(ctx, uow, staged)
    return changed.model_copy(update={"version": changed.version + 1})


def _currency(ctx: CallContext, targets: list[PaymentTarget], invoices: dict[str, Invoice]) -> str:
    """The currency of the first invoice (or invoice item) targeted, else the tenant's default."""
    for target in targets:
        if target.containerType == ContainerType.INVOICE and target.containerLocator in invoices:
            return invoices[target.containerLocator].currency
        if target.containerType == ContainerType.INVOICE_ITEM:
            found = allocation.invoice_of_item(invoices, target.containerLocator)
            if found is not None:
                return found.currency
    model = configuration.current_model(ctx, resolved=True)[1]
    return str(model.get("defaultCurrency") or "USD").upper()


def _check_targets(account: str, currency: str, targets: list[PaymentTarget], invoices: dict[str, Invoice]) -> None:
    if not targets:
        raise codes.WRITEOFF_INVALID_TARGET(
            "A write-off names at least one target", field_errors=[FieldError("targets", "empty")]
        )
    for index, target in enumerate(targets):
        field = f"targets[{index}]"
        problem = None
        if target.amount is not None and not _is_amount(target.amount, currency):
            problem, field = f"a positive amount of {currency}", f"{field}.amount"
        elif target.containerType == ContainerType.ACCOUNT:
            problem = None if target.containerLocator == account else "another account"
        elif target.containerType == ContainerType.INVOICE:
            found = invoices.get(target.containerLocator)
            problem = (
                None
                if found is not None and found.currency == currency
                else f"not an invoice of account {account} in {currency}"
            )
        elif target.containerType == ContainerType.INVOICE_ITEM:
            owner = allocation.invoice_of_item(invoices, target.containerLocator)
            problem = (
                None
                if owner is not None and owner.currency == currency
                else f"not an item of an open invoice of account {account} in {currency}"
            )
        else:
            problem = f"a write-off cannot target a {target.containerType.value}"
        if problem:
            raise codes.WRITEOFF_INVALID_TARGET(
                f"Target {target.containerLocator}: {problem}", field_errors=[FieldError(field, problem)]
            )


def _is_amount(amount: Decimal, currency: str) -> bool:
    return amount.is_finite() and 0 < amount < money.MAX_AMOUNT and money.round_money(amount, currency) == amount


def credits_of_invoice(
    ctx: CallContext, locator: str, *, include_reversed: bool
) -> tuple[Invoice, list[InvoiceCredit]]:
    """The invoice and what settled (some of) it, oldest first: the applications of payments and credit
    distributions, and the write-offs (a write-off's amount is what it still holds of the invoice; all
    of it reversed, it is `reversed` with what it had settled)."""
    found = invoicing.invoice(ctx, locator)
    applied = invoice_repository.applications_of(ctx.tenant, found.accountLocator, locator)
    written = found.writeOffLocators
    credits = [
        InvoiceCredit(
            locator=a.sourceLocator,
            creditType="payment" if a.sourceType == SourceType.PAYMENT else "creditDistribution",
            creditState="reversed" if a.reversed else "posted",
            amount=a.amount,
            createdAt=a.createdAt,
            reversedAt=a.reversedAt,
        )
        for a in applied
    ]
    for write_off in write_offs.get_many(ctx.tenant, found.accountLocator, written) if written else []:
        allocation = next(a for a in write_off.allocations if a.invoiceLocator == locator)
        held = allocation.held_amount
        credits.append(
            InvoiceCredit(
                locator=write_off.locator,
                creditType=write_off.creditType.value,
                creditState="distributed" if held else "reversed",
                amount=held or allocation.amount,
                createdAt=write_off.createdAt,
                reversedAt=None if held else write_off.reversedAt,
            )
        )
    credits.sort(key=lambda c: c.createdAt)
    return found, [c for c in credits if include_reversed or c.creditState != "reversed"]


def settle_shortfalls(
    ctx: CallContext,
    uow: UnitOfWork,
    account: str,
    currency: str,
    paid: list[Invoice],
    invoices: dict[str, Invoice],
    open_oldest_first: list[Invoice],
) -> WriteOff | None:
    """What a payment's posting left on the invoices it paid, written off in `uow` when within the
    account's shortfall tolerance (settling.py)."""
    return settling.settle_shortfalls(ctx, uow, account, currency, paid, invoices, open_oldest_first)
