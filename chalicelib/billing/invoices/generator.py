"""Installments become invoices (DECISIONS.md "Billing", socotra-semantics.md §4.3). Pure: no I/O.

At a generate moment, the uninvoiced installments of one billing container (the account, or a policy
billed on its own) with the same currency and due time form one invoice; installment items of the same
policy, element and charge type are summed into one invoice item. Locators derive from what the
invoice is made of, so generating the same installments again makes the same invoice (a retried run
collides instead of billing twice) unless the caller names them (`locate`: seed -> locator).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime
from decimal import Decimal

from chalicelib.billing.models import Installment, Invoice, InvoiceItem, InvoiceState
from chalicelib.core.ids import derived_locator

Locate = Callable[[str], str]


def generate(installments: Iterable[Installment], now: datetime, created_by: str,
             locate: Locate | None = None) -> list[Invoice]:
    """The invoices of `installments` (all of one account, uninvoiced), oldest due first. The
    installments and their items are given the locators of their invoice and invoice item."""
    groups: dict[tuple[str, str, datetime], list[Installment]] = defaultdict(list)
    for installment in installments:
        groups[(installment.billingContainer, installment.currency, installment.dueTime)].append(installment)
    chosen = locate or (lambda seed: derived_locator(now, seed))
    invoices = [_invoice(sorted(group, key=lambda i: i.locator), now, created_by, chosen)
                for _, group in sorted(groups.items(), key=lambda entry: (entry[0][2], entry[0][0], entry[0][1]))]
    return invoices


def _invoice(installments: list[Installment], now: datetime, created_by: str, locate: Locate) -> Invoice:
    first = installments[0]
    locator = locate("invoice:" + ",".join(i.locator for i in installments))
    items: dict[tuple[str, str, str, str], list[tuple[Installment, int]]] = defaultdict(list)
    for installment in installments:
        installment.invoiceLocator = locator
        for index, item in enumerate(installment.installmentItems):
            items[(installment.policyLocator, item.elementStaticLocator, item.chargeType,
                   item.chargeCategory)].append((installment, index))
    invoice_items = []
    for (policy, element, charge_type, category), parts in items.items():
        item_locator = locate(f"invoiceItem:{locator}:{policy}:{element}:{charge_type}:{category}")
        amount = Decimal(0)
        for installment, index in parts:
            installment_item = installment.installmentItems[index]
            installment_item.invoiceItemLocator = item_locator
            amount += installment_item.amount
        invoice_items.append(InvoiceItem(
            locator=item_locator, invoiceLocator=locator, timezone=first.timezone, chargeCategory=category,
            chargeType=charge_type, amount=amount, remainingAmount=amount,
            installmentItemLocators=[i.installmentItems[n].locator for i, n in parts],
            transactionLocators=sorted({i.transactionLocator for i, _ in parts}), policyLocator=policy,
            quoteLocator=next((i.quoteLocator for i, _ in parts if i.quoteLocator), None),
            elementStaticLocator=element,
            elementType=parts[0][0].installmentItems[parts[0][1]].elementType,
        ))
    total = sum((item.amount for item in invoice_items), Decimal(0))
    return Invoice(
        locator=locator, accountLocator=first.accountLocator, billingContainer=first.billingContainer,
        invoiceState=InvoiceState.OPEN, currency=first.currency, timezone=first.timezone,
        startTime=min(i.installmentStartTime for i in installments),
        endTime=max(i.installmentEndTime for i in installments),
        dueTime=first.dueTime, generatedTime=now, generateTime=min(i.generateTime for i in installments),
        autopayTime=min(i.autopayTime for i in installments),
        totalAmount=total, totalRemainingAmount=total, invoiceItems=invoice_items,
        installmentLocators=[i.locator for i in installments],
        policyLocators=sorted({i.policyLocator for i in installments}),
        quoteLocators=sorted({i.quoteLocator for i in installments if i.quoteLocator}),
        createdAt=now, createdBy=created_by,
    )
