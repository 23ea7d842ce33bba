"""Billing records as stored (DECISIONS.md "Billing"; socotra-semantics.md §4): installment lattices,
installments, invoices, payments, the applications of money to invoices and the account's credit
balance with its ledger lines. Every record of an account lives in the account's billing partition; its
writes bump the billing roots of the containers they change (repository.py), so invoicing and payments
of one container never interleave. Field names are the platform's (the responses are these models, mostly).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel


class InvoiceState(StrEnum):
    OPEN = "open"
    SETTLED = "settled"
    DISCARDED = "discarded"
    """Only a migration brings one (the source discarded it): it shows what it billed, owes nothing (its
    remaining amounts are 0), is never due, and takes no payment, write-off or settlement."""


class PaymentState(StrEnum):
    DRAFT = "draft"
    VALIDATED = "validated"
    POSTED = "posted"
    REVERSED = "reversed"
    DISCARDED = "discarded"
    REQUESTED = "requested"
    """Its execution is asked of the payment provider: it is posted, or fails, when the provider answers."""
    FAILED = "failed"
    CANCELLED = "cancelled"


class ContainerType(StrEnum):
    INVOICE = "invoice"
    ACCOUNT = "account"
    SUBPAYMENT = "subpayment"
    INVOICE_ITEM = "invoiceItem"


class ChargeInvoicing(StrEnum):
    """When a charge is invoiced (`ChargeRef.invoicing`): spread over the installments (`scheduled`), on
    the next invoice of its container (`next`), or at once on an invoice of its own (`immediate`)."""

    SCHEDULED = "scheduled"
    NEXT = "next"
    IMMEDIATE = "immediate"


class SourceType(StrEnum):
    """What put money on an invoice: a payment, or the account's credit balance (a negative invoice,
    an overpayment)."""

    PAYMENT = "payment"
    CREDIT_BALANCE = "creditBalance"


class LatticeFrame(BaseModel):
    installmentStartTime: datetime
    installmentEndTime: datetime
    coverageStartTime: datetime
    coverageEndTime: datetime
    installmentDuration: Decimal
    coverageDuration: Decimal
    normalizedWeight: Decimal
    generateTime: datetime
    dueTime: datetime
    autopayTime: datetime


class InstallmentLattice(BaseModel):
    """The frames one issued transaction is billed over (from its effective time to its term's end)."""

    locator: str
    accountLocator: str
    policyLocator: str
    billingContainer: str
    transactionLocator: str
    termLocator: str
    quoteLocator: str | None = None
    currency: str
    timezone: str
    termStartTime: datetime
    termEndTime: datetime
    effectiveTime: datetime
    reversalLattice: bool = False
    installmentPlanName: str | None = None
    frames: list[LatticeFrame]
    createdAt: datetime
    createdBy: str


class InstallmentItem(BaseModel):
    locator: str
    installmentLocator: str
    chargeLocator: str
    elementLocator: str
    elementStaticLocator: str
    elementType: str | None = None
    chargeType: str
    chargeCategory: str
    amount: Decimal
    invoiceItemLocator: str | None = None
    createdAt: datetime
    createdBy: str


class Installment(BaseModel):
    locator: str
    installmentLatticeLocator: str
    accountLocator: str
    policyLocator: str
    transactionLocator: str
    termLocator: str
    quoteLocator: str | None = None
    currency: str
    timezone: str
    installmentFrameIndex: int
    installmentStartTime: datetime
    installmentEndTime: datetime
    coverageStartTime: datetime
    coverageEndTime: datetime
    installmentDuration: Decimal
    coverageDuration: Decimal
    generateTime: datetime
    dueTime: datetime
    autopayTime: datetime
    invoiceLocator: str | None = None
    installmentItems: list[InstallmentItem]
    billingContainer: str
    """The account locator, or the policy locator when the policy is billed on its own invoices."""
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    invoicing: ChargeInvoicing = ChargeInvoicing.SCHEDULED
    """How the charges it bills are invoiced: a lattice's frames bill its `scheduled` charges, and one
    more installment each its `next` and its `immediate` ones (invoices/generator.py)."""
    autopay: bool = False
    """Its installment plan (or the preferences) sets `autopayLeadDays`: its invoice is paid at its autopay
    time (billing/payments/autopay.py)."""

    @property
    def amount(self) -> Decimal:
        return sum((item.amount for item in self.installmentItems), Decimal(0))


class InvoiceItem(BaseModel):
    locator: str
    invoiceLocator: str
    timezone: str
    chargeCategory: str
    chargeType: str
    amount: Decimal
    remainingAmount: Decimal
    installmentItemLocators: list[str]
    transactionLocators: list[str]
    policyLocator: str | None = None
    quoteLocator: str | None = None
    elementStaticLocator: str | None = None
    elementType: str | None = None
    settlementTime: datetime | None = None
    unsettledTime: datetime | None = None


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
    """Invoice item locator -> the part of `amount` it took."""
    createdAt: datetime
    reversed: bool = False
    reversedAt: datetime | None = None


class InvoiceCredit(BaseModel):
    """One credit of an invoice as its credits list shows it (CreditResponse): a payment's or a credit
    distribution's application, or what a write-off settled of it."""

    locator: str
    """The payment, credit distribution or write-off."""
    creditType: str
    creditState: str
    amount: Decimal
    createdAt: datetime
    reversedAt: datetime | None = None


class PaymentTarget(BaseModel):
    containerLocator: str
    containerType: ContainerType
    amount: Decimal | None = None


class Payment(BaseModel):
    locator: str
    accountLocator: str
    paymentState: PaymentState
    type: str
    currency: str
    amount: Decimal
    data: dict[str, Any] = {}
    targets: list[PaymentTarget] = []
    transactionMethod: str | None = None
    transactionNumber: str | None = None
    paymentNumber: str | None = None
    applications: list[str] = []
    """Locators of the applications posting made (their invoices list the payment)."""
    creditedAmount: Decimal = Decimal(0)
    """What posting put on the account's credit balance."""
    postedAt: datetime | None = None
    postedVersion: int | None = None
    """The version posting it bumped its account's billing root to (credit/models.py executedVersion)."""
    reversedAt: datetime | None = None
    reversedBy: str | None = None
    reversalReason: str | None = None
    validationResult: dict[str, Any] | None = None
    anonymizedAt: datetime | None = None
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1


class LedgerLine(BaseModel):
    """A move of the account's credit balance: `credit` raises it, `debit` lowers it."""

    locator: str
    currency: str
    accountingType: str
    amount: Decimal
    note: str
    sourceType: str
    sourceLocator: str
    time: datetime


class CreditBalance(BaseModel):
    accountLocator: str
    currency: str
    balance: Decimal = Decimal(0)


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


class InstallmentJob(BaseModel):
    """What the billing of one issued transaction did (InstallmentJobData): its lattice and installments,
    or why it failed (a failed one can be retried)."""

    locator: str
    referenceLocator: str
    referenceType: str = "transaction"
    policyLocator: str | None = None
    quoteLocator: str | None = None
    latticeLocator: str = ""
    installmentLocators: list[str] = []
    jobStatus: JobStatus
    jobType: str = "createOrUpdate"
    processingErrors: str = ""
    retries: int = 0
    createdAt: datetime
    completedAt: datetime | None = None


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


class HoldState(StrEnum):  # the states of a billing hold (holds/models.py)
    DRAFT = "draft"
    VALIDATED = "validated"
    ACTIVE = "active"
    DISCARDED = "discarded"
    RELEASED = "released"


class HoldTarget(StrEnum):  # what a billing hold holds: the account's invoicing or its delinquency handling
    INVOICING = "invoicing"
    DELINQUENCY = "delinquency"
