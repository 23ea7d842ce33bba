"""Installment lattices, installments and installment jobs as stored (billing/models.py: what billing's
packages share)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel

from chalicelib.billing.models import JobStatus


class ChargeInvoicing(StrEnum):
    """When a charge is invoiced (`ChargeRef.invoicing`): spread over the installments (`scheduled`), on
    the next invoice of its container (`next`), or at once on an invoice of its own (`immediate`)."""

    SCHEDULED = "scheduled"
    NEXT = "next"
    IMMEDIATE = "immediate"


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
