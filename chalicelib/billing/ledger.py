"""The account's credit balance and its ledger: every move of the balance, with its ledger line, goes
through here (invoices that put credit on it, payments, credit distributions, disbursements, write-offs),
as does what an excess credit plan does after a move (a job of credit/job_handlers). A leaf of billing:
it imports none of billing's sub-packages."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import Account
from chalicelib.billing import repository
from chalicelib.billing.models import CreditBalance, LedgerLine
from chalicelib.configuration import service as configuration
from chalicelib.core.context import CallContext
from chalicelib.core.errors import ErrorCode, FieldError
from chalicelib.core.ids import new_locator
from chalicelib.core.paging import MAX_COUNT, PageRequest
from chalicelib.policies import service as policies
from chalicelib.quotes import service as quotes
from chalicelib.runtime import jobs
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.wiring import UnitOfWork


def credit_moves(
    ctx: CallContext,
    uow: UnitOfWork,
    account: str,
    currency: str,
    held: Decimal,
    moves: Sequence[tuple[Decimal, str, str, str]],
) -> None:
    """Move the account's credit balance (`held` now) by each (amount, note, source type, source) of
    `moves`, a ledger line each, in one write of the balance."""
    lines = [
        LedgerLine(
            locator=new_locator(),
            currency=currency,
            accountingType="credit" if amount > 0 else "debit",
            amount=abs(amount),
            note=note,
            sourceType=source_type,
            sourceLocator=source,
            time=ctx.now,
        )
        for amount, note, source_type, source in moves
    ]
    uow.add(
        *repository.credit_writes(
            ctx.tenant,
            CreditBalance(
                accountLocator=account, currency=currency, balance=held + sum((m[0] for m in moves), Decimal(0))
            ),
            *lines,
        )
    )


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
    raise code(
        f"Account {account} is billed in {default} and the currencies of its policies and quotes, not in {currency}",
        field_errors=[FieldError("currency", "not a currency of the account")],
    )


def credit_balance(
    ctx: CallContext, account_locator: str, currency: str | None, page: PageRequest
) -> tuple[CreditBalance, list[LedgerLine]]:
    account = accounts.get_account(ctx, account_locator)
    chosen = (currency or configuration.current_model(ctx, resolved=True)[1].get("defaultCurrency") or "USD").upper()
    balance = repository.credit_balance(ctx.tenant, account.locator, chosen)
    return balance, repository.ledger_lines(ctx.tenant, account.locator, chosen, page).items


def move_credit(
    ctx: CallContext,
    uow: UnitOfWork,
    account: str,
    currency: str,
    amount: Decimal,
    note: str,
    source_type: str,
    source: str,
) -> None:
    """Move the account's credit balance by `amount` (negative: down) in `uow`, with its ledger line."""
    balance = repository.credit_balance(ctx.tenant, account, currency)
    credit_moves(ctx, uow, account, currency, balance.balance, [(amount, note, source_type, source)])


def excess_credit_job(
    ctx: CallContext, uow: UnitOfWork, account: Account | str, currency: str, *, apply_to_invoices: bool
) -> None:
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
    jobs.enqueue(
        uow,
        JobType.BILLING_EXCESS_CREDIT,
        {"accountLocator": found.locator, "currency": currency, "applyToInvoices": apply_to_invoices},
    )
