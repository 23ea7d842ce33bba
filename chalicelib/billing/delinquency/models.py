"""Delinquencies as stored (DECISIONS.md "Billing"; socotra-semantics.md §4.5): the record opened by an
invoice unsettled at its due time, its configured events, and the records of the work that moved them
(create-delinquency, grace and delinquency-event jobs). All of them live in the account's billing
partition, so every change bumps the account's billing root with the invoices and payments it depends on.
Field names are the platform's."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel

from chalicelib.billing.models import JobStatus


class DelinquencyState(StrEnum):
    PRE_GRACE = "preGrace"
    IN_GRACE = "inGrace"
    LAPSE_TRIGGERED = "lapseTriggered"
    LAPSE_TRANSACTION_CREATED = "lapseTransactionCreated"
    SETTLED = "settled"


OPEN_STATES = (DelinquencyState.PRE_GRACE, DelinquencyState.IN_GRACE)
"""A delinquency in these states still waits: a payment settles it, its grace end lapses its policies."""


class DelinquencyEventState(StrEnum):
    ACTIVE = "active"
    TRIGGERED = "triggered"
    CANCELLED = "cancelled"


class CancellationType(StrEnum):
    """Why a delinquency event's job did not run (DelinquencyEventJobData.cancellationType)."""

    CANCELLATION_REQUESTED = "cancellationRequested"
    RESCHEDULED = "rescheduled"
    TENANT_RETIRED = "tenantRetired"
    DELINQUENCY_SETTLED = "delinquencySettled"
    DELINQUENCY_HELD = "delinquencyHeld"


class DelinquencySettings(BaseModel):
    """The delinquency plan as it was when the delinquency opened."""

    lapseTransactionType: str
    gracePeriodDays: int
    advanceLapseTo: str
    delinquencyLevel: str


class ConfiguredDelinquencyEvent(BaseModel):
    name: str
    offsetDays: Decimal
    offsetBasis: str


class DelinquencyReference(BaseModel):
    """A policy or an invoice of the delinquency; a policy's names its lapse transaction once created."""

    locator: str
    delinquencyLocator: str
    referenceLocator: str
    referenceType: str
    transactionLocator: str | None = None


class ReferencePages(BaseModel):
    """Where the references of a delinquency whose record holds none are (delinquency/repository.py
    INLINE_REFERENCES)."""

    pageSet: str
    count: int
    digest: str
    """Of the references they hold: a rewrite whose references are the same keeps the pages."""


class Delinquency(BaseModel):
    locator: str
    accountLocator: str
    billingContainer: str | None = None
    """The billing container of its invoices (None: the account's)."""
    delinquencyState: DelinquencyState
    settings: DelinquencySettings
    timezone: str
    references: list[DelinquencyReference]
    referencePages: ReferencePages | None = None
    """Stored: where its references are when its record holds none (a fleet's); read, they are in `references`."""
    graceStartedAt: datetime
    graceEndAt: datetime
    lapseTransactionEffectiveDate: datetime | None = None
    configuredDelinquencyEvents: list[ConfiguredDelinquencyEvent] = []
    processingErrors: str | None = None
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1

    def of_type(self, reference_type: str) -> list[str]:
        return [r.referenceLocator for r in self.references if r.referenceType == reference_type]

    @property
    def container(self) -> str:
        """Whose billing root its writes bump (billing/repository.py)."""
        return self.billingContainer or self.accountLocator

    @property
    def policy_locators(self) -> list[str]:
        return self.of_type("policy")

    @property
    def invoice_locators(self) -> list[str]:
        return self.of_type("invoice")


class DelinquencyEvent(BaseModel):
    locator: str
    delinquencyLocator: str
    accountLocator: str
    billingContainer: str | None = None
    """Its delinquency's (None: the account's)."""
    name: str
    delinquencyEventState: DelinquencyEventState
    triggerTime: datetime
    triggeredAt: datetime | None = None
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1

    @property
    def container(self) -> str:
        return self.billingContainer or self.accountLocator


class DelinquencyCreateJob(BaseModel):
    """What an invoice's due time did: the delinquencies it opened or joined (none: it was settled)."""

    locator: str
    invoiceLocator: str
    dueTime: datetime
    jobStatus: JobStatus
    delinquencyLocators: list[str]
    processingErrors: str | None = None
    createdAt: datetime
    updatedAt: datetime


class GraceJob(BaseModel):
    """What a delinquency's grace end did (`outcome`: lapsed, held, settled)."""

    locator: str
    delinquencyLocator: str
    jobStatus: JobStatus
    outcome: str | None = None
    processingErrors: str | None = None
    createdAt: datetime
    updatedAt: datetime


class DelinquencyEventJob(BaseModel):
    """The scheduled trigger of one delinquency event: queued until it runs or is cancelled."""

    locator: str
    delinquencyEventLocator: str
    delinquencyLocator: str
    jobStatus: JobStatus
    triggerTime: datetime
    updatedDelinquencyEventLocators: list[str] = []
    cancelled: bool = False
    cancellationType: CancellationType | None = None
    rescheduledByLocator: str | None = None
    processingErrors: str | None = None
    createdAt: datetime
    updatedAt: datetime
