"""Drawing on an account's credit balance (socotra-semantics.md §4.4; the OpenAPI definition's credit
distributions and disbursements). A credit distribution applies the balance to invoices (its targets
in order, an account target the open invoices oldest due first, as a payment posts); a disbursement
pays it out. Each goes draft -> validated (-> approved, a disbursement) -> executed, and only executing
moves money: more than the balance holds is refused with 409 and nothing moves. Reversing an executed
one puts back exactly what it moved. Every write bumps the account's billing root, read before the
balance and the invoices, and the roots of the containers whose invoices it changes (billing/repository.py),
so a concurrent billing write of the account or of those containers makes one of them fail with 409.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

from chalicelib.accounts import service as accounts
from chalicelib.billing import account_root, ledger, staging
from chalicelib.billing import repository as billing_repository
from chalicelib.billing.credit import repository
from chalicelib.billing.credit.models import (
    DISBURSEMENT_STEPS,
    CreditDistribution,
    CreditDistributionState,
    Disbursement,
    DisbursementState,
)
from chalicelib.billing.delinquency import service as delinquencies
from chalicelib.billing.invoices import repository as invoice_repository
from chalicelib.billing.invoices import service as invoicing
from chalicelib.billing.invoices.models import Application, Invoice, InvoiceState
from chalicelib.billing.models import ContainerType, PaymentTarget, SourceType
from chalicelib.billing.payments import allocation as payments
from chalicelib.configuration import service as configuration
from chalicelib.core import codes, money
from chalicelib.core.context import CallContext
from chalicelib.core.errors import ErrorCode, FieldError
from chalicelib.core.ids import new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.runtime import wiring
from chalicelib.runtime.wiring import UnitOfWork

DISTRIBUTION = "creditDistribution"
DISBURSEMENT = "disbursement"
ZERO = Decimal(0)
R = TypeVar("R", CreditDistribution, Disbursement)


# --- retention ----------------------------------------------------------------------------------------

Kept = tuple[ErrorCode, str, str, str]
"""Why retention keeps an account's records: (the catalogue's code, what it says, record type, locator)."""


def retention_holds(ctx: CallContext, account_locator: str) -> list[Kept]:
    """What keeps the account's billing records from anonymization: its open invoices, its active
    delinquencies and a non-zero credit balance in any currency."""
    kept: list[Kept] = [
        (codes.RETENTION_OPEN_INVOICE, f"Invoice {i.locator} is open ({i.currency})", "invoice", i.locator)
        for i in invoice_repository.open_invoices(ctx.tenant, account_locator)
    ]
    kept += [
        (
            codes.RETENTION_ACTIVE_DELINQUENCY,
            f"Delinquency {d.locator} is {d.delinquencyState}",
            "delinquency",
            d.locator,
        )
        for d in delinquencies.active_delinquencies(ctx, account_locator)
    ]
    kept += [
        (
            codes.RETENTION_CREDIT_BALANCE,
            f"The account holds a credit balance of {b.balance} {b.currency}",
            "account",
            account_locator,
        )
        for b in billing_repository.credit_balances(ctx.tenant, account_locator)
        if b.balance != ZERO
    ]
    return kept


# --- shared -------------------------------------------------------------------------------------------


def _account(ctx: CallContext, named: str | None, items: list[Any]) -> str:
    """The account the request names, or the one its first account or invoice item belongs to."""
    for item in items:
        if named:
            break
        if item.containerType == ContainerType.ACCOUNT:
            named = item.containerLocator
        elif item.containerType == ContainerType.INVOICE:
            named = billing_repository.account_of(ctx.tenant, "invoice", item.containerLocator)
    if not named:
        raise codes.CREDIT_ACCOUNT_REQUIRED(
            "Name the accountLocator, or a source or target of the account",
            field_errors=[FieldError("accountLocator", "required")],
        )
    return accounts.get_account(ctx, named).locator


def _currency(ctx: CallContext, given: str | None, account: str) -> str:
    """The currency given (else the tenant's default), 400 when the account is not billed in it."""
    chosen = (given or configuration.current_model(ctx, resolved=True)[1].get("defaultCurrency") or "USD").upper()
    ledger.check_currency(ctx, account, chosen, codes.CREDIT_INVALID_CURRENCY)
    return chosen


def _check_amount(amount: Decimal, currency: str) -> None:
    if not (amount.is_finite() and 0 < amount < money.MAX_AMOUNT and money.round_money(amount, currency) == amount):
        raise codes.CREDIT_INVALID_AMOUNT(
            f"The amount is a positive amount of {currency}",
            field_errors=[FieldError("amount", "must be a positive amount")],
        )


def _check_sources(account: str, sources: list[PaymentTarget]) -> list[PaymentTarget]:
    """The sources: the account's credit balance (the account itself), which is also what none means."""
    for index, source in enumerate(sources):
        if source.containerType != ContainerType.ACCOUNT or source.containerLocator != account:
            raise codes.CREDIT_INVALID_SOURCE(
                f"Source {source.containerLocator} is not account {account}",
                field_errors=[FieldError(f"sources[{index}]", "not the account")],
            )
    return sources or [PaymentTarget(containerLocator=account, containerType=ContainerType.ACCOUNT)]


def _balance(
    ctx: CallContext, account: str, currency: str, wanted: Decimal, what: str, held: Decimal | None = None
) -> None:
    """409 when the account's credit balance in `currency` (`held`, when read already) holds less than
    `wanted`, naming the balance and what it has available."""
    if held is None:
        held = billing_repository.credit_balance(ctx.tenant, account, currency).balance
    if wanted > held:
        raise codes.CREDIT_INSUFFICIENT_BALANCE(
            f"The {what} of {money.round_money(wanted, currency)} {currency} exceeds the credit balance of "
            f"account {account}: {money.round_money(held, currency)} {currency} available"
        )


def _found(ctx: CallContext, kind: str, locator: str, model: type[R]) -> R:
    found = repository.get(ctx.tenant, kind, locator, model)
    if found is None:
        raise codes.not_found(kind, locator)
    return found


def _bumped(ctx: CallContext, account: str) -> Any:
    return _bumped_to(ctx, account)[0]


def _bumped_to(ctx: CallContext, account: str) -> tuple[Any, int]:
    """A unit of work bumping the account's billing root, and the version it bumps it to."""
    uow = wiring.unit_of_work(ctx)
    versions = account_root.bump(ctx, uow, account, [account])
    return uow, versions[account] + 1


SAVED = 2
"""The actions `_save` adds to a unit of work: the record and its event."""


def _save(
    ctx: CallContext,
    uow: UnitOfWork,
    kind: str,
    record: R,
    event: str,
    data: dict[str, Any],
    staged: staging.Staged | None = None,
) -> R:
    changed = record.model_copy(update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator})
    repository.save(uow, ctx.tenant, kind, changed.accountLocator, changed, changed.version)
    uow.record_event(event, data)
    if staged is not None:
        staging.commit(ctx, uow, staged)
    else:
        uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})


# --- credit distributions ------------------------------------------------------------------------------


def distribution(ctx: CallContext, locator: str) -> CreditDistribution:
    return _found(ctx, DISTRIBUTION, locator, CreditDistribution)


def distributions_of(ctx: CallContext, account_locator: str | None, page: PageRequest) -> Page[CreditDistribution]:
    account = accounts.get_account(ctx, account_locator).locator if account_locator else None
    return repository.page(ctx.tenant, DISTRIBUTION, CreditDistribution, account, page)


def create_distribution(
    ctx: CallContext,
    account_locator: str | None,
    amount: Decimal,
    currency: str | None,
    sources: list[PaymentTarget],
    targets: list[PaymentTarget],
) -> CreditDistribution:
    """A draft distribution of at most `amount` of the credit balance to the targets (checked now, and
    again when validated and executed)."""
    account = _account(ctx, account_locator, [*sources, *targets])
    chosen = _currency(ctx, currency, account)
    _check_amount(amount, chosen)
    record = CreditDistribution(
        locator=new_locator(),
        accountLocator=account,
        currency=chosen,
        creditDistributionState=CreditDistributionState.DRAFT,
        amount=amount,
        sources=_check_sources(account, sources),
        targets=_check_targets(ctx, account, chosen, targets),
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    uow = _bumped(ctx, account)
    repository.add(uow, ctx.tenant, DISTRIBUTION, account, record)
    uow.record_event("billing.creditdistribution.create", _distribution_event(record))
    uow.commit()
    return record


def _check_targets(ctx: CallContext, account: str, currency: str, targets: list[PaymentTarget]) -> list[PaymentTarget]:
    named = [t.containerLocator for t in targets if t.containerType == ContainerType.INVOICE]
    found = {i.locator: i for i in billing_repository.get_many(ctx.tenant, account, "invoice", named, Invoice)}
    for index, target in enumerate(targets):
        problem = None
        if target.amount is not None and not (
            target.amount.is_finite()
            and target.amount > 0
            and money.round_money(target.amount, currency) == target.amount
        ):
            problem = "its amount is not a positive amount of the currency"
        elif target.containerType == ContainerType.ACCOUNT:
            problem = None if target.containerLocator == account else "another account"
        elif target.containerType == ContainerType.INVOICE:
            invoice = found.get(target.containerLocator)
            problem = (
                None
                if invoice is not None and invoice.currency == currency
                else f"not an invoice of account {account} in {currency}"
            )
        else:
            problem = f"a credit distribution cannot target a {target.containerType.value}"
        if problem:
            raise codes.CREDIT_INVALID_TARGET(
                f"Target {target.containerLocator}: {problem}", field_errors=[FieldError(f"targets[{index}]", problem)]
            )
    return targets


def _require_distribution(record: CreditDistribution, allowed: tuple[CreditDistributionState, ...], what: str) -> None:
    if record.creditDistributionState not in allowed:
        raise codes.CREDIT_DISTRIBUTION_INVALID_STATE(
            f"Credit distribution {record.locator} is {record.creditDistributionState.value} and cannot {what}"
        )


def validate_distribution(ctx: CallContext, locator: str) -> CreditDistribution:
    return _move_distribution(
        ctx,
        locator,
        (CreditDistributionState.DRAFT,),
        "be validated",
        {"creditDistributionState": CreditDistributionState.VALIDATED, "validationResult": {"success": True}},
        "billing.creditdistribution.validate",
        check_targets=True,
    )


def reset_distribution(ctx: CallContext, locator: str) -> CreditDistribution:
    return _move_distribution(
        ctx,
        locator,
        (CreditDistributionState.VALIDATED,),
        "be reset",
        {"creditDistributionState": CreditDistributionState.DRAFT, "validationResult": None},
        "billing.creditdistribution.reset",
    )


def discard_distribution(ctx: CallContext, locator: str) -> CreditDistribution:
    return _move_distribution(
        ctx,
        locator,
        (CreditDistributionState.DRAFT, CreditDistributionState.VALIDATED),
        "be discarded",
        {"creditDistributionState": CreditDistributionState.DISCARDED},
        "billing.creditdistribution.discard",
    )


def _move_distribution(
    ctx: CallContext,
    locator: str,
    allowed: tuple[CreditDistributionState, ...],
    what: str,
    update: dict[str, Any],
    event_type: str,
    check_targets: bool = False,
) -> CreditDistribution:
    """A move of a distribution that touches no money (validate, reset, discard): its state checked
    (then its targets, when asked), the fields of `update` saved with its event."""
    current = distribution(ctx, locator)
    _require_distribution(current, allowed, what)
    if check_targets:
        _check_targets(ctx, current.accountLocator, current.currency, current.targets)
    changed = current.model_copy(update=update)
    return _save(
        ctx, _bumped(ctx, current.accountLocator), DISTRIBUTION, changed, event_type, _distribution_event(changed)
    )


def execute_distribution(ctx: CallContext, locator: str) -> CreditDistribution:
    """Apply up to `amount` of the credit balance to the targets; the balance gives what they took."""
    current = distribution(ctx, locator)
    _require_distribution(current, (CreditDistributionState.DRAFT, CreditDistributionState.VALIDATED), "be executed")
    account = current.accountLocator
    uow, version = _bumped_to(ctx, account)
    _check_targets(ctx, account, current.currency, current.targets)
    _balance(ctx, account, current.currency, current.amount, "credit distribution")
    changed = current.model_copy(deep=True)
    changed.executedVersion = version
    changed.applications, changed.appliedAmount, changes = apply_credit(
        ctx, uow, account, current.currency, current.amount, current.targets, locator
    )
    changed.creditDistributionState, changed.executedAt = CreditDistributionState.EXECUTED, ctx.now
    return _save(
        ctx,
        uow,
        DISTRIBUTION,
        changed,
        "billing.creditdistribution.distribute",
        _distribution_event(changed),
        staging.add(ctx, uow, account, changes, after=SAVED),
    )


def apply_credit(
    ctx: CallContext,
    uow: UnitOfWork,
    account: str,
    currency: str,
    amount: Decimal,
    targets: list[PaymentTarget],
    source: str,
) -> tuple[list[str], Decimal, list[staging.InvoiceChange]]:
    """Add to `uow` (which bumped the account's billing root) the application of up to `amount` of the
    credit balance to the targets (none: the open invoices oldest due first), the bumps of the roots of
    their containers and the balance's debit. Answers the applications (`invoice/application`), what
    they took and the invoices' changes, for the caller to add to `uow` (billing/staging.py)."""
    open_invoices = [i for i in invoice_repository.open_invoices(ctx.tenant, account) if i.currency == currency]
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
    before = {locator: invoice.invoiceState for locator, invoice in by_locator.items()}
    chosen = targets or [PaymentTarget(containerLocator=account, containerType=ContainerType.ACCOUNT)]
    applied, left = payments.post(amount, chosen, by_locator, open_invoices, ctx.now)
    account_root.bump_containers(ctx, uow, account, [each.invoice.billingContainer for each in applied])
    made, changes = invoice_applications(ctx, account, applied, before, SourceType.CREDIT_BALANCE, source)
    delinquencies.settle_paid(
        ctx,
        uow,
        account,
        [each.invoice.locator for each in applied if each.invoice.invoiceState == InvoiceState.SETTLED],
    )
    taken = amount - left
    if taken:
        ledger.move_credit(
            ctx, uow, account, currency, -taken, "credit applied to invoices", SourceType.CREDIT_BALANCE, source
        )
    return made, taken, changes


def invoice_applications(
    ctx: CallContext,
    account: str,
    applied: list[payments.Applied],
    before: dict[str, InvoiceState],
    source_type: SourceType,
    source: str,
) -> tuple[list[str], list[staging.InvoiceChange]]:
    """The applications of money put onto invoices (a payment posted, credit applied): each one's
    `invoice/application`, and each invoice's change (the application added, the settle event when it
    is settled now; `before` gives whether it was open)."""
    made, changes = [], []
    for each in applied:
        application = Application(
            locator=new_locator(),
            invoiceLocator=each.invoice.locator,
            sourceType=source_type,
            sourceLocator=source,
            amount=each.amount,
            itemAmounts=each.item_amounts,
            createdAt=ctx.now,
        )
        made.append(f"{each.invoice.locator}/{application.locator}")
        settled = each.invoice.invoiceState == InvoiceState.SETTLED
        changes.append(
            staging.InvoiceChange(
                each.invoice,
                before[each.invoice.locator] == InvoiceState.OPEN,
                added=[invoice_repository.application_item(ctx.tenant, account, application)],
                pages=invoice_repository.application_pages(ctx.tenant, account, application),
                events=[("billing.invoice.settle", invoicing.invoice_event(each.invoice))] if settled else [],
            )
        )
    return made, changes


def reverse_distribution(ctx: CallContext, locator: str, reason: str | None) -> CreditDistribution:
    """Take back what executing it applied (a settled invoice is open again); the balance gets it back."""
    current = distribution(ctx, locator)
    _require_distribution(current, (CreditDistributionState.EXECUTED,), "be reversed")
    account = current.accountLocator
    uow = _bumped(ctx, account)
    changes = take_back_applications(ctx, uow, account, current.applications)
    if current.appliedAmount:
        ledger.move_credit(
            ctx,
            uow,
            account,
            current.currency,
            current.appliedAmount,
            "credit distribution reversed",
            SourceType.CREDIT_BALANCE,
            locator,
        )
    changed = current.model_copy(
        update={
            "creditDistributionState": CreditDistributionState.REVERSED,
            "reversedAt": ctx.now,
            "reversalReason": reason,
        }
    )
    return _save(
        ctx,
        uow,
        DISTRIBUTION,
        changed,
        "billing.creditdistribution.reverse",
        _distribution_event(changed),
        staging.add(ctx, uow, account, changes, after=SAVED),
    )


def take_back_applications(
    ctx: CallContext, uow: UnitOfWork, account: str, refs: list[str]
) -> list[staging.InvoiceChange]:
    """Add to `uow` (which bumped the account's billing root) the taking back of the applications `refs`
    (`invoice/application`, of payments and credit distributions) and the bumps of the roots of their
    invoices' containers: each invoice gets back what its application took, the application is marked
    reversed, and an invoice settled before is open again (`billing.invoice.unsettle`, its delinquency
    re-opened past its due time). Answers the invoices' changes, for the caller to stage (billing/staging.py)."""
    pairs = [(invoice, application) for invoice, application in (ref.split("/", 1) for ref in refs)]
    applied = invoice_repository.applications(ctx.tenant, account, pairs)
    invoices = {
        i.locator: i
        for i in billing_repository.get_many(
            ctx.tenant, account, "invoice", [a.invoiceLocator for a in applied], Invoice
        )
    }
    account_root.bump_containers(ctx, uow, account, [i.billingContainer for i in invoices.values()])
    changes = {
        locator: staging.InvoiceChange(target, target.invoiceState == InvoiceState.OPEN)
        for locator, target in invoices.items()
    }
    for application in applied:
        payments.take_back(invoices[application.invoiceLocator], application.itemAmounts, ctx.now)
        changes[application.invoiceLocator].rewritten.append(
            invoice_repository.application_item(
                ctx.tenant, account, application.model_copy(update={"reversed": True, "reversedAt": ctx.now})
            )
        )
    unsettled = [
        change.invoice
        for change in changes.values()
        if not change.was_open and change.invoice.invoiceState == InvoiceState.OPEN
    ]
    for target in unsettled:
        changes[target.locator].events.append(("billing.invoice.unsettle", invoicing.invoice_event(target)))
    delinquencies.reopen_unsettled(ctx, uow, account, unsettled)
    return list(changes.values())


def distributions_funded(
    ctx: CallContext, account: str, currency: str, short: Decimal, posted_version: int | None
) -> list[CreditDistribution]:
    """The executed credit distributions of the account a payment's reversal takes back because its credit
    balance holds `short` less than the payment credited: those in its currency executed since the payment
    was posted (at `posted_version` of the account's root), the latest first, as many as make up the
    difference (none, and nothing read, when the balance holds enough)."""
    if short <= 0:
        return []
    executed = [
        d
        for d in billing_repository.all_of(
            ctx.tenant, "account", account, repository.LIST[DISTRIBUTION], DISTRIBUTION, CreditDistribution
        )
        if d.creditDistributionState == CreditDistributionState.EXECUTED
        and d.currency == currency
        and (d.executedVersion or 0) > (posted_version or 0)
    ]
    chosen = []
    for distribution in sorted(executed, key=lambda d: d.executedVersion or 0, reverse=True):
        if short <= 0:
            break
        if distribution.appliedAmount:
            chosen.append(distribution)
            short -= distribution.appliedAmount
    return chosen


def reverse_funding(
    ctx: CallContext, uow: UnitOfWork, account: str, funded: list[CreditDistribution], reason: str
) -> list[tuple[Decimal, str, str, str]]:
    """Add to `uow` the reversal of the credit distributions `funded` (distributions_funded), each with its
    event; answers the moves of the credit balance that give back what they applied (billing/ledger.py)."""
    moves: list[tuple[Decimal, str, str, str]] = []
    for record in funded:
        repository.save(
            uow,
            ctx.tenant,
            DISTRIBUTION,
            account,
            record.model_copy(
                update={
                    "creditDistributionState": CreditDistributionState.REVERSED,
                    "reversedAt": ctx.now,
                    "reversalReason": reason,
                    "updatedAt": ctx.now,
                    "updatedBy": ctx.user_locator,
                }
            ),
            record.version,
        )
        uow.record_event("billing.creditdistribution.reverse", {"creditLocator": record.locator})
        moves.append((record.appliedAmount, "credit distribution reversed", SourceType.CREDIT_BALANCE, record.locator))
    return moves


def _distribution_event(record: CreditDistribution) -> dict[str, Any]:
    return {"creditLocator": record.locator}


# --- disbursements -------------------------------------------------------------------------------------


def disbursement(ctx: CallContext, locator: str) -> Disbursement:
    return _found(ctx, DISBURSEMENT, locator, Disbursement)


def disbursements_of(ctx: CallContext, account_locator: str | None, page: PageRequest) -> Page[Disbursement]:
    account = accounts.get_account(ctx, account_locator).locator if account_locator else None
    return repository.page(ctx.tenant, DISBURSEMENT, Disbursement, account, page)


def disbursement_type(ctx: CallContext, name: str) -> str:
    """The configured disbursement type's name as configured; 400 for one the configuration lacks."""
    types = configuration.current_model(ctx, resolved=True)[1].get("disbursements") or {}
    found = name if name in types else next((each for each in types if each.lower() == name.lower()), None)
    if found is None or (types[found] or {}).get("abstract") is True:
        raise codes.DISBURSEMENT_UNKNOWN_TYPE(
            f"No disbursement type {name!r} is configured",
            field_errors=[FieldError("type", "unknown disbursement type")],
        )
    return str(found)


def create_disbursement(
    ctx: CallContext,
    account_locator: str | None,
    type_name: str,
    amount: Decimal,
    currency: str | None,
    sources: list[PaymentTarget],
    data: dict[str, Any],
    transaction_method: str | None = None,
    transaction_number: str | None = None,
    advance_to: DisbursementState = DisbursementState.DRAFT,
) -> Disbursement:
    """A disbursement of `amount` of the credit balance, taken along its steps up to `advance_to` (an
    excess credit plan's `advanceDisbursementTo`; a state off the way, such as rejected, stays draft)."""
    account = _account(ctx, account_locator, sources)
    chosen = _currency(ctx, currency, account)
    _check_amount(amount, chosen)
    record = Disbursement(
        locator=new_locator(),
        accountLocator=account,
        currency=chosen,
        disbursementState=DisbursementState.DRAFT,
        type=disbursement_type(ctx, type_name),
        amount=amount,
        data=data,
        sources=_check_sources(account, sources),
        transactionMethod=transaction_method,
        transactionNumber=transaction_number,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    uow = _bumped(ctx, account)
    uow.record_event("billing.disbursement.create", _disbursement_event(record))
    if advance_to in DISBURSEMENT_STEPS:
        held = (
            billing_repository.credit_balance(ctx.tenant, account, chosen).balance
            if advance_to != DisbursementState.DRAFT
            else None
        )
        while record.disbursementState != advance_to:
            record = _moved(ctx, uow, record, NEXT_STEP[record.disbursementState], held)
    repository.add(uow, ctx.tenant, DISBURSEMENT, account, record)
    uow.commit()
    return record


def add_migrated_disbursement(
    ctx: CallContext,
    uow: UnitOfWork,
    account: str,
    locator: str,
    type_name: str,
    currency: str,
    amount: Decimal,
    time: datetime,
    created_by: str,
    data: dict[str, Any],
) -> Disbursement:
    """Add to `uow` a disbursement a migration brings (chalicelib/migration), executed in the source at `time`
    out of the account's credit balance: its record and event (its ledger line is one of the credit moves of
    payments/service.add_migrated). 400 for an unconfigured type."""
    record = Disbursement(
        locator=locator,
        accountLocator=account,
        currency=currency,
        disbursementState=DisbursementState.EXECUTED,
        type=disbursement_type(ctx, type_name),
        amount=amount,
        data=data,
        sources=_check_sources(account, []),
        validationResult={"success": True},
        executedAt=time,
        createdAt=time,
        createdBy=created_by,
        updatedAt=time,
        updatedBy=created_by,
    )
    repository.add(uow, ctx.tenant, DISBURSEMENT, account, record)
    uow.record_event("billing.disbursement.execute", _disbursement_event(record))
    return record


MOVES: dict[str, tuple[tuple[DisbursementState, ...], DisbursementState, str]] = {
    "validate": ((DisbursementState.DRAFT,), DisbursementState.VALIDATED, "billing.disbursement.validate"),
    "reset": ((DisbursementState.VALIDATED,), DisbursementState.DRAFT, "billing.disbursement.reset"),
    "approve": ((DisbursementState.VALIDATED,), DisbursementState.APPROVED, "billing.disbursement.approve"),
    "execute": ((DisbursementState.APPROVED,), DisbursementState.EXECUTED, "billing.disbursement.execute"),
    "reject": (
        (DisbursementState.VALIDATED, DisbursementState.APPROVED),
        DisbursementState.REJECTED,
        "billing.disbursement.reject",
    ),
    "reverse": ((DisbursementState.EXECUTED,), DisbursementState.REVERSED, "billing.disbursement.reverse"),
    "discard": (
        (DisbursementState.DRAFT, DisbursementState.VALIDATED),
        DisbursementState.DISCARDED,
        "billing.disbursement.discard",
    ),
}
"""What each operation on a disbursement takes it from, to, and the event it records."""
NEXT_STEP = {
    DisbursementState.DRAFT: "validate",
    DisbursementState.VALIDATED: "approve",
    DisbursementState.APPROVED: "execute",
}


def move_disbursement(ctx: CallContext, locator: str, move: str) -> Disbursement:
    """One step of a disbursement (MOVES). Validating, approving and executing it are refused with 409
    when the credit balance holds less than its amount; executing pays the amount out of the balance,
    reversing puts it back."""
    current = disbursement(ctx, locator)
    uow = _bumped(ctx, current.accountLocator)
    changed = _moved(ctx, uow, current, move)
    repository.save(uow, ctx.tenant, DISBURSEMENT, changed.accountLocator, changed, current.version)
    uow.commit()
    return changed.model_copy(update={"version": current.version + 1})


def _moved(
    ctx: CallContext, uow: UnitOfWork, current: Disbursement, move: str, held: Decimal | None = None
) -> Disbursement:
    """Add to `uow` the money and event of one step, and answer the disbursement after it (not saved);
    `held`: the credit balance, when read already."""
    allowed, to, event = MOVES[move]
    if current.disbursementState not in allowed:
        raise codes.DISBURSEMENT_INVALID_STATE(
            f"Disbursement {current.locator} is {current.disbursementState.value} and cannot {move}"
        )
    changes: dict[str, Any] = {"disbursementState": to, "updatedAt": ctx.now, "updatedBy": ctx.user_locator}
    if move in ("validate", "approve", "execute"):  # never validated nor approved beyond what it can draw
        _balance(ctx, current.accountLocator, current.currency, current.amount, "disbursement", held)
    if move == "validate":
        disbursement_type(ctx, current.type)
        changes["validationResult"] = {"success": True}
    elif move == "reset":
        changes["validationResult"] = None
    elif move == "execute":
        ledger.move_credit(
            ctx,
            uow,
            current.accountLocator,
            current.currency,
            -current.amount,
            "disbursement",
            DISBURSEMENT,
            current.locator,
        )
        changes["executedAt"] = ctx.now
    elif move == "reverse":
        ledger.move_credit(
            ctx,
            uow,
            current.accountLocator,
            current.currency,
            current.amount,
            "disbursement reversed",
            DISBURSEMENT,
            current.locator,
        )
        changes["reversedAt"] = ctx.now
    changed = current.model_copy(update=changes)
    uow.record_event(event, _disbursement_event(changed))
    return changed


def _disbursement_event(record: Disbursement) -> dict[str, Any]:
    return {"disbursementLocator": record.locator}


# --- excess credit plans -------------------------------------------------------------------------------


def settle_excess_credit(
    ctx: CallContext, account_locator: str, currency: str, *, apply_to_invoices: bool
) -> tuple[str | None, str | None]:
    """What the account's excess credit plan does with its credit balance in `currency`: with
    `apply_to_invoices` and `autoApplyExcessToInvoicesEnabled`, apply it to the open invoices, oldest due
    first (an executed credit distribution); then, with `disburseExcess`, pay out what exceeds the
    currency's `disbursementThresholds` and the disbursements still pending (a disbursement of
    `disbursementType` advanced to `advanceDisbursementTo`). Answers their locators (None: not made)."""
    account = accounts.get_account(ctx, account_locator)
    plan = configuration.billing_plans(ctx).excess_credit_plan(account.excessCreditPlanName)
    if plan is None:
        return None, None
    applied = (
        _auto_apply(ctx, account.locator, currency)
        if apply_to_invoices and plan.auto_apply_excess_to_invoices
        else None
    )
    if not (plan.disburse_excess and plan.disbursement_type):
        return applied, None
    held = billing_repository.credit_balance(ctx.tenant, account.locator, currency).balance
    pending = sum(
        (
            d.amount
            for d in billing_repository.all_of(
                ctx.tenant, "account", account.locator, repository.LIST[DISBURSEMENT], DISBURSEMENT, Disbursement
            )
            if d.currency == currency and d.disbursementState in DISBURSEMENT_STEPS[:-1]
        ),
        ZERO,
    )
    excess = held - plan.disbursement_thresholds.get(currency, ZERO) - pending
    if excess <= 0:
        return applied, None
    made = create_disbursement(
        ctx,
        account.locator,
        plan.disbursement_type,
        excess,
        currency,
        [],
        {},
        advance_to=DisbursementState(plan.advance_disbursement_to.value),
    )
    return applied, made.locator


def _auto_apply(ctx: CallContext, account: str, currency: str) -> str | None:
    """Apply the whole credit balance to the open invoices: an executed distribution of what they took."""
    uow, version = _bumped_to(ctx, account)
    held = billing_repository.credit_balance(ctx.tenant, account, currency).balance
    if held <= 0:
        return None
    record = CreditDistribution(
        executedVersion=version,
        locator=new_locator(),
        accountLocator=account,
        currency=currency,
        creditDistributionState=CreditDistributionState.EXECUTED,
        amount=held,
        sources=[PaymentTarget(containerLocator=account, containerType=ContainerType.ACCOUNT)],
        targets=[],
        executedAt=ctx.now,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    record.applications, record.appliedAmount, changes = apply_credit(
        ctx, uow, account, currency, held, [], record.locator
    )
    if not record.appliedAmount:
        return None
    record.amount = record.appliedAmount
    repository.add(uow, ctx.tenant, DISTRIBUTION, account, record)
    uow.record_event("billing.creditdistribution.create", _distribution_event(record))
    uow.record_event("billing.creditdistribution.distribute", _distribution_event(record))
    staging.commit(ctx, uow, staging.add(ctx, uow, account, changes))
    return record.locator
