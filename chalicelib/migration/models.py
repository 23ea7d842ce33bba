"""Migration (spec part 3 "Migration"; DECISIONS.md "Migration"): the request's records as a client sends
them, and the migration's own records: the migration with its counters, each account's state, its id
mappings and its failures.

The request models are the spec's (required fields as it marks them; unknown fields are a 400). Policies,
invoices, payments and disbursements each carry the `id` of the source system: failures and mappings are
keyed by it, and every record written for it has a locator derived from (migration, original ids), so a
rerun of an account writes the same records.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from chalicelib.accounts.models import BillingLevel, InstallmentPreferences
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.priceable.models import DurationBasis, SegmentType

Id = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Name = Annotated[str, StringConstraints(min_length=1, max_length=200)]
MAX_ACCOUNTS = 10_000
"""Accounts one start request may bring (more: several migrations)."""
MAX_ITEMS = 1_000
"""Policies, terms, transactions, invoices or payments one list of the request may hold."""


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MigrationInstallmentPreferences(InstallmentPreferences):
    installmentWeights: list[Decimal] = []


class MigrationBillingPreferences(Input):
    billingPlanName: str | None = None
    billingLevel: BillingLevel | None = None


class MigrationPreferences(Input):
    installmentPreferences: MigrationInstallmentPreferences | None = None
    billingPreferences: MigrationBillingPreferences | None = None


class AccountMigrationData(Input):
    accountType: Name
    id: Id
    data: dict[str, Any] = {}
    createdAt: datetime
    autoRenewalPlanName: Name | None = None
    delinquencyPlanName: Name | None = None
    excessCreditPlanName: Name | None = None
    shortfallTolerancePlanName: Name | None = None
    billingLevel: BillingLevel | None = None
    preferences: MigrationPreferences | None = None
    createdBy: str | None = None


class AccountingMigrationRequest(Input):
    originalAccountBalances: dict[str, Decimal] = {}


class InstallmentItemMigrationRequest(Input):
    amount: Decimal
    id: Id
    installmentNumber: int = Field(ge=1)


class ChargeMigrationRequest(Input):
    chargeType: Name
    tag: str
    rate: Decimal
    referenceRate: Decimal
    installmentItems: list[InstallmentItemMigrationRequest] = Field(default=[], max_length=MAX_ITEMS)


class ElementMigrationRequest(Input):
    elementType: Name
    id: Id
    data: dict[str, Any] = {}
    charges: list[ChargeMigrationRequest] = Field(default=[], max_length=MAX_ITEMS)
    coverageTerms: dict[str, Any] = {}
    elements: list[Self] = Field(default=[], max_length=MAX_ITEMS)


class SegmentMigrationRequest(Input):
    startTime: datetime
    rootElement: ElementMigrationRequest
    segmentType: SegmentType


class InstallmentMigrationRequest(Input):
    startTime: datetime
    dueTime: datetime
    generateTime: datetime
    id: Id
    invoiceId: Id


class TransactionMigrationRequest(Input):
    issuedTime: datetime
    createdAt: datetime
    transactionType: Name
    createdBy: str | None = None
    installments: list[InstallmentMigrationRequest] = Field(default=[], max_length=MAX_ITEMS)
    preferences: MigrationPreferences | None = None
    segment: SegmentMigrationRequest | None = None


class TermMigrationRequest(Input):
    startTime: datetime
    endTime: datetime
    transactions: list[TransactionMigrationRequest] = Field(min_length=1, max_length=MAX_ITEMS)


class AuxDataEntryMigrationRequest(Input):
    key: str
    value: str


class AuxDataMigrationRequest(Input):
    settingsName: str
    entries: list[AuxDataEntryMigrationRequest] = []


class PolicyMigrationRequest(Input):
    productName: Name
    id: Id
    durationBasis: DurationBasis
    createdAt: datetime
    createdBy: str | None = None
    staticData: dict[str, Any] = {}
    terms: list[TermMigrationRequest] = Field(min_length=1, max_length=MAX_ITEMS)
    autoRenewalPlanName: Name | None = None
    delinquencyPlanName: Name | None = None
    currency: Name | None = None
    timezone: Name | None = None
    auxData: AuxDataMigrationRequest | None = None
    billingLevel: BillingLevel | None = None
    preferences: MigrationPreferences | None = None


class InvoiceMigrationRequest(Input):
    startTime: datetime
    endTime: datetime
    dueTime: datetime
    generateTime: datetime
    id: Id
    currency: Name | None = None
    timezone: Name | None = None
    invoiceState: Literal["open", "settled", "discarded"] | None = None


class PaymentItemMigrationRequest(Input):
    amount: Decimal
    invoiceId: Id


class PaymentMigrationRequest(Input):
    id: Id
    paymentType: Name
    paymentTime: datetime
    data: dict[str, Any] = {}
    paymentItems: list[PaymentItemMigrationRequest] = Field(default=[], max_length=MAX_ITEMS)
    currency: Name | None = None
    createdBy: str | None = None


class CreditItemMigrationRequest(Input):
    amount: Decimal


class DisbursementMigrationRequest(Input):
    disbursementTime: datetime
    disbursementType: Name
    id: Id
    data: dict[str, Any] = {}
    sources: list[CreditItemMigrationRequest] = []
    currency: Name | None = None


class MigrationRequest(Input):
    """For an existing account (`POST .../migrations/accounts/{accountLocator}`)."""

    defaultCreatedBy: str
    disbursements: list[DisbursementMigrationRequest] = Field(default=[], max_length=MAX_ITEMS)
    invoices: list[InvoiceMigrationRequest] = Field(default=[], max_length=MAX_ITEMS)
    payments: list[PaymentMigrationRequest] = Field(default=[], max_length=MAX_ITEMS)
    policies: list[PolicyMigrationRequest] = Field(default=[], max_length=MAX_ITEMS)


class AccountMigrationRequest(MigrationRequest):
    """One new account with everything it brings."""

    accountData: AccountMigrationData
    accounting: AccountingMigrationRequest | None = None


class PatchAccountMigrationRequest(Input):
    """Replaces a failed account's entities by original id (the maps' keys), then reprocesses it."""

    accountLocator: str
    defaultCreatedBy: str
    disbursements: dict[str, DisbursementMigrationRequest] = {}
    invoices: dict[str, InvoiceMigrationRequest] = {}
    payments: dict[str, PaymentMigrationRequest] = {}
    policies: dict[str, PolicyMigrationRequest] = {}
    accountData: AccountMigrationData | None = None


# --- the migration's records ------------------------------------------------------------------------


class MigrationState(StrEnum):
    SUBMITTED = "submitted"
    PROCESSING = "processing"
    PAUSED = "paused"
    FINISHED = "finished"
    FAILED = "failed"
    ERROR = "error"


FINAL_STATES = frozenset({MigrationState.FINISHED, MigrationState.FAILED, MigrationState.ERROR})


class AccountMigrationState(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    """The spec's; not stored since stop 46 (an account goes from `pending` to its end in its one write), but an
    account an earlier version left in it is run as a pending one."""
    ERROR = "error"
    FAILED = "failed"
    COMPLETED = "completed"


DONE = frozenset({AccountMigrationState.ERROR, AccountMigrationState.FAILED, AccountMigrationState.COMPLETED})


class Migration(BaseModel):
    """`run` counts the runs (the start's, then each resume, recover or patch): an account's job is derived from
    (account, run), so each run queues it once. The counters are added to by each account's final write."""

    locator: str
    migrationState: MigrationState
    totalAccounts: int
    processedAccounts: int = 0
    completedAccounts: int = 0
    failedAccounts: int = 0
    errorAccounts: int = 0
    existingAccount: str | None = None
    """The account a `MigrationRequest` brings records to (None: new accounts)."""
    run: int = 0
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    version: int = 1


class AccountMigration(BaseModel):
    """One account of a migration: where its request is (`requestPath`, bytes `requestStart` to
    `requestStart + requestLength` of it) and how far it got."""

    accountLocator: str
    originalId: str
    accountMigrationState: AccountMigrationState = AccountMigrationState.PENDING
    requestPath: str
    requestStart: int
    requestLength: int
    totalItems: int
    processedItems: int = 0
    errorItems: int = 0
    error: str | None = None
    """A system error's message (state `error`)."""
    patches: int = 0
    lastUpdated: datetime
    followUpPath: str | None = None
    """A staged account's writes that follow its commit (its jobs, due entries and events; service.py), in S3
    until all of them are written."""
    followUpsDone: int = 0
    """How many of those writes are done."""


class EntityFailure(BaseModel):
    """ErrorDetailsResponse: what is wrong with one entity of the request."""

    originalId: str
    errors: ValidationResult


class AccountFailures(BaseModel):
    """MigrationFailuresResponse: an account's failed entities, by original id."""

    accountLocator: str
    accountOriginalId: str
    accountError: EntityFailure | None = None
    policies: dict[str, EntityFailure] = {}
    invoices: dict[str, EntityFailure] = {}
    payments: dict[str, EntityFailure] = {}
    disbursements: dict[str, EntityFailure] = {}

    def count(self) -> int:
        return (
            int(self.accountError is not None)
            + len(self.policies)
            + len(self.invoices)
            + len(self.payments)
            + len(self.disbursements)
        )


class MappingObject(BaseModel):
    migratedAt: datetime
    originalId: str
    childrenMappings: dict[str, Any] = {}


class AccountMappings(BaseModel):
    """AccountMigrationIdMappingsResponse: each map keyed by the system locator (DECISIONS.md "Migration")."""

    accountLocator: str
    migrationLocator: str
    originalAccountId: str
    policies: dict[str, MappingObject] = {}
    invoices: dict[str, MappingObject] = {}
    payments: dict[str, MappingObject] = {}
    disbursements: dict[str, MappingObject] = {}
