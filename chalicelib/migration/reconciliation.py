"""Reconciliation of an account's billing records before anything of it is written (issue 29; DECISIONS.md
"Migration"): the source's own tooling only checks that accounts arrived, we check that they add up.

Per account: each installment item names an installment its transaction brings, each installment an invoice
the account brings; an invoice's total is the sum of its installments' items (in its installments' currency,
which a stated currency must equal); payment items name invoices of the account in the payment's currency;
the invoices' stated settlement (`open`, `settled`, `discarded`) agrees with what the payments cover (settled:
exactly the total; open: less; discarded: nothing, a discarded invoice owes nothing); payment items are
positive; starting credit balances are non-negative, in ISO currencies. A migration that joins an existing
account may pay the account's invoices too (a payment item's `invoiceId` the original id an earlier migration
brought one with, or its locator): each must be open, in the payment's currency, and owe at least what the
migration's payments pay of it. Every difference is reported by the original id of its entity, naming both
amounts.

(The installment items of each charge adding up to the charge is checked with the charge, service._policy.)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from chalicelib.billing.invoices.models import Invoice, InvoiceState
from chalicelib.core import money
from chalicelib.migration.models import (
    AccountMigrationRequest,
    ElementMigrationRequest,
    InstallmentItemMigrationRequest,
    MigrationRequest,
)


@dataclass
class Differences:
    """What does not reconcile, by original id of the entity (the account's own under `account`)."""

    policies: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    invoices: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    payments: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    disbursements: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    account: list[str] = field(default_factory=list)


def reconcile(
    request: MigrationRequest,
    currencies: Mapping[str, str],
    default_currency: str,
    existing: Mapping[str, Invoice] | None = None,
) -> Differences:
    """The differences of the account's records; `currencies`: each policy's (by original id) currency;
    `existing`: the invoices the account has already that payment items name, by what they name (an original id
    or a locator); what they pay is reconciled per invoice (by locator)."""
    existing = existing or {}
    found = Differences()
    invoices = {invoice.id: invoice for invoice in request.invoices}
    totals: dict[str, Decimal] = {original: Decimal(0) for original in invoices}
    billed_in: dict[str, set[str]] = defaultdict(set)
    named: set[str] = set()
    for policy in request.policies:
        currency = currencies.get(policy.id, default_currency)
        for term_number, term in enumerate(policy.terms):
            for index, transaction in enumerate(term.transactions):
                if not transaction.installments:
                    continue  # no billed installments of its own: billing builds them from its charges
                at = f"terms[{term_number}].transactions[{index}]"
                for position, installment in enumerate(transaction.installments):
                    if installment.invoiceId not in invoices:
                        found.policies[policy.id].append(
                            f"{at}.installments[{position}] ({installment.id}): its invoice "
                            f"{installment.invoiceId!r} is not among the account's invoices"
                        )
                    else:
                        named.add(installment.invoiceId)
                        billed_in[installment.invoiceId].add(currency)
                root = transaction.segment.rootElement if transaction.segment else None
                for item in _items(root):
                    if not 1 <= item.installmentNumber <= len(transaction.installments):
                        found.policies[policy.id].append(
                            f"{at}: installment item {item.id} names installment {item.installmentNumber}, the "
                            f"transaction brings {len(transaction.installments)}"
                        )
                        continue
                    invoice_id = transaction.installments[item.installmentNumber - 1].invoiceId
                    if invoice_id in totals:
                        totals[invoice_id] += item.amount
    for original, invoice in invoices.items():
        if original not in named:
            found.invoices[original].append(f"invoice {original}: no installment of the account names it")
        stated = invoice.currency
        of_installments = sorted(billed_in[original])
        if len(of_installments) > 1:
            found.invoices[original].append(
                f"invoice {original}: its installments are billed in {', '.join(of_installments)}"
            )
        elif stated and of_installments and stated != of_installments[0]:
            found.invoices[original].append(
                f"invoice {original}: its currency is {stated}, its installments' {of_installments[0]}"
            )
    covered: dict[str, Decimal] = defaultdict(Decimal)
    paying: dict[str, list[str]] = defaultdict(list)
    labels: dict[str, str] = {}
    for payment in request.payments:
        currency = payment.currency or default_currency
        for position, paid_item in enumerate(payment.paymentItems):
            at = f"payment {payment.id}: paymentItems[{position}]"
            if paid_item.amount <= 0:
                found.payments[payment.id].append(f"{at}: its amount {paid_item.amount} is not positive")
            target = invoices.get(paid_item.invoiceId)
            earlier = existing.get(paid_item.invoiceId) if target is None else None
            if earlier is not None:
                label = _named(paid_item.invoiceId, earlier)
                if earlier.invoiceState != InvoiceState.OPEN:
                    found.payments[payment.id].append(
                        f"{at}: the account's invoice {label} is {earlier.invoiceState}, it owes nothing"
                    )
                elif earlier.currency != currency:
                    found.payments[payment.id].append(
                        f"{at}: the payment is in {currency}, the account's invoice {label} in {earlier.currency}"
                    )
                else:
                    covered[earlier.locator] += paid_item.amount
                    paying[earlier.locator].append(payment.id)
                    labels.setdefault(earlier.locator, label)
                continue
            if target is None:
                found.payments[payment.id].append(
                    f"{at}: invoice {paid_item.invoiceId!r} is not among the account's invoices"
                )
                continue
            invoice_currency = _currency_of(target.currency, billed_in[paid_item.invoiceId], default_currency)
            if invoice_currency != currency:
                found.payments[payment.id].append(
                    f"{at}: the payment is in {currency}, invoice {paid_item.invoiceId} in {invoice_currency}"
                )
                continue
            covered[paid_item.invoiceId] += paid_item.amount
    for original, invoice in invoices.items():
        total, paid = totals[original], covered[original]
        if invoice.invoiceState == "discarded" and paid:
            found.invoices[original].append(
                f"invoice {original}: stated discarded (it owes nothing), its installments' items total {total}, "
                f"its payments cover {paid}"
            )
        elif paid > total:
            found.invoices[original].append(
                f"invoice {original}: its installments' items total {total}, its payments cover {paid}"
            )
        elif invoice.invoiceState == "settled" and paid != total:
            found.invoices[original].append(
                f"invoice {original}: stated settled, its installments' items total {total}, its payments cover {paid}"
            )
        elif invoice.invoiceState == "open" and total > 0 and paid == total:
            found.invoices[original].append(
                f"invoice {original}: stated open, its installments' items total {total}, its payments cover "
                f"{paid} (all of it)"
            )
    for locator, earlier in {invoice.locator: invoice for invoice in existing.values()}.items():
        if covered[locator] > earlier.totalRemainingAmount:
            for payment_id in dict.fromkeys(paying[locator]):
                found.payments[payment_id].append(
                    f"payment {payment_id}: the account's invoice {labels[locator]} has {earlier.totalRemainingAmount} "
                    f"remaining, the migration's payments pay {covered[locator]} of it"
                )
    if isinstance(request, AccountMigrationRequest) and request.accounting is not None:
        for currency, amount in request.accounting.originalAccountBalances.items():
            if len(currency) != 3 or not currency.isalpha() or not currency.isupper():
                found.account.append(
                    f"accounting.originalAccountBalances: {currency!r} is not an ISO 4217 currency code"
                )
            elif amount < 0:
                found.account.append(
                    f"accounting.originalAccountBalances.{currency}: the starting credit balance "
                    f"{amount} is negative (credit balances are 0 or more)"
                )
    for disbursement in request.disbursements:
        at = f"disbursement {disbursement.id}"
        currency = disbursement.currency or default_currency
        if len(currency) != 3 or not currency.isalpha() or not currency.isupper():
            found.disbursements[disbursement.id].append(f"{at}: currency {currency!r} is not an ISO 4217 code")
            continue
        if not disbursement.sources:
            found.disbursements[disbursement.id].append(f"{at}: no source says what it paid out")
        for index, source in enumerate(disbursement.sources):
            if source.amount <= 0:
                found.disbursements[disbursement.id].append(
                    f"{at}: sources[{index}].amount {source.amount} is not positive"
                )
            elif source.amount != money.round_money(source.amount, currency):
                found.disbursements[disbursement.id].append(
                    f"{at}: sources[{index}].amount {source.amount} is not an amount of {currency}"
                )
    return found


def disbursed(request: MigrationRequest, default_currency: str) -> list[tuple[str, Decimal]]:
    """Each disbursement's (currency, amount): the sum of its sources."""
    return [
        (given.currency or default_currency, sum((source.amount for source in given.sources), Decimal(0)))
        for given in request.disbursements
    ]


def _named(name: str, invoice: Invoice) -> str:
    """An existing invoice as the payment item names it: its locator, or its original id with its locator."""
    return invoice.locator if name == invoice.locator else f"{name} ({invoice.locator})"


def _currency_of(stated: str | None, of_installments: set[str], default: str) -> str:
    return stated or (min(of_installments) if of_installments else default)


def _items(element: ElementMigrationRequest | None) -> Iterable[InstallmentItemMigrationRequest]:
    if element is None:
        return
    for charge in element.charges:
        yield from charge.installmentItems
    for child in element.elements:
        yield from _items(child)
