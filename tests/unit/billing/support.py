"""What the billing calculators' unit tests share: the policy term's start, the real time of the tests, an
installment built from (element, charge type, amount) items, and an open invoice built from (item locator,
amount) items."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

from chalicelib.billing.installments.models import Installment, InstallmentItem
from chalicelib.billing.invoices.models import Invoice, InvoiceItem, InvoiceState

START = datetime(2026, 2, 1, 5, tzinfo=timezone.utc)
"""The policy term's start (midnight in New York)."""
NOW = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)
"""The real time of the tests (tests/conftest.py's clock)."""


def installment(
    locator: str, due: datetime, items: list[tuple[str, str, str]], container: str = "A", policy: str = "P1"
) -> Installment:
    return Installment(
        locator=locator,
        installmentLatticeLocator="L",
        accountLocator="A",
        policyLocator=policy,
        transactionLocator=f"T{locator}",
        termLocator="TERM",
        currency="USD",
        timezone="America/New_York",
        installmentFrameIndex=0,
        installmentStartTime=due,
        installmentEndTime=due + timedelta(days=30),
        coverageStartTime=due,
        coverageEndTime=due + timedelta(days=30),
        installmentDuration=Decimal(1),
        coverageDuration=Decimal(1),
        generateTime=due - timedelta(days=10),
        dueTime=due,
        autopayTime=due,
        billingContainer=container,
        createdAt=NOW,
        createdBy="u",
        updatedAt=NOW,
        updatedBy="u",
        installmentItems=[
            InstallmentItem(
                locator=f"{locator}-{n}",
                installmentLocator=locator,
                chargeLocator=f"C{n}",
                elementLocator=element,
                elementStaticLocator=element,
                chargeType=charge_type,
                chargeCategory=charge_type,
                amount=Decimal(amount),
                createdAt=NOW,
                createdBy="u",
            )
            for n, (element, charge_type, amount) in enumerate(items)
        ],
    )


def open_invoice(locator: str, due: datetime, items: list[tuple[str, str]]) -> Invoice:
    amounts = [Decimal(amount) for _, amount in items]
    return Invoice(
        locator=locator,
        accountLocator="A",
        billingContainer="A",
        invoiceState=InvoiceState.OPEN,
        currency="USD",
        timezone="America/New_York",
        startTime=due,
        endTime=due + timedelta(days=30),
        dueTime=due,
        generatedTime=NOW,
        totalAmount=sum(amounts, Decimal(0)),
        totalRemainingAmount=sum(amounts, Decimal(0)),
        installmentLocators=[],
        policyLocators=["P1"],
        createdAt=NOW,
        createdBy="u",
        invoiceItems=[
            InvoiceItem(
                locator=item,
                invoiceLocator=locator,
                timezone="America/New_York",
                chargeCategory="premium",
                chargeType="premium",
                amount=amount,
                remainingAmount=amount,
                installmentItemLocators=[],
                transactionLocators=[],
            )
            for (item, _), amount in zip(items, amounts)
        ],
    )
