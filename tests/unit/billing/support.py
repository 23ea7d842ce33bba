"""What the billing calculators' unit tests share: the policy term's start, the real time of the tests, and an
installment built from (element, charge type, amount) items."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

from chalicelib.billing.models import Installment, InstallmentItem

START = datetime(2026, 2, 1, 5, tzinfo=timezone.utc)
"""The policy term's start (midnight in New York)."""
NOW = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)
"""The real time of the tests (tests/conftest.py's clock)."""


def installment(locator: str, due: datetime, items: list[tuple[str, str, str]], container: str = "A",
                policy: str = "P1") -> Installment:
    return Installment(
        locator=locator, installmentLatticeLocator="L", accountLocator="A", policyLocator=policy,
        transactionLocator=f"T{locator}", termLocator="TERM", currency="USD", timezone="America/New_York",
        installmentFrameIndex=0, installmentStartTime=due, installmentEndTime=due + timedelta(days=30),
        coverageStartTime=due, coverageEndTime=due + timedelta(days=30), installmentDuration=Decimal(1),
        coverageDuration=Decimal(1), generateTime=due - timedelta(days=10), dueTime=due, autopayTime=due,
        billingContainer=container, createdAt=NOW, createdBy="u", updatedAt=NOW, updatedBy="u",
        installmentItems=[InstallmentItem(
            locator=f"{locator}-{n}", installmentLocator=locator, chargeLocator=f"C{n}", elementLocator=element,
            elementStaticLocator=element, chargeType=charge_type, chargeCategory=charge_type, amount=Decimal(amount),
            createdAt=NOW, createdBy="u") for n, (element, charge_type, amount) in enumerate(items)])
