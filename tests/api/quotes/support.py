"""Helpers of the quotes API tests: paths and bodies for the test configuration (tests/support/configs.py,
quotes_model). HTTP helpers: tests/support/api.py."""

from __future__ import annotations

from typing import Any

from tests.support.api import call, ok

START = "2026-02-01T05:00:00Z"
"""Midnight in New York (the tenant's default zone); the clock stands at 2026-01-15T09:30Z."""
END = "2027-02-01T05:00:00.000Z"
UNKNOWN = "01J00000000000000000000000"
QUOTE_FIELDS = {"locator", "quoteState", "productName", "accountLocator", "element", "billingLevel", "contacts"}
"""What QuoteResponse requires (the OpenAPI definition)."""
ELEMENT_FIELDS = {"type", "locator", "parentLocator", "staticLocator", "originalEffectiveTime"}
CHARGE_FIELDS = {
    "locator",
    "elementLocator",
    "chargeType",
    "chargeCategory",
    "amount",
    "rate",
    "referenceRate",
    "elementStaticLocator",
    "handling",
    "invoicing",
}
PRICE_FIELDS = {
    "tenantLocator",
    "quoteLocator",
    "accountLocator",
    "quoteState",
    "productName",
    "startTime",
    "endTime",
    "duration",
    "durationBasis",
    "items",
}
FLAG_FIELDS = {
    "locator",
    "level",
    "referenceType",
    "referenceLocator",
    "note",
    "tag",
    "createdBy",
    "createdTime",
    "clearedBy",
    "clearedTime",
    "taskCreationResponse",
}


def quotes(tenant: str, suffix: str = "") -> str:
    return f"/policy/{tenant}/quotes{suffix}"


def quote_path(tenant: str, locator: str, suffix: str = "") -> str:
    return f"/policy/{tenant}/quotes/{locator}{suffix}"


def new_account(api: Any, token: str, tenant: str, account_type: str = "PersonAccount") -> str:
    data = {
        "firstName": "Ada",
        "lastName": "Lovelace",
        "email": "ada@example.com",
        "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
    }
    if account_type == "CompanyAccount":
        data = {"companyName": "Analytical Engines", "state": "NY"}
    elif account_type == "ProspectAccount":
        data = {"email": "ada@example.com"}
    return ok(call(api, "POST", f"/policy/{tenant}/accounts", token, {"type": account_type, "data": data}))["locator"]


def vehicle(vin: str = "1HGCM82633A004352", value: Any = "12000.50", **extra: Any) -> dict[str, Any]:
    """A Vehicle with its required Collision coverage (Deductible defaults, Limit given)."""
    return {
        "type": "Vehicle",
        "data": {"vin": vin, "value": value},
        "elements": [{"type": "Collision", "coverageTerms": {"Limit": "l50k"}}],
        **extra,
    }


def auto(account: str, *vehicles: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A PersonalAuto quote for a year from START (the tenant's default term), one vehicle by default."""
    return {
        "productName": "PersonalAuto",
        "accountLocator": account,
        "startTime": START,
        "data": {"channel": "web"},
        "elements": list(vehicles) or [vehicle()],
        **fields,
    }


def home(account: str, **fields: Any) -> dict[str, Any]:
    """A Homeowners quote (no plugins): the Dwelling and its Fire coverage are created."""
    return {"productName": "Homeowners", "accountLocator": account, "startTime": START, **fields}


def dwelling_data() -> dict[str, Any]:
    return {"address": {"line1": "1 Main St", "city": "Springfield", "postcode": "12345"}}


def create(api: Any, token: str, tenant: str, body: dict[str, Any], **headers: str) -> dict[str, Any]:
    return ok(call(api, "POST", quotes(tenant), token, body, headers=headers or None))


def advance(api: Any, token: str, tenant: str, locator: str, step: str) -> Any:
    return call(api, "PATCH", quote_path(tenant, locator, f"/{step}"), token)


def errors_of(result: dict[str, Any]) -> list[str]:
    return [message for item in result["validationItems"] for message in item["errors"]]


def walk(element: dict[str, Any]) -> list[dict[str, Any]]:
    found = [element]
    for child in element.get("elements") or []:
        found += walk(child)
    return found


def of_type(quote: dict[str, Any], element_type: str) -> list[dict[str, Any]]:
    return [element for element in walk(quote["element"]) if element["type"] == element_type]
