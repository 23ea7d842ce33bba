"""Installments become invoices (DECISIONS.md "Billing", socotra-semantics.md §4.3). Pure: no I/O.

At a generate moment, the uninvoiced installments of one billing container (the account, or a policy
billed on its own) and currency are grouped into invoices as the invoicing plan's `installmentGrouping`
says, and installment items of the same policy, element and charge type are summed into one invoice item:

- `matching` names what installments on one invoice share besides the run: `generateTime` (the default)
  nothing more (every installment a run invoices is generated at its moment), `startTime` their
  installment start; `all` puts every installment of the run on one invoice, whatever the window;
- `window` says how their due times go together: `startAndEnd` (the default) one invoice per due time
  (with the default matching: DECISIONS.md's one invoice per due time); `start` due times are not
  matched; `catchUp` installments already due when invoiced (backdated ones) go on one catch-up invoice,
  the others one invoice per due time.

An invoice is due at the earliest due time of its installments. Whatever the grouping, an installment
of a charge invoiced `immediate` is invoiced on its own invoice (one per transaction and due time), and
an installment of charges invoiced `next` (a rider) rides on the next invoice its container gets: it
joins the earliest due group of its container and currency, taking its due time, and waits otherwise.

Locators derive from what the invoice is made of, so generating the same installments again makes the
same invoice (a retried run collides instead of billing twice) unless the caller names them (`locate`:
seed -> locator).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from datetime import datetime
from decimal import Decimal

from chalicelib.billing.installments.models import ChargeInvoicing, Installment
from chalicelib.billing.invoices.models import Invoice, InvoiceItem, InvoiceState
from chalicelib.configuration.billing_plans import GroupingMatch, GroupingWindow, InstallmentGrouping
from chalicelib.core.ids import derived_locator

Locate = Callable[[str], str]
DEFAULT_GROUPING = InstallmentGrouping()


def generate(
    installments: Iterable[Installment],
    now: datetime,
    created_by: str,
    locate: Locate | None = None,
    grouping: InstallmentGrouping = DEFAULT_GROUPING,
    riders: Sequence[Installment] = (),
) -> list[Invoice]:
    """The invoices of `installments` (all of one account, uninvoiced), oldest due first, with the
    `riders` that find a group. The installments and their items are given the locators of their
    invoice and invoice item."""
    chosen = locate or (lambda seed: derived_locator(now, seed))
    return [invoice(group, now, created_by, chosen) for group in groups(installments, now, grouping, riders)]


def groups(
    installments: Iterable[Installment],
    now: datetime,
    grouping: InstallmentGrouping = DEFAULT_GROUPING,
    riders: Sequence[Installment] = (),
) -> list[list[Installment]]:
    """The installments of each invoice, oldest due first; a rider joins the earliest due group of its
    container and currency (its due time becomes the group's), or none when there is no such group."""
    found: dict[tuple[Hashable, ...], list[Installment]] = defaultdict(list)
    for installment in installments:
        found[group_key(installment, now, grouping)].append(installment)
    ordered = [
        sorted(group, key=lambda i: i.locator)
        for _, group in sorted(
            found.items(), key=lambda entry: (min(i.dueTime for i in entry[1]), tuple(map(str, entry[0])))
        )
    ]
    for rider in riders:
        host = next(
            (
                group
                for group in ordered
                if group[0].billingContainer == rider.billingContainer and group[0].currency == rider.currency
            ),
            None,
        )
        if host is not None:
            rider.dueTime = min(i.dueTime for i in host)
            host.append(rider)
    return ordered


def group_key(installment: Installment, now: datetime, grouping: InstallmentGrouping) -> tuple[Hashable, ...]:
    """What installments on one invoice have in common."""
    key: tuple[Hashable, ...] = (installment.billingContainer, installment.currency)
    if installment.invoicing == ChargeInvoicing.IMMEDIATE:
        return (*key, ChargeInvoicing.IMMEDIATE.value, installment.transactionLocator, installment.dueTime)
    if grouping.matching == GroupingMatch.ALL:
        return key
    if grouping.matching == GroupingMatch.START_TIME:
        key += (installment.installmentStartTime,)
    if grouping.window == GroupingWindow.START_AND_END:
        key += (installment.dueTime,)
    elif grouping.window == GroupingWindow.CATCH_UP:
        key += ("catchUp",) if installment.dueTime <= now else (installment.dueTime,)
    return key


def invoice(installments: list[Installment], now: datetime, created_by: str, locate: Locate) -> Invoice:
    """The one invoice of `installments`."""
    first = installments[0]
    locator = locate("invoice:" + ",".join(i.locator for i in installments))
    items: dict[tuple[str, str, str, str], list[tuple[Installment, int]]] = defaultdict(list)
    for installment in installments:
        installment.invoiceLocator = locator
        for index, item in enumerate(installment.installmentItems):
            items[(installment.policyLocator, item.elementStaticLocator, item.chargeType, item.chargeCategory)].append(
                (installment, index)
            )
    invoice_items = []
    for (policy, element, charge_type, category), parts in items.items():
        item_locator = locate(f"invoiceItem:{locator}:{policy}:{element}:{charge_type}:{category}")
        amount = Decimal(0)
        for installment, index in parts:
            installment_item = installment.installmentItems[index]
            installment_item.invoiceItemLocator = item_locator
            amount += installment_item.amount
        invoice_items.append(
            InvoiceItem(
                locator=item_locator,
                invoiceLocator=locator,
                timezone=first.timezone,
                chargeCategory=category,
                chargeType=charge_type,
                amount=amount,
                remainingAmount=amount,
                installmentItemLocators=[i.installmentItems[n].locator for i, n in parts],
                transactionLocators=sorted({i.transactionLocator for i, _ in parts}),
                policyLocator=policy,
                quoteLocator=next((i.quoteLocator for i, _ in parts if i.quoteLocator), None),
                elementStaticLocator=element,
                elementType=parts[0][0].installmentItems[parts[0][1]].elementType,
            )
        )
    total = sum((item.amount for item in invoice_items), Decimal(0))
    return Invoice(
        locator=locator,
        accountLocator=first.accountLocator,
        billingContainer=first.billingContainer,
        invoiceState=InvoiceState.OPEN,
        currency=first.currency,
        timezone=first.timezone,
        startTime=min(i.installmentStartTime for i in installments),
        endTime=max(i.installmentEndTime for i in installments),
        dueTime=min(i.dueTime for i in installments),
        generatedTime=now,
        generateTime=min(i.generateTime for i in installments),
        autopayTime=min(i.autopayTime for i in installments),
        suppressAutopay=not any(i.autopay for i in installments),
        totalAmount=total,
        totalRemainingAmount=total,
        invoiceItems=invoice_items,
        installmentLocators=[i.locator for i in installments],
        policyLocators=sorted({i.policyLocator for i in installments}),
        quoteLocators=sorted({i.quoteLocator for i in installments if i.quoteLocator}),
        createdAt=now,
        createdBy=created_by,
    )
