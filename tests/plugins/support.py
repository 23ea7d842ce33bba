"""Helpers of the plugin tests shared beyond one module: a plugin request for a quote of the Auto product, and a
tenant with plugin files deployed."""

from __future__ import annotations

from decimal import Decimal

from chalicelib.plugins.contract import build_request
from tests.api.configuration.support import new_configured_tenant, package
from tests.builders import system_ctx
from tests.plugins.conftest import NOW


def request(tenant: str, vin: str) -> dict:
    """The plugin request of a quote of the Auto product whose one Vehicle has `vin`."""
    return build_request(
        tenant_locator=tenant,
        product_name="Auto",
        kind="quote",
        locator="Q1",
        transaction_category=None,
        start_time=NOW,
        end_time="2027-01-15T09:30:00.000Z",
        currency="USD",
        timezone="UTC",
        duration_basis="years",
        account={"locator": "A1", "type": "Person", "data": {"name": "Ann"}},
        static={},
        segment_start=NOW,
        segment_end="2027-01-15T09:30:00.000Z",
        duration=Decimal("0.5"),
        element={
            "locator": "P1",
            "type": "Auto",
            "elements": [{"locator": "V1", "staticLocator": "SV1", "type": "Vehicle", "data": {"vin": vin}}],
        },
    )


def deployed(api, admin_token, files: dict[str, bytes | str] | None) -> tuple:
    """A new tenant with the minimal package and `files` deployed: (its system context, the version deployed)."""
    tenant, created = new_configured_tenant(api, admin_token, package(files=files))
    return system_ctx().for_tenant(tenant), created["deploymentResult"]["metadata"]["latestVersion"]
