"""A write-off as stored (spec part 3 "Write-offs"; socotra-semantics.md §4.6): what it settled on each
invoice, item by item, so that a reversal re-opens exactly that. It lives in its account's billing
partition, beside the invoices it touched, and never moves the credit balance."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel

from chalicelib.billing.models import PaymentTarget

ZERO = Decimal(0)


class WriteOffState(StrEnum):
    DRAFT = "draft"
    DISTRIBUTED = "distributed"
    REVERSED = "reversed"


class WriteOffCreditType(StrEnum):
    WRITE_OFF = "writeOff"
    SHORTFALL_WRITE_OFF = "shortfallWriteOff"
    """Written off by posting a payment short of an invoice by no more than the shortfall tolerance."""


class WriteOffAllocation(BaseModel):
    """What the write-off settled on one invoice: `itemAmounts` by invoice item, and what reversals gave
    back of it (`reversedItemAmounts`)."""

    invoiceLocator: str
    itemAmounts: dict[str, Decimal]
    reversedItemAmounts: dict[str, Decimal] = {}
    total: Decimal | None = None
    """As stored when the write-off's item amounts are in pages (`WriteOff.amountPages`): what it settled on the
    invoice (the sum of `itemAmounts`, which the record then lacks); read whole, the pages give them back."""

    @property
    def amount(self) -> Decimal:
        if self.total is not None and not self.itemAmounts:
            return self.total
        return sum(self.itemAmounts.values(), ZERO)

    def held(self, item: str) -> Decimal:
        """What the write-off still settles of `item`."""
        return self.itemAmounts.get(item, ZERO) - self.reversedItemAmounts.get(item, ZERO)

    @property
    def held_amount(self) -> Decimal:
        return sum((self.held(item) for item in self.itemAmounts), ZERO)


class WriteOff(BaseModel):
    locator: str
    accountLocator: str
    currency: str
    writeOffState: WriteOffState
    creditType: WriteOffCreditType = WriteOffCreditType.WRITE_OFF
    amount: Decimal
    reversedAmount: Decimal = ZERO
    """Our extension: what partial (or full) reversals gave back; the write-off is `reversed` when it is all."""
    targets: list[PaymentTarget]
    """As asked, each with the amount it wrote off."""
    allocations: list[WriteOffAllocation]
    amountPages: int | None = None
    """As stored: how many pages hold the allocations' item amounts (None: the record holds them)."""
    policyLocators: list[str] = []
    reversalReason: str | None = None
    reversedAt: datetime | None = None
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1
