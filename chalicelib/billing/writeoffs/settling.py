"""Settling invoices by a write-off, in a unit of work its caller commits: a write-off asked for
(service.py), or the shortfall a payment's posting leaves within the account's tolerance
(payments/service.py post_payment, which writes the invoices it paid). Imports nothing of payments'
service, which builds on it."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from chalicelib.accounts import service as accounts
from chalicelib.billing.invoices.models import Invoice, InvoiceState
from chalicelib.billing.models import ContainerType, PaymentTarget
from chalicelib.billing.writeoffs import allocation
from chalicelib.billing.writeoffs import repository as write_offs
from chalicelib.billing.writeoffs.models import WriteOff, WriteOffCreditType, WriteOffState
from chalicelib.configuration import service as configuration
from chalicelib.core.context import CallContext
from chalicelib.core.ids import new_locator
from chalicelib.runtime.wiring import UnitOfWork

ZERO = Decimal(0)


def settle_shortfalls(
    ctx: CallContext,
    uow: UnitOfWork,
    account: str,
    currency: str,
    paid: list[Invoice],
    invoices: dict[str, Invoice],
    open_oldest_first: list[Invoice],
) -> WriteOff | None:
    """Write off what a posting left on the invoices it paid when that is within the account's shortfall
    tolerance (`currencyTolerances`): a `shortfallWriteOff`, added to `uow`. The invoices change in place
    and the caller, which writes them, records their settling."""
    plans = configuration.billing_plans(ctx)
    if not plans.shortfall_tolerance_plans:
        return None
    plan = plans.shortfall_tolerance_plan(accounts.get_account(ctx, account).shortfallTolerancePlanName)
    tolerance = plan.tolerance(currency) if plan else ZERO
    short = [
        PaymentTarget(containerLocator=i.locator, containerType=ContainerType.INVOICE)
        for i in paid
        if i.invoiceState == InvoiceState.OPEN and 0 < i.totalRemainingAmount <= tolerance
    ]
    if not short:
        return None
    return settle(
        ctx, uow, account, short, WriteOffCreditType.SHORTFALL_WRITE_OFF, currency, invoices, open_oldest_first
    )[0]


def settle(
    ctx: CallContext,
    uow: UnitOfWork,
    account: str,
    targets: list[PaymentTarget],
    credit_type: WriteOffCreditType,
    currency: str,
    invoices: dict[str, Invoice],
    open_oldest_first: list[Invoice],
) -> tuple[WriteOff, list[Invoice]]:
    """Settle the targets (the invoices change in place) and add the write-off and its events to `uow`.
    Answers it and the invoices it touched, for the caller to write."""
    allocations, taken = allocation.write_off(targets, invoices, open_oldest_first, ctx.now)
    touched = [invoices[a.invoiceLocator] for a in allocations]
    record = WriteOff(
        locator=new_locator(),
        accountLocator=account,
        currency=currency,
        writeOffState=WriteOffState.DISTRIBUTED,
        creditType=credit_type,
        amount=sum(taken, ZERO),
        allocations=allocations,
        targets=[t.model_copy(update={"amount": amount}) for t, amount in zip(targets, taken)],
        policyLocators=sorted({p for i in touched for p in i.policyLocators}),
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    for invoice in touched:
        if record.locator not in invoice.writeOffLocators:
            invoice.writeOffLocators.append(record.locator)
    write_offs.add(uow, ctx.tenant, record)
    uow.record_event("billing.writeoff.create", event(record))
    uow.record_event("billing.writeoff.distribute", event(record))
    return record, touched


def event(record: WriteOff) -> dict[str, Any]:
    return {
        "writeOffLocator": record.locator,
        "policyLocators": {"listCompleted": True, "items": record.policyLocators},
    }
