"""Persistence of invoices, their open markers and references, the applications of money to them, and
invoicing and generation jobs (billing/repository.py has what billing's packages share: keys, aliases,
references, staged changes, the roots)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from chalicelib.billing import repository
from chalicelib.billing.installments.models import ChargeInvoicing, Installment
from chalicelib.billing.invoices.models import (
    Application,
    Invoice,
    InvoiceGenerationJob,
    InvoiceState,
    InvoicingJob,
    ItemPages,
)
from chalicelib.core import records
from chalicelib.core.clock import isoformat
from chalicelib.core.paging import Page, PageRequest
from chalicelib.storage import keys, query, table
from chalicelib.storage.table import WriteOp
from chalicelib.storage.unit_of_work import UnitOfWork

INVOICE_REFS = "INV"
"""The reference kind of an invoice under its policies and quotes."""


NONZERO_INVOICES = "NZINV"


def shown_invoices(tenant: str, account: str, locators: list[str]) -> dict[str, tuple[dict[str, Any], list[str]]]:
    """For each of the invoices that carries the staged rewrite of a committed change not rolled forward
    yet: the record as that change has it (what readers see) and the attributes stored beside it that it
    lacks. A staged rewrite of such an invoice writes that record too: should the new change never commit,
    readers still see the committed one (nothing is read for invoices without a staged rewrite but the
    invoices themselves)."""
    items = [
        item
        for item in table.gateway().batch_get(
            repository.scope(tenant),
            [repository.record_key(tenant, account, "invoice", locator) for locator in locators],
        )
        if repository.STAGED in item
    ]
    committed = (
        repository.committed_tokens(tenant, account, {item[repository.STAGED]["token"] for item in items})
        if items
        else set()
    )
    shown = {}
    for item in items:
        if item[repository.STAGED]["token"] in committed:
            record = item[repository.STAGED]["item"]
            shown[item["locator"]] = (
                record,
                [name for name in item if name not in record and name not in ("PK", "SK", repository.STAGED)],
            )
    return shown


INLINE_ITEMS = 50
"""The items an invoice's record holds; the rest (a fleet's invoice: thousands) are in pages beside it."""


INLINE_LOCATORS = 50
"""The locators of each list of them an invoice's record holds (`PAGED_LOCATORS`); the rest are in its pages
(a fleet's invoice lists thousands of installments, a thousand policies), so its record's size is bounded
whatever it bills."""


PAGED_LOCATORS = ("installmentLocators", "policyLocators", "quoteLocators")


PAGE_BYTES = 96_000
"""What one page of an invoice's items holds at most, as JSON (a DynamoDB item holds 400 KB; a transaction of
staged pages 4 MB)."""


Entry = tuple[str, str]
"""One paged value: the page attribute it is kept in (repository.PAGE_ATTRIBUTES) and its JSON."""


def stored_pages(invoice: Invoice) -> ItemPages | None:
    """Where the invoice's items beyond INLINE_ITEMS (and its locators beyond INLINE_LOCATORS) are once it is
    written: the pages it names when they hold those, else a new set (derived from the invoice, its version and
    what they hold: every call for one write names the same set), None when it has no more."""
    entries = _entries(invoice)
    if not entries:
        return None
    digest = hashlib.sha256(
        "\n".join(value if name == repository.PAGE_ENTRIES else f"{name}:{value}" for name, value in entries).encode()
    ).hexdigest()
    if invoice.itemPages is not None and invoice.itemPages.digest == digest:
        return invoice.itemPages
    page_set = hashlib.sha256(f"{invoice.locator}:{invoice.version}:{digest}".encode()).hexdigest()[:20]
    return ItemPages(pageSet=page_set, count=len(_pages(entries)), digest=digest)


def _entries(invoice: Invoice) -> list[Entry]:
    return [
        *((repository.PAGE_ENTRIES, i.model_dump_json(exclude_none=True)) for i in invoice.invoiceItems[INLINE_ITEMS:]),
        *(
            (name, json.dumps(locator))
            for name in PAGED_LOCATORS
            for locator in getattr(invoice, name)[INLINE_LOCATORS:]
        ),
    ]


def _pages(entries: list[Entry]) -> list[dict[str, list[str]]]:
    pages: list[dict[str, list[str]]] = []
    for group in records.packed(entries, lambda entry: len(entry[1]), PAGE_BYTES):
        pages.append({})
        for name, value in group:
            pages[-1].setdefault(name, []).append(value)
    return pages


def _record(invoice: Invoice) -> Invoice:
    """The invoice as its record holds it: its first items and locators, and where the rest are."""
    return invoice.model_copy(
        update={
            "invoiceItems": invoice.invoiceItems[:INLINE_ITEMS],
            **{name: getattr(invoice, name)[:INLINE_LOCATORS] for name in PAGED_LOCATORS},
            "itemPages": stored_pages(invoice),
        }
    )


def invoice_item(tenant: str, invoice: Invoice) -> dict[str, Any]:
    """The whole item of an invoice's record, as stored (its items and locators beyond those it holds in
    `page_writes`)."""
    return repository.record_item(tenant, invoice.accountLocator, "invoice", _record(invoice))


def page_writes(tenant: str, invoice: Invoice) -> list[WriteOp]:
    """The pages of the invoice's items beyond INLINE_ITEMS (and locators beyond INLINE_LOCATORS) when the
    invoice does not name them yet (a new set: unseen until its record names it), one write each."""
    return [table.put(item) for item in _page_items(tenant, invoice)]


def write_pages(tenant: str, invoice: Invoice) -> None:
    """`page_writes` written now, ahead of the write of the record that names them (a staged invoice's), with
    BatchWriteItem: a new set is unseen until then, so it needs no transaction, and a write outside one costs
    half the write units (1 a KB, not 2: ~5 MB of pages for a fleet's 5,000 items). A write that never names
    them leaves them unread."""
    items = _page_items(tenant, invoice)
    if items:
        table.gateway().batch_write(repository.scope(tenant), items)


def _page_items(tenant: str, invoice: Invoice) -> list[dict[str, Any]]:
    pages = stored_pages(invoice)
    if pages is None or pages == invoice.itemPages:
        return []
    account = invoice.accountLocator
    return [
        {
            **keys.billing_item_page(tenant, account, invoice.locator, pages.pageSet, number).as_dict(),
            "entity": "invoiceItemPage",
            "invoiceLocator": invoice.locator,
            **{name: "[" + ",".join(values) + "]" for name, values in page.items()},
        }
        for number, page in enumerate(_pages(_entries(invoice)))
    ]


def staged_keys(tenant: str, invoice: Invoice) -> list[keys.Key]:
    """The records a staged invoice writes ahead of its record (`write_pages`, `staged_invoice_writes`): its item
    pages and its references under its policies and quotes, keys of its own locator that nothing else names.
    Taken before that write: `discard_staged` removes them should the record's write fail."""
    pages = stored_pages(invoice)
    page_keys = (
        [
            keys.billing_item_page(tenant, invoice.accountLocator, invoice.locator, pages.pageSet, number)
            for number in range(pages.count)
        ]
        if pages is not None and pages != invoice.itemPages
        else []
    )
    return [*page_keys, *(op.key for op in staged_invoice_writes(tenant, invoice))]


def discard_staged(tenant: str, written: list[keys.Key]) -> None:
    """Deletes `staged_keys`' records (whether or not each was written: BatchWriteItem, unconditional)."""
    table.gateway().batch_delete(repository.scope(tenant), written)


def retired_page_writes(tenant: str, invoice: Invoice) -> list[WriteOp]:
    """The deletes of the pages the invoice names when its write names others (or none)."""
    old = invoice.itemPages
    if old is None or stored_pages(invoice) == old:
        return []
    return [
        table.delete(keys.billing_item_page(tenant, invoice.accountLocator, invoice.locator, old.pageSet, number))
        for number in range(old.count)
    ]


def as_written(invoice: Invoice) -> Invoice:
    """The invoice as its write leaves it: naming its pages."""
    return invoice.model_copy(update={"itemPages": stored_pages(invoice)})


INVOICE_WRITE_RECORDS = 17
"""What the write of an invoice holds besides its installments and references: its container's billing
root, the invoice, its alias, its number's guard, the account's reference of nonzero invoices, the open
marker, two events, the credit balance and its ledger line, its due entry (delinquency), its autopay
entry, its document's job, documents job and instance, and two to spare (an invoice that puts credit on
the balance also bumps the account's root, and has neither open marker nor due entries)."""


def fits_one_invoice_write(installments: list[Installment], besides: int = 0) -> bool:
    """Whether one TransactWriteItems holds the invoice of `installments` (and `besides` other actions)."""
    return besides + invoice_write_size(installments) <= table.MAX_TRANSACTION_ITEMS


def invoice_write_size(installments: list[Installment]) -> int:
    """At most what the write of the invoice of `installments` holds: INVOICE_WRITE_RECORDS, two records for each
    installment (it is rewritten, its uninvoiced marker deleted) and two for each policy and quote (their
    references, and their references of nonzero invoices)."""
    owners = {i.policyLocator for i in installments} | {i.quoteLocator for i in installments if i.quoteLocator}
    riders = sum(1 for i in installments if i.invoicing == ChargeInvoicing.NEXT)  # and their reference deleted
    return INVOICE_WRITE_RECORDS + 2 * len(installments) + riders + 2 * len(owners)


def _owners(invoice: Invoice) -> list[tuple[str, str | None]]:
    return [*(("policy", p) for p in invoice.policyLocators), *(("quote", q) for q in invoice.quoteLocators)]


def staged_invoice_writes(tenant: str, invoice: Invoice) -> list[WriteOp]:
    """What of a new invoice grows with it besides its item pages (`write_pages`): its references under its
    policies and quotes, written before its record (`invoice_writes(staged=True)`): nothing reads them until
    the record exists."""
    account = invoice.accountLocator
    writes = [
        *repository.ref_writes(tenant, "invoice", INVOICE_REFS, invoice.locator, account, _owners(invoice)),
    ]
    if invoice.totalAmount != 0:
        writes += repository.ref_writes(tenant, "invoice", NONZERO_INVOICES, invoice.locator, account, _owners(invoice))
    return writes


def invoice_writes(tenant: str, invoice: Invoice, *, staged: bool = False) -> list[WriteOp]:
    """A new invoice: itself, its alias, its open marker (when open) and its references (`staged`: but those
    `staged_invoice_writes` wrote)."""
    account = invoice.accountLocator
    owners = [] if staged else _owners(invoice)
    writes = [
        table.put_new(invoice_item(tenant, invoice)),
        *([] if staged else page_writes(tenant, invoice)),
        repository.alias_write(tenant, "invoice", invoice.locator, account, invoice.billingContainer),
        *repository.ref_writes(tenant, "invoice", INVOICE_REFS, invoice.locator, account, owners),
    ]
    if invoice.totalAmount != 0:
        writes += repository.ref_writes(
            tenant, "invoice", NONZERO_INVOICES, invoice.locator, account, [*owners, ("account", account)]
        )
    if invoice.invoiceState == InvoiceState.OPEN:
        writes.append(table.put(_open_marker(tenant, invoice)))
    return writes


def _open_marker(tenant: str, invoice: Invoice) -> dict[str, Any]:
    return {
        **keys.billing_open_invoice(
            tenant, invoice.accountLocator, isoformat(invoice.dueTime), invoice.locator
        ).as_dict(),
        "entity": "openInvoice",
        "locator": invoice.locator,
    }


def invoice_update_writes(tenant: str, invoice: Invoice, was_open: bool) -> list[WriteOp]:
    """The rewrite of a changed invoice (conditional on its version), of its item pages when its paged items
    changed (a new set, the old one deleted), and of its open marker."""
    fields = _record(invoice).model_dump(exclude={"locator", "version"})
    writes = [
        table.update(
            repository.record_key(tenant, invoice.accountLocator, "invoice", invoice.locator),
            {name: value for name, value in fields.items() if value is not None},
            remove=[*(name for name, value in fields.items() if value is None), repository.STAGED],
            expected_version=invoice.version,
        ),
        *page_writes(tenant, invoice),
        *retired_page_writes(tenant, invoice),
    ]
    is_open = invoice.invoiceState == InvoiceState.OPEN
    marker = keys.billing_open_invoice(tenant, invoice.accountLocator, isoformat(invoice.dueTime), invoice.locator)
    if is_open and not was_open:
        writes.append(table.put(_open_marker(tenant, invoice)))
    elif was_open and not is_open:
        writes.append(table.delete(marker))
    return writes


def open_invoices(tenant: str, account: str) -> list[Invoice]:
    """The account's open invoices, oldest due first (a marker a staged change has not rolled forward yet
    may name one it settled)."""
    markers = query.all_items(
        table.gateway(),
        repository.scope(tenant),
        keys.billing_partition(tenant, account),
        sk_prefix=keys.BILLING_OPEN_PREFIX,
        consistent=True,
    )
    return [
        i
        for i in repository.get_many(tenant, account, "invoice", [m["locator"] for m in markers], Invoice)
        if i.invoiceState == InvoiceState.OPEN
    ]


def account_invoices(tenant: str, account: str, page: PageRequest, *, include_zero: bool) -> Page[Invoice]:
    if not include_zero:
        return repository.page_of(tenant, "account", account, NONZERO_INVOICES, "invoice", Invoice, page)
    found = query.page(
        table.gateway(),
        repository.scope(tenant),
        keys.billing_partition(tenant, account),
        page,
        sk_prefix=keys.BILLING_INVOICE_PREFIX,
    )
    return Page(
        [repository.model_of(Invoice, item) for item in repository.visible(tenant, account, found.items)],
        found.list_completed,
    )


APPLICATION_INLINE_AMOUNTS = 1_000
"""The most item amounts an application's record holds (some 30 KB); one of more items (a fleet's invoice paid: 5,000
or 10,000 items) keeps them all in pages of its own beside it (`application_pages`), its record none, so the record
and a staged rewrite of it (a reversal: the record twice) stay small whatever the invoice's size."""
APPLICATION_PAGE_BYTES = PAGE_BYTES
"""What one page of an application's item amounts holds at most, as JSON."""


def application_item(tenant: str, account: str, application: Application) -> dict[str, Any]:
    """The whole item of an application's record (billing/staging.py writes it, or stages it): its item amounts, or
    over APPLICATION_INLINE_AMOUNTS none and the count of the pages that hold them (`application_pages`)."""
    stored = application.model_copy(update={"amountPages": None})
    if len(application.itemAmounts) > APPLICATION_INLINE_AMOUNTS:
        stored = application.model_copy(
            update={"itemAmounts": {}, "amountPages": len(_amount_pages(application.itemAmounts))}
        )
    return {
        **keys.billing_application(tenant, account, application.invoiceLocator, application.locator).as_dict(),
        "entity": "application",
        **stored.model_dump(exclude_none=True),
    }


def application_pages(tenant: str, account: str, application: Application) -> list[dict[str, Any]]:
    """The whole items of the pages of an application's item amounts (none when its record holds them): written
    with a new application, once (unread until its record is seen; a reversal rewrites the record alone)."""
    if len(application.itemAmounts) <= APPLICATION_INLINE_AMOUNTS:
        return []
    return [
        {
            **keys.billing_application_page(
                tenant, account, application.invoiceLocator, application.locator, number
            ).as_dict(),
            "entity": "applicationPage",
            "applicationLocator": application.locator,
            "itemAmounts": page,
        }
        for number, page in enumerate(_amount_pages(application.itemAmounts))
    ]


def page_puts(pages: list[dict[str, Any]]) -> list[WriteOp]:
    """Unconditional puts of the whole items `pages` (an application's, in a unit of work)."""
    return [table.put(page) for page in pages]


def write_added_pages(tenant: str, pages: list[dict[str, Any]]) -> None:
    """The whole items `pages` written now by BatchWriteItem (1 unit a KB), ahead of the write that makes the record
    naming them seen (a staged change's)."""
    if pages:
        table.gateway().batch_write(repository.scope(tenant), pages)


def _amount_pages(amounts: dict[str, Any]) -> list[str]:
    """The item amounts as JSON objects (locator -> amount as text: exact), in order, each of at most
    APPLICATION_PAGE_BYTES."""
    entries = (f"{json.dumps(locator)}:{json.dumps(str(amount))}" for locator, amount in amounts.items())
    return ["{" + ",".join(page) + "}" for page in records.packed(entries, len, APPLICATION_PAGE_BYTES)]


def _with_amounts(tenant: str, account: str, application: Application) -> Application:
    """The application with its item amounts read from its pages when its record holds none (one Query per MB)."""
    if not application.amountPages:
        return application
    prefix = keys.billing_application_pages(tenant, account, application.invoiceLocator, application.locator)
    pages = query.all_items(table.gateway(), repository.scope(tenant), prefix.pk, sk_prefix=prefix.sk, consistent=True)
    amounts: dict[str, Decimal] = {}
    for page in pages[: application.amountPages]:
        amounts.update({locator: Decimal(value) for locator, value in json.loads(page["itemAmounts"]).items()})
    return application.model_copy(update={"itemAmounts": amounts})


def applications_of(tenant: str, account: str, invoice: str) -> list[Application]:
    items = query.all_items(
        table.gateway(),
        repository.scope(tenant),
        keys.billing_partition(tenant, account),
        sk_prefix=f"APP#{invoice}#",
        consistent=True,
    )
    return [
        _with_amounts(tenant, account, repository.model_of(Application, item))
        for item in repository.visible(tenant, account, items)
    ]


def applications(tenant: str, account: str, pairs: Iterable[tuple[str, str]]) -> list[Application]:
    """The applications named by (invoice locator, application locator)."""
    return [
        _with_amounts(tenant, account, repository.model_of(Application, item))
        for item in repository.visible(
            tenant,
            account,
            table.gateway().batch_get(
                repository.scope(tenant),
                [keys.billing_application(tenant, account, invoice, application) for invoice, application in pairs],
            ),
        )
    ]


def add_invoicing_job(uow: UnitOfWork, tenant: str, job: InvoicingJob) -> None:
    uow.add(
        table.put_new(repository.record_item(tenant, job.accountLocator, "invoicingJob", job)),
        repository.alias_write(tenant, "invoicingJob", job.locator, job.accountLocator),
    )


def save_invoicing_job(uow: UnitOfWork, tenant: str, job: InvoicingJob) -> None:
    uow.add(table.put(repository.record_item(tenant, job.accountLocator, "invoicingJob", job)))


def invoicing_job(tenant: str, account: str, locator: str) -> InvoicingJob | None:
    item = table.gateway().get(
        repository.scope(tenant), repository.record_key(tenant, account, "invoicingJob", locator)
    )
    return repository.model_of(InvoicingJob, item) if item else None


def invoicing_jobs(tenant: str, account: str, page: PageRequest) -> Page[InvoicingJob]:
    return repository.records_page(InvoicingJob, tenant, account, page, keys.BILLING_INVOICING_JOB_PREFIX)


def add_generation_job(uow: UnitOfWork, tenant: str, job: InvoiceGenerationJob) -> None:
    uow.add(table.put_new(repository.record_item(tenant, job.accountLocator, "generationJob", job)))


def generation_jobs(tenant: str, account: str, page: PageRequest) -> Page[InvoiceGenerationJob]:
    return repository.records_page(InvoiceGenerationJob, tenant, account, page, keys.BILLING_GENERATION_JOB_PREFIX)
