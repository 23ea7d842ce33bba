"""Invoices, the applications of money to them, and invoicing and generation jobs as stored
(billing/models.py: what billing's packages share)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel

from chalicelib.billing.models import JobStatus, SourceType


class InvoiceState(StrEnum):
    OPEN = "open"
    SETTLED = "settled"
    DISCARDED = "discarded"
    """Only a migration brings one (the source discarded it): it shows what it billed, owes nothing (its
    remaining amounts are 0), is never due, and takes no payment, write-off or settlement."""


class InvoiceItemFields(BaseModel):
    """What an invoice item's record and its answer (invoices/schemas.py's InvoiceItemResponse) share."""

    locator: str
    invoiceLocator: str
    timezone: str
    chargeCategory: str
    chargeType: str
    amount: Decimal
    remainingAmount: Decimal | None = None
    installmentItemLocators: list[str]
    transactionLocators: list[str]
    policyLocator: str | None = None
    quoteLocator: str | None = None
    elementStaticLocator: str | None = None
    elementType: str | None = None
    settlementTime: datetime | None = None
    unsettledTime: datetime | None = None


class InvoiceItem(InvoiceItemFields):
    remainingAmount: Decimal
    """Always set on the record (the answer's may be null)."""


class ItemPages(BaseModel):
    """Where the items of an invoice beyond those its record holds are (invoices/repository.py)."""

    pageSet: str
    count: int
    digest: str
    """Of the items they hold: a rewrite whose paged items are the same keeps the pages."""


class Invoice(BaseModel):
    locator: str
    accountLocator: str
    billingContainer: str
    invoiceState: InvoiceState
    invoiceType: str = "normal"
    invoiceNumber: str | None = None
    currency: str
    timezone: str
    startTime: datetime
    endTime: datetime
    dueTime: datetime
    generatedTime: datetime
    generateTime: datetime | None = None
    """When its installments were to be generated (their earliest generate time)."""
    autopayTime: datetime | None = None
    suppressAutopay: bool = False
    settledTime: datetime | None = None
    unsettledTime: datetime | None = None
    totalAmount: Decimal
    totalRemainingAmount: Decimal
    creditedAmount: Decimal = Decimal(0)
    """What settling the invoice (zero or negative) put on the account's credit balance."""
    writeOffLocators: list[str] = []
    """The write-offs that settled some of it (its credits list them)."""
    owedFor: str | None = None
    """Our extension: the payment whose reversal made this invoice of what was disbursed of its credit
    (the account owes it; the invoice bills no installment)."""
    invoiceItems: list[InvoiceItem]
    """All of them, as read (the record holds the first INLINE_ITEMS, its `itemPages` the rest)."""
    itemPages: ItemPages | None = None
    installmentLocators: list[str]
    policyLocators: list[str]
    quoteLocators: list[str] = []
    createdAt: datetime
    createdBy: str
    version: int = 1


class Application(BaseModel):
    """Money put on an invoice (or taken off it, when negative) by a payment or the credit balance."""

    locator: str
    invoiceLocator: str
    sourceType: SourceType
    sourceLocator: str
    amount: Decimal
    itemAmounts: dict[str, Decimal]
    """Invoice item locator -> the part of `amount` it took (all of them, however stored: over
    invoices/repository.APPLICATION_INLINE_AMOUNTS they are kept in pages beside the record, which holds none)."""
    createdAt: datetime
    reversed: bool = False
    reversedAt: datetime | None = None
    amountPages: int | None = None
    """As stored: how many pages hold `itemAmounts` (None: the record holds them)."""


class InvoicingJob(BaseModel):
    """An early invoicing (InvoicingJobData): what it was asked to invoice and the invoices it made."""

    locator: str
    accountLocator: str
    jobStatus: JobStatus
    invoicingType: str
    installmentsToBeInvoiced: list[str]
    invoiceLocators: list[str] = []
    timezone: str | None = None
    invoiceDueTime: datetime | None = None
    invoiceThroughTime: datetime | None = None
    ignoreHolds: bool = False
    processingErrors: str | None = None
    createdAt: datetime
    completedAt: datetime | None = None


class InvoiceGenerationJob(BaseModel):
    """One run that generated an account's invoices at their generate time (InvoiceGenerationJob)."""

    locator: str
    accountLocator: str
    generateTime: datetime
    invoiceLocators: list[str]
    jobStatus: JobStatus = JobStatus.FINISHED
    createdAt: datetime
    createdBy: str
    completedAt: datetime
