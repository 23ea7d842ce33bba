"""Helpers of the plugin contract's unit tests."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from chalicelib.plugins.contract import build_request


def request(currency: str = "USD", duration: str = "0.5") -> dict[str, Any]:
    """A plugin request of a quote of the Auto product: one Vehicle with a Collision coverage, half a year."""
    return build_request(
        tenant_locator="tenant-1",
        product_name="Auto",
        kind="quote",
        locator="Q1",
        transaction_category=None,
        start_time=datetime(2026, 1, 1, tzinfo=timezone.utc),
        end_time="2027-01-01T00:00:00.000Z",
        currency=currency,
        timezone="America/New_York",
        duration_basis="years",
        account={"locator": "A1", "type": "Person", "data": {"name": "Ann"}, "ignored": True},
        static={"channel": "web"},
        segment_start=datetime(2026, 1, 1, tzinfo=timezone.utc),
        segment_end=datetime(2026, 7, 2, 12, tzinfo=timezone.utc),
        duration=Decimal(duration),
        element={
            "locator": "P1",
            "staticLocator": "SP1",
            "type": "AutoQuote",
            "data": {"x": 1},
            "elements": [
                {
                    "locator": "V1",
                    "staticLocator": "SV1",
                    "type": "Vehicle",
                    "elements": [{"locator": "C1", "type": "Collision", "coverageTerms": {"Deductible": "d500"}}],
                }
            ],
        },
    )
