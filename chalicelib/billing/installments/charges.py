"""The charges billing bills (the OpenAPI definition's `fetchChargesByAccount`, `fetchChargesByPolicy` and
`fetchChargesByTransaction`): a finance user reconciles them against the installments they were spread over.

Billing bills the charges of every transaction once issued (installments/service.py `bill_transaction`: an
aggregate's parts with it), so the charges of a policy are those of its transactions that were issued, a
reversed one's too (the reversal's charges take them back), in issue order and each transaction's charges in
its own order; an account's are those of its policies, oldest policy first. They are read where they are
kept, with the policy's transactions: one strongly consistent Query of the policy's collection a policy,
and the account's policies one at a time, only as many as the page needs. The invoice fees billing adds to
invoices are invoice items, not charges of a transaction.
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.accounts import service as accounts
from chalicelib.core.context import CallContext
from chalicelib.core.paging import MAX_COUNT, Page, PageRequest
from chalicelib.policies import service as policies
from chalicelib.policies.models import IssuedStack, Transaction
from chalicelib.priceable.models import Charge


@dataclass(frozen=True)
class BilledCharge:
    """A charge with what it was billed for: its policy's account and currency, its transaction, and the
    aggregate that bundled that transaction (if any)."""

    charge: Charge
    account_locator: str
    currency: str
    policy_locator: str
    transaction_locator: str
    bundle_transaction_locator: str | None


def of_transaction(ctx: CallContext, locator: str, page: PageRequest, *, include_all: bool) -> Page[BilledCharge]:
    """The transaction's charges; with `include_all`, an aggregate's also those of the transactions it bundles
    (all it billed). 404 `transaction.not_found` for a transaction the tenant does not have."""
    stack = policies.transaction_stack(ctx, locator)
    by_locator = {t.locator: t for t in stack.transactions}
    transaction = by_locator[locator]
    parts = (
        [by_locator[part] for part in transaction.aggregatedTransactionLocators if part in by_locator]
        if include_all
        else []
    )
    return Page.window(_billed(stack, [transaction, *parts]), page)


def of_policy(ctx: CallContext, locator: str, page: PageRequest) -> Page[BilledCharge]:
    """The charges of the policy's issued transactions (404 `policy.not_found` for an unknown policy)."""
    stack = policies.issued_stack(ctx, locator)
    return Page.window(_billed(stack, _issued(stack)), page)


def of_account(ctx: CallContext, locator: str, page: PageRequest) -> Page[BilledCharge]:
    """The charges of the account's policies, oldest policy first, read until the page is full (404
    `account.not_found` for an unknown account)."""
    account = accounts.get_account(ctx, locator)
    wanted = page.offset + page.count + 1
    found: list[BilledCharge] = []
    listed = PageRequest(0, MAX_COUNT)
    while len(found) < wanted:
        held = policies.policies_of_account(ctx, account.locator, listed)
        for policy in held.items:
            stack = policies.issued_stack(ctx, policy.locator)
            found.extend(_billed(stack, _issued(stack)))
            if len(found) >= wanted:
                break
        if held.list_completed:
            break
        listed = PageRequest(listed.offset + MAX_COUNT, MAX_COUNT)
    return Page.window(found, page)


def _issued(stack: IssuedStack) -> list[Transaction]:
    """Every transaction of the policy that was issued (and so billed), a reversed one too, in issue order; an
    aggregate's parts right after it, in the order they apply (as billing bills them)."""
    order = {t.locator: index for index, t in enumerate(stack.transactions)}
    by_locator = {t.locator: t for t in stack.transactions}
    issued = sorted(
        (t for t in stack.transactions if t.issuedTime is not None and not t.aggregateTransactionLocator),
        key=lambda t: (t.issuedTime, order[t.locator]),
    )
    return [
        each
        for t in issued
        for each in (t, *(by_locator[part] for part in t.aggregatedTransactionLocators if part in by_locator))
    ]


def _billed(stack: IssuedStack, transactions: list[Transaction]) -> list[BilledCharge]:
    policy = stack.policy
    return [
        BilledCharge(
            charge=charge,
            account_locator=policy.accountLocator,
            currency=policy.currency,
            policy_locator=policy.locator,
            transaction_locator=transaction.locator,
            bundle_transaction_locator=transaction.aggregateTransactionLocator,
        )
        for transaction in transactions
        for charge in transaction.charges
    ]
