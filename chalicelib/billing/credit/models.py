"""What draws on an account's credit balance (socotra-semantics.md §4.4): credit distributions, which
apply it to invoices, and disbursements, which pay it out. Funds move only when one is executed; a
reversal puts them back. Both live in the account's billing partition."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from chalicelib.billing.models import PaymentTarget


class CreditDistributionState(StrEnum):
    DRAFT = "draft"
    VALIDATED = "validated"
    EXECUTED = "executed"
    REVERSED = "reversed"
    DISCARDED = "discarded"


class CreditDistribution(BaseModel):
    locator: str
    accountLocator: str
    currency: str
    creditDistributionState: CreditDistributionState
    amount: Decimal
    """At most this much of the credit balance is applied to the targets."""
    sources: list[PaymentTarget]
    targets: list[PaymentTarget]
    """In order; none: the account's open invoices, oldest due first."""
    applications: list[str] = []
    """`invoice/application` locators of what executing it put on invoices."""
    appliedAmount: Decimal = Decimal(0)
    """What executing it took from the credit balance (the targets may hold less than `amount`)."""
    validationResult: dict[str, Any] | None = None
    executedAt: datetime | None = None
    executedVersion: int | None = None
    """The version executing it bumped its account's billing root to: billing writes of an account in
    the order they were made (a payment's reversal takes back the distributions executed after it)."""
    reversedAt: datetime | None = None
    reversalReason: str | None = None
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1


class DisbursementState(StrEnum):
    DRAFT = "draft"
    VALIDATED = "validated"
    APPROVED = "approved"
    EXECUTED = "executed"
    REVERSED = "reversed"
    REJECTED = "rejected"
    DISCARDED = "discarded"


DISBURSEMENT_STEPS = (
    DisbursementState.DRAFT,
    DisbursementState.VALIDATED,
    DisbursementState.APPROVED,
    DisbursementState.EXECUTED,
)
"""The way a disbursement goes when nobody rejects or discards it."""


class Disbursement(BaseModel):
    locator: str
    accountLocator: str
    currency: str
    disbursementState: DisbursementState
    type: str
    """A disbursement type of the configuration (`disbursements`)."""
    amount: Decimal
    data: dict[str, Any] = {}
    sources: list[PaymentTarget]
    transactionMethod: str | None = None
    transactionNumber: str | None = None
    validationResult: dict[str, Any] | None = None
    executedAt: datetime | None = None
    reversedAt: datetime | None = None
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1
