"""Payments (DECISIONS.md "Billing", payments): created as drafts, validated, posted onto their targets
(allocation.py: an account target pays the open invoices oldest due first) and reversed; what a posting
leaves goes to the account's credit balance (billing/ledger.py). Every write bumps the account's billing
root and the roots of the containers whose invoices it changes (account_root.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import Account
from chalicelib.billing import account_root, ledger, repository, staging
from chalicelib.billing.credit import service as credit
from chalicelib.billing.credit.models import Disbursement
from chalicelib.billing.delinquency import service as delinquencies
from chalicelib.billing.installments.models import Installment, InstallmentLattice
from chalicelib.billing.invoices import repository as invoice_repository
from chalicelib.billing.invoices import service as invoicing
from chalicelib.billing.invoices.models import Application, Invoice, InvoiceItem, InvoiceState
from chalicelib.billing.models import ContainerType, PaymentTarget, SourceType
from chalicelib.billing.payments import allocation as payments
from chalicelib.billing.payments import payment_lifecycle
from chalicelib.billing.payments import repository as payment_repository
from chalicelib.billing.payments.models import Payment, PaymentState
from chalicelib.billing.writeoffs import service as write_offs
from chalicelib.configuration import service as configuration
from chalicelib.core import codes, money
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.runtime import observability, wiring
from chalicelib.runtime.wiring import UnitOfWork

OWED = "owed"
"""The charge type and category of an owed invoice's one item (reverse_payment)."""


class TargetFields(Protocol):
    """A target a payment command names: a CreditItem of the request (billing/schemas.py), or a PaymentTarget."""

    @property
    def containerLocator(self) -> str: ...

    @property
    def containerType(self) -> ContainerType: ...

    def model_dump(self) -> dict[str, Any]: ...


class NewPayment(Protocol):
    """What `create_payment` reads of a new payment: the PaymentCreateRequest a route parsed
    (payments/schemas.py), or the one autopay makes (autopay.AutopayPayment)."""

    @property
    def accountLocator(self) -> str | None: ...

    @property
    def type(self) -> str: ...

    @property
    def amount(self) -> Decimal: ...

    @property
    def currency(self) -> str | None: ...

    @property
    def data(self) -> dict[str, Any]: ...

    @property
    def targets(self) -> Sequence[TargetFields]: ...

    @property
    def transactionMethod(self) -> str | None: ...

    @property
    def transactionNumber(self) -> str | None: ...


class PaymentChanges(Protocol):
    """What `update_payment` reads of a draft payment's changes: the PaymentUpdateRequest a route parsed
    (payments/schemas.py); None leaves a field as it is."""

    @property
    def type(self) -> str | None: ...

    @property
    def amount(self) -> Decimal | None: ...

    @property
    def currency(self) -> str | None: ...

    @property
    def setData(self) -> dict[str, Any]: ...

    @property
    def removeData(self) -> dict[str, Any]: ...

    @property
    def addTargets(self) -> Sequence[TargetFields]: ...

    @property
    def removeTargets(self) -> Sequence[str]: ...

    @property
    def transactionMethod(self) -> str | None: ...

    @property
    def transactionNumber(self) -> str | None: ...


def payments_of_invoice(ctx: CallContext, locator: str, page: PageRequest, *, include_reversed: bool) -> Page[Payment]:
    found = invoicing.invoice(ctx, locator)
    sources = [
        a.sourceLocator
        for a in invoicing.applications_of_invoice(ctx, locator, include_reversed=include_reversed)
        if a.sourceType == SourceType.PAYMENT
    ]
    paid = repository.get_many(ctx.tenant, found.accountLocator, "payment", sources, Payment)
    return Page.window(paid, page)


def invoices_of_payment(ctx: CallContext, locator: str, page: PageRequest, *, include_reversed: bool) -> Page[Invoice]:
    found = payment(ctx, locator)
    pairs = [tuple(ref.split("/", 1)) for ref in found.applications]
    applied = [
        a
        for a in invoice_repository.applications(ctx.tenant, found.accountLocator, pairs)  # type: ignore[arg-type]
        if include_reversed or not a.reversed
    ]
    invoices = repository.get_many(
        ctx.tenant, found.accountLocator, "invoice", sorted({a.invoiceLocator for a in applied}), Invoice
    )
    return Page.window(invoices, page)


def create_payment(ctx: CallContext, fields: NewPayment, locator: str | None = None) -> Payment:
    """A draft payment: amount, type, currency and targets checked (all targets of its account and
    currency). `locator`: chosen by the caller (autopay derives it, so a rerun finds the payment)."""
    account_locator = fields.accountLocator or _account_of_targets(ctx, fields.targets)
    account = accounts.get_account(ctx, account_locator)
    model = configuration.current_model(ctx, resolved=True)[1]
    currency = (fields.currency or model.get("defaultCurrency") or "USD").upper()
    payment_type = _payment_type(ctx, fields.type)
    _check_amount(fields.amount, currency)
    ledger.check_currency(ctx, account.locator, currency, codes.PAYMENT_INVALID_CURRENCY)
    targets = [PaymentTarget.model_validate(t.model_dump()) for t in fields.targets]
    _check_targets(ctx, account.locator, currency, targets)
    record = Payment(
        locator=locator or new_locator(),
        accountLocator=account.locator,
        paymentState=PaymentState.DRAFT,
        type=payment_type,
        currency=currency,
        amount=fields.amount,
        data=fields.data or {},
        targets=targets,
        transactionMethod=fields.transactionMethod,
        transactionNumber=fields.transactionNumber,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    uow = wiring.unit_of_work(ctx)
    record = payment_lifecycle.number_on(ctx, uow, record, payment_lifecycle.CREATION)
    account_root.bump(ctx, uow, account.locator, [account.locator])
    payment_repository.add_payment(uow, ctx.tenant, record)
    uow.record_event("billing.payment.create", _payment_event(record))
    uow.commit()
    return record


def _account_of_targets(ctx: CallContext, targets: Sequence[TargetFields]) -> str:
    for target in targets:
        if target.containerType == ContainerType.ACCOUNT:
            return str(target.containerLocator)
        if target.containerType == ContainerType.INVOICE:
            owner = repository.account_of(ctx.tenant, "invoice", target.containerLocator)
            if owner:
                return owner
    raise codes.PAYMENT_ACCOUNT_REQUIRED(
        "Name the payment's accountLocator, or target an account or invoice",
        field_errors=[FieldError("accountLocator", "required")],
    )


def _is_amount(amount: Decimal, currency: str) -> bool:
    """Positive, below the limit of money and in the currency's minor unit."""
    return amount.is_finite() and 0 < amount < money.MAX_AMOUNT and money.round_money(amount, currency) == amount


def _check_amount(amount: Decimal, currency: str) -> None:
    if not _is_amount(amount, currency):
        raise codes.PAYMENT_INVALID_AMOUNT(
            f"A payment's amount is positive with at most {money.minor_units(currency)} decimals in {currency}",
            field_errors=[FieldError("amount", "must be a positive amount of the currency")],
        )


def _check_targets(ctx: CallContext, account: str, currency: str, targets: list[PaymentTarget]) -> None:
    invoice_locators = [t.containerLocator for t in targets if t.containerType == ContainerType.INVOICE]
    found = {i.locator: i for i in repository.get_many(ctx.tenant, account, "invoice", invoice_locators, Invoice)}
    for index, target in enumerate(targets):
        field = f"targets[{index}]"
        if target.amount is not None and not _is_amount(target.amount, currency):
            raise codes.PAYMENT_INVALID_TARGET(
                "A target's amount is positive, in the currency's minor unit",
                field_errors=[FieldError(f"{field}.amount", "invalid amount")],
            )
        if target.containerType == ContainerType.ACCOUNT and target.containerLocator != account:
            raise codes.PAYMENT_INVALID_TARGET(
                f"Target account {target.containerLocator} is not the payment's",
                field_errors=[FieldError(field, "another account")],
            )
        if target.containerType == ContainerType.INVOICE:
            target_invoice = found.get(target.containerLocator)
            if target_invoice is None or target_invoice.currency != currency:
                raise codes.PAYMENT_INVALID_TARGET(
                    f"Invoice {target.containerLocator} is not one of account {account} in {currency}",
                    field_errors=[FieldError(field, "not an invoice of the payment's account and currency")],
                )
            if target_invoice.invoiceState == InvoiceState.DISCARDED:
                raise codes.PAYMENT_INVALID_TARGET(
                    f"Invoice {target.containerLocator} is discarded: it owes nothing",
                    field_errors=[FieldError(field, "a discarded invoice")],
                )
        if target.containerType in (ContainerType.SUBPAYMENT, ContainerType.INVOICE_ITEM):
            raise codes.PAYMENT_INVALID_TARGET(
                f"A payment cannot target a {target.containerType.value} here",
                field_errors=[FieldError(field, "unsupported target type")],
            )


def payment(ctx: CallContext, locator: str) -> Payment:
    found = repository.get(ctx.tenant, "payment", locator, Payment)
    if found is None:
        raise codes.not_found("payment", locator)
    return found


def payments_of_account(ctx: CallContext, account_locator: str | None, page: PageRequest) -> Page[Payment]:
    """The account's payments, or without one the tenant's, oldest first. 404 for an account the tenant does not
    have (a list naming it in its query is not a parent's list)."""
    if account_locator is None:
        return payment_repository.tenant_payments(ctx.tenant, page)
    account = accounts.get_account(ctx, account_locator)
    return payment_repository.account_payments(ctx.tenant, account.locator, page)


def credits_of_account(ctx: CallContext, account_locator: str | None, page: PageRequest) -> Page[Payment]:
    """The account's posted (and reversed) payments, or without one the tenant's, oldest first."""
    if account_locator is None:
        return payment_repository.tenant_credits(ctx.tenant, page)
    account = accounts.get_account(ctx, account_locator)
    return payment_repository.account_credits(ctx.tenant, account.locator, page)


def update_payment(ctx: CallContext, locator: str, changes: PaymentChanges) -> Payment:
    current = payment(ctx, locator)
    _require_state(current, (PaymentState.DRAFT,), "be changed")
    updated = current.model_copy(deep=True)
    if changes.type is not None:
        updated.type = _payment_type(ctx, changes.type)
    if changes.currency is not None:
        updated.currency = changes.currency.upper()
        ledger.check_currency(ctx, updated.accountLocator, updated.currency, codes.PAYMENT_INVALID_CURRENCY)
    if changes.amount is not None:
        updated.amount = changes.amount
    _check_amount(updated.amount, updated.currency)
    updated.data = {
        k: v for k, v in {**updated.data, **(changes.setData or {})}.items() if k not in (changes.removeData or {})
    }
    removed = set(changes.removeTargets or [])
    updated.targets = [t for t in updated.targets if t.containerLocator not in removed] + [
        PaymentTarget.model_validate(t.model_dump()) for t in changes.addTargets or []
    ]
    for name in ("transactionMethod", "transactionNumber"):
        if getattr(changes, name) is not None:
            setattr(updated, name, getattr(changes, name))
    _check_targets(ctx, updated.accountLocator, updated.currency, updated.targets)
    return _save_payment(ctx, updated, "billing.payment.update")


def _payment_type(ctx: CallContext, name: str) -> str:
    """The configured payment type's name as configured; 400 for one the configuration lacks."""
    found = configuration.billing_plans(ctx).payment_type(name)
    if found is None or found.abstract:
        raise codes.PAYMENT_UNKNOWN_TYPE(
            f"No payment type {name!r} is configured", field_errors=[FieldError("type", "unknown payment type")]
        )
    return found.name


def validate_payment(ctx: CallContext, locator: str) -> Payment:
    current = payment(ctx, locator)
    _require_state(current, (PaymentState.DRAFT,), "be validated")
    _check_targets(ctx, current.accountLocator, current.currency, current.targets)
    uow = wiring.unit_of_work(ctx)
    validated = payment_lifecycle.number_on(ctx, uow, current, payment_lifecycle.VALIDATION)
    return _save_payment(
        ctx,
        validated.model_copy(update={"paymentState": PaymentState.VALIDATED, "validationResult": {"success": True}}),
        "billing.payment.validate",
        uow=uow,
    )


def reset_payment(ctx: CallContext, locator: str) -> Payment:
    current = payment(ctx, locator)
    _require_state(current, (PaymentState.VALIDATED,), "be reset")
    return _save_payment(
        ctx,
        current.model_copy(update={"paymentState": PaymentState.DRAFT, "validationResult": None}),
        "billing.payment.reset",
    )


def discard_payment(ctx: CallContext, locator: str) -> Payment:
    current = payment(ctx, locator)
    _require_state(current, (PaymentState.DRAFT, PaymentState.VALIDATED), "be discarded")
    return _save_payment(
        ctx, current.model_copy(update={"paymentState": PaymentState.DISCARDED}), "billing.payment.discard"
    )


def post_payment(ctx: CallContext, locator: str) -> Payment:
    """Apply a draft or validated payment to its targets (none: the account's open invoices, oldest due
    first); what is left raises the account's credit balance. Every invoice it settles is `settled`."""
    current = payment(ctx, locator)
    _require_state(current, (PaymentState.DRAFT, PaymentState.VALIDATED, PaymentState.REQUESTED), "be posted")
    _check_targets(ctx, current.accountLocator, current.currency, current.targets)
    account = current.accountLocator
    uow = wiring.unit_of_work(ctx)
    versions = account_root.bump(ctx, uow, account, [account])
    open_invoices = [i for i in invoice_repository.open_invoices(ctx.tenant, account) if i.currency == current.currency]
    named = [t.containerLocator for t in current.targets if t.containerType == ContainerType.INVOICE]
    by_locator = {i.locator: i for i in open_invoices}
    by_locator.update(
        {
            i.locator: i
            for i in repository.get_many(ctx.tenant, account, "invoice", named, Invoice)
            if i.locator not in by_locator
        }
    )
    before = {locator: state.invoiceState for locator, state in by_locator.items()}
    targets = current.targets or [PaymentTarget(containerLocator=account, containerType=ContainerType.ACCOUNT)]
    applied, left = payments.post(current.amount, targets, by_locator, open_invoices, ctx.now)
    account_root.bump_containers(ctx, uow, account, [each.invoice.billingContainer for each in applied])
    write_offs.settle_shortfalls(
        ctx, uow, account, current.currency, [each.invoice for each in applied], by_locator, open_invoices
    )
    posted = current.model_copy(
        update={
            "paymentState": PaymentState.POSTED,
            "postedAt": ctx.now,
            "postedVersion": versions[account] + 1,
            "creditedAmount": left,
        }
    )
    made, changes = credit.invoice_applications(ctx, account, applied, before, SourceType.PAYMENT, current.locator)
    posted.applications.extend(made)
    if left:
        ledger.move_credit(
            ctx,
            uow,
            account,
            current.currency,
            left,
            "payment in excess of its targets",
            SourceType.PAYMENT,
            current.locator,
        )
        ledger.excess_credit_job(ctx, uow, account, current.currency, apply_to_invoices=False)
    delinquencies.settle_paid(
        ctx,
        uow,
        account,
        [each.invoice.locator for each in applied if each.invoice.invoiceState == InvoiceState.SETTLED],
    )
    uow.add(*payment_repository.credit_ref_writes(ctx.tenant, posted))
    staged = staging.add(ctx, uow, account, changes, after=SAVED_PAYMENT)
    uow.after_commit(
        lambda: observability.count("PaymentsPosted", {"currency": posted.currency}, payment_locator=posted.locator)
    )
    return _save_payment(ctx, posted, "billing.payment.post", uow=uow, bumped=True, staged=staged)


@dataclass
class MigratedPayment:
    """A posted payment a migration brings (chalicelib/migration): what it paid of which of its invoices."""

    seed: str
    """What its locators derive from: the same in every run of the migration's account."""
    type: str
    currency: str
    time: datetime
    createdBy: str
    items: list[tuple[int | str, Decimal]]
    """(the invoice, amount), in order: the invoice by its position among the migration's invoices, or by the
    locator of an invoice the account has already (one of `add_migrated`'s `existing`)."""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class MigratedDisbursement:
    """A disbursement a migration brings (chalicelib/migration), executed in the source out of the credit."""

    seed: str
    type: str
    currency: str
    time: datetime
    createdBy: str
    amount: Decimal
    data: dict[str, Any] = field(default_factory=dict)


def add_migrated(
    ctx: CallContext,
    uow: UnitOfWork,
    account: Account,
    lattices: list[tuple[InstallmentLattice, list[Installment]]],
    given_invoices: list[invoicing.MigratedInvoice],
    given_payments: list[MigratedPayment],
    balances: dict[str, Decimal],
    given_disbursements: Sequence[MigratedDisbursement] = (),
    existing: Sequence[Invoice] = (),
    *,
    new_account: bool = False,
) -> tuple[list[Invoice], list[Payment], list[Disbursement]]:
    """Add to `uow` a migration's billing records of the account (invoices/service.add_migrated): its
    invoices settled by its posted payments as in the source (an application for each invoice a payment
    paid), its executed disbursements (credit/service.add_migrated_disbursement) and its starting credit
    balances: the credit's ledger shows, per currency, the balance before the disbursements (`balances`
    plus what they paid out) and a line for each disbursement, so that it holds `balances`. Payments may pay
    `existing` invoices of the account (as read, at their versions) too: each is rewritten as paid, on
    condition of its version, settled (its delinquencies with it) when paid in full. A payment that pays more
    than its invoices owe is refused (the migration reconciles them first): 400, nothing written. `new_account`:
    the account is written in the same write (its billing roots, and its policies', are new: not read)."""
    built = invoicing.migrated_invoices(ctx, given_invoices)
    earlier = {invoice.locator: invoice.model_copy(deep=True) for invoice in existing}
    by_locator = {**earlier, **{invoice.locator: invoice for invoice in built}}
    records = []
    paid_before: set[str] = set()
    for given in given_payments:
        kind = _payment_type(ctx, given.type)
        locator = derived_locator(given.time, given.seed)
        targets = [
            PaymentTarget(
                containerLocator=built[index].locator if isinstance(index, int) else index,
                containerType=ContainerType.INVOICE,
                amount=amount,
            )
            for index, amount in given.items
        ]
        amount = sum((amount for _, amount in given.items), Decimal(0))
        applied, left = payments.post(amount, targets, by_locator, [], given.time)
        if left:
            raise codes.REQUEST_INVALID(f"Payment {given.seed} pays {left} more than its invoices owe")
        refs = []
        for each in applied:
            application = Application(
                locator=derived_locator(given.time, f"{given.seed}:application:{each.invoice.locator}"),
                invoiceLocator=each.invoice.locator,
                sourceType=SourceType.PAYMENT,
                sourceLocator=locator,
                amount=each.amount,
                itemAmounts=each.item_amounts,
                createdAt=given.time,
            )
            uow.add(
                repository.record_write(
                    invoice_repository.application_item(ctx.tenant, account.locator, application), new=True
                ),
                *invoice_repository.page_puts(
                    invoice_repository.application_pages(ctx.tenant, account.locator, application)
                ),
            )
            refs.append(f"{each.invoice.locator}/{application.locator}")
            if each.invoice.locator in earlier:
                paid_before.add(each.invoice.locator)
        records.append(
            Payment(
                locator=locator,
                accountLocator=account.locator,
                paymentState=PaymentState.POSTED,
                type=kind,
                currency=given.currency,
                amount=amount,
                data=given.data,
                targets=targets,
                applications=refs,
                postedAt=given.time,
                createdAt=given.time,
                createdBy=given.createdBy,
                updatedAt=given.time,
                updatedBy=given.createdBy,
            )
        )
    installments = {i.locator: i for _, listed in lattices for i in listed}
    versions = invoicing.add_migrated(
        ctx,
        uow,
        account,
        lattices,
        [(invoice, [installments[locator] for locator in invoice.installmentLocators]) for invoice in built],
        containers=[earlier[locator].billingContainer for locator in sorted(paid_before)],
        new_roots=new_account,
    )
    for locator in sorted(paid_before):
        paid = earlier[locator]
        uow.add(*invoice_repository.invoice_update_writes(ctx.tenant, paid, was_open=True))
        if paid.invoiceState == InvoiceState.SETTLED:
            uow.record_event("billing.invoice.settle", invoicing.invoice_event(paid))
    delinquencies.settle_paid(
        ctx,
        uow,
        account.locator,
        [locator for locator in sorted(paid_before) if earlier[locator].invoiceState == InvoiceState.SETTLED],
    )
    for record in records:
        record.postedVersion = versions[account.locator] + 1
        payment_repository.add_payment(uow, ctx.tenant, record)
        uow.add(*payment_repository.credit_ref_writes(ctx.tenant, record))
        uow.record_event("billing.payment.post", _payment_event(record))
    paid_out: dict[str, list[Disbursement]] = {}
    for out in given_disbursements:
        paid_out.setdefault(out.currency, []).append(
            credit.add_migrated_disbursement(
                ctx,
                uow,
                account.locator,
                derived_locator(out.time, out.seed),
                out.type,
                out.currency,
                out.amount,
                out.time,
                out.createdBy,
                out.data,
            )
        )
    for currency in sorted({*balances, *paid_out}):
        disbursed = paid_out.get(currency, [])
        starting = balances.get(currency, Decimal(0)) + sum((d.amount for d in disbursed), Decimal(0))
        if starting:
            ledger.credit_moves(
                ctx,
                uow,
                account.locator,
                currency,
                Decimal(0),
                [
                    (starting, "starting balance (migrated)", SourceType.CREDIT_BALANCE, account.locator),
                    *[(-d.amount, "disbursement", credit.DISBURSEMENT, d.locator) for d in disbursed],
                ],
            )
    return built, records, [d for listed in paid_out.values() for d in listed]


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
    uow = account_root.open_write(ctx, account, [account])
    credited = current.creditedAmount
    held = repository.credit_balance(ctx.tenant, account, current.currency).balance if credited else Decimal(0)
    funded = credit.distributions_funded(
        ctx, account, current.currency, current.creditedAmount - held, current.postedVersion
    )
    refs = [*current.applications, *(ref for d in funded for ref in d.applications)]
    changes = credit.take_back_applications(ctx, uow, account, refs)
    moves = credit.reverse_funding(ctx, uow, account, funded, f"payment {current.locator} reversed")
    restored = held + sum((record.appliedAmount for record in funded), Decimal(0))
    owed = max(credited - restored, Decimal(0))
    if credited - owed:
        moves.append((owed - credited, "payment reversed", SourceType.PAYMENT, current.locator))
    if moves:
        ledger.credit_moves(ctx, uow, account, current.currency, held, moves)
    if owed:
        _add_owed_invoice(ctx, uow, current, owed)
    staged = staging.add(ctx, uow, account, changes, after=SAVED_PAYMENT)
    reversed_payment = current.model_copy(
        update={
            "paymentState": PaymentState.REVERSED,
            "reversedAt": ctx.now,
            "reversedBy": ctx.user_locator,
            "reversalReason": reason,
        }
    )
    return _save_payment(ctx, reversed_payment, "billing.payment.reverse", uow=uow, bumped=True, staged=staged)


def _add_owed_invoice(ctx: CallContext, uow: UnitOfWork, reversed_payment: Payment, amount: Decimal) -> Invoice:
    """Add to `uow` an invoice of `amount` the account owes now: what was disbursed of the credit of the
    payment being reversed. It bills no installment and no policy (so no delinquency lapses a policy for
    it); it is numbered, rendered and paid like any other invoice."""
    account = accounts.get_account(ctx, reversed_payment.accountLocator)
    locator = new_locator()
    item = InvoiceItem(
        locator=new_locator(),
        invoiceLocator=locator,
        timezone=account.timezone,
        chargeCategory=OWED,
        chargeType=OWED,
        amount=amount,
        remainingAmount=amount,
        installmentItemLocators=[],
        transactionLocators=[],
    )
    owed = Invoice(
        locator=locator,
        accountLocator=account.locator,
        billingContainer=account.locator,
        invoiceState=InvoiceState.OPEN,
        currency=reversed_payment.currency,
        timezone=account.timezone,
        startTime=ctx.now,
        endTime=ctx.now,
        dueTime=ctx.now,
        generatedTime=ctx.now,
        generateTime=ctx.now,
        suppressAutopay=True,
        totalAmount=amount,
        totalRemainingAmount=amount,
        invoiceItems=[item],
        installmentLocators=[],
        policyLocators=[],
        owedFor=reversed_payment.locator,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
    )
    model = configuration.current_model(ctx, resolved=True)[1]
    invoicing.add_invoice(ctx, uow, model, invoicing.invoice_numbering_plan(ctx, account), owed, [], account)
    return owed


def _require_state(record: Payment, allowed: tuple[PaymentState, ...], what: str) -> None:
    if record.paymentState not in allowed:
        raise codes.PAYMENT_INVALID_STATE(f"Payment {record.locator} is {record.paymentState.value} and cannot {what}")


SAVED_PAYMENT = 2
"""The actions `_save_payment` adds to a unit of work: the payment and its event."""


def _save_payment(
    ctx: CallContext,
    record: Payment,
    event: str,
    *,
    uow: UnitOfWork | None = None,
    bumped: bool = False,
    staged: staging.Staged | None = None,
) -> Payment:
    """Save the payment with its event in `uow` (bumping the account's root unless `bumped`) and commit it,
    with the invoices' changes `staged` (billing/staging.py)."""
    uow = uow or wiring.unit_of_work(ctx)
    if not bumped:
        account = record.accountLocator
        account_root.bump(ctx, uow, account, [account])
    changed = record.model_copy(update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator})
    payment_repository.save_payment(uow, ctx.tenant, changed)
    uow.record_event(event, _payment_event(changed))
    if staged is not None:
        staging.commit(ctx, uow, staged)
    else:
        uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})


def _payment_event(record: Payment) -> dict[str, Any]:
    return {"paymentLocator": record.locator, "policyLocators": {"listCompleted": True, "items": []}}
