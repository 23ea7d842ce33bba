"""Payments as stored (billing/models.py: what billing's packages share)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from chalicelib.billing.models import PaymentTarget


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
