"""Helpers of the accounts API tests: paths and bodies. HTTP helpers: tests/support/api.py."""

from __future__ import annotations

from typing import Any

from tests.support.api import call, ok

ACCOUNT_FIELDS = {
    "locator",
    "type",
    "accountState",
    "state",
    "accountNumber",
    "billingLevel",
    "data",
    "createdAt",
    "createdBy",
    "contacts",
}
"""What AccountResponse requires (the OpenAPI definition)."""
CONTACT = "01J0000000000000000000000A"
OTHER_CONTACT = "01J0000000000000000000000B"
UNKNOWN_ACCOUNT = "01J00000000000000000000000"


def accounts(tenant: str, suffix: str = "") -> str:
    return f"/policy/{tenant}/accounts{suffix}"


def person_data(**overrides: Any) -> dict[str, Any]:
    """Data of a PersonAccount that passes validation."""
    return {
        "firstName": "Ada",
        "lastName": "Lovelace",
        "email": "ada@example.com",
        "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
        **overrides,
    }


def person(**fields: Any) -> dict[str, Any]:
    return {"type": "PersonAccount", "data": person_data(), **fields}


def create(api: Any, token: str, tenant: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    return ok(call(api, "POST", accounts(tenant), token, person() if body is None else body))


def fetch(api: Any, token: str, tenant: str, locator: str) -> dict[str, Any]:
    return ok(call(api, "GET", accounts(tenant, f"/{locator}"), token))


def field_names(body: dict[str, Any]) -> set[str]:
    return {error["field"] for error in body.get("fieldErrors", [])}


def errors_of(account: dict[str, Any]) -> list[str]:
    """The messages of an account's validationResult (its one item, about the account itself)."""
    result = account["validationResult"]
    return [message for item in result["validationItems"] for message in item["errors"]]
