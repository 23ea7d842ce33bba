"""Helpers of the compliance API tests: the insured of tests/api/quotes/support.py (Ada Lovelace) with a
birth date the configuration marks `restrictedData`, and the compliance paths."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote as escaped

from tests.api.documents.support import documents_model, documents_tenant
from tests.support.api import call, ok

PERSONAL = ("Ada", "Lovelace", "ada@example.com", "James's Square", "London", "1815-12-10", "1HGCM82633A004352")
"""What the insured's records hold that is hers: names, e-mail, address, birth date, her car's VIN."""
EXPIRED = "2024-06-01T04:00:00Z"
"""The start of a year's term that ended before the tests' clock (2026-01-15)."""
ON_RISK = "2025-06-01T04:00:00Z"
"""The start of a year's term the tests' clock is in."""


def compliance_tenant(
    api: Any, token: str, model: dict[str, Any] | None = None, files: Mapping[str, str | bytes] | None = None
) -> str:
    """The documents tenant (or one of `model`, a documents_model, with `files` in its package) whose account
    birth date is `restrictedData`, with a Card payment type."""
    model = model or documents_model()
    model["accounts"]["PersonAccount"]["data"]["birthDate"]["restrictedData"] = True
    model["payments"] = {"Card": {"data": {"cardHolder": {"type": "string"}}}}
    return documents_tenant(api, token, model, files)


def insured(api: Any, token: str, tenant: str) -> str:
    data = {
        "firstName": "Ada",
        "lastName": "Lovelace",
        "email": "ada@example.com",
        "birthDate": "1815-12-10",
        "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
    }
    body = {"type": "PersonAccount", "data": data}
    return ok(call(api, "POST", f"/policy/{tenant}/accounts", token, body))["locator"]


def pay_open_invoices(api: Any, token: str, tenant: str, account: str) -> list[str]:
    """Pays each open invoice of the account in full, by Ada's card; answers the payments' locators."""
    invoices = ok(call(api, "GET", f"/billing/{tenant}/invoices/accounts/{account}/list?count=100", token))["items"]
    paid = []
    for invoice in invoices:
        if invoice["invoiceState"] != "open":
            continue
        payment = ok(
            call(
                api,
                "POST",
                f"/billing/{tenant}/payments",
                token,
                {
                    "accountLocator": account,
                    "type": "Card",
                    "amount": invoice["totalRemainingAmount"],
                    "data": {"cardHolder": "Ada Lovelace"},
                    "targets": [{"containerType": "invoice", "containerLocator": invoice["locator"]}],
                },
            )
        )
        ok(call(api, "PATCH", f"/billing/{tenant}/payments/{payment['locator']}/post", token))
        paid.append(payment["locator"])
    return paid


def compliance(tenant: str, suffix: str) -> str:
    return f"/compliance/{tenant}{suffix}"


def anonymize(api: Any, token: str, tenant: str, body: dict[str, Any]) -> Any:
    return call(api, "POST", compliance(tenant, "/anonymize"), token, body)


def references_query(references: dict[str, list[str]], **extra: Any) -> str:
    query = f"references={escaped(json.dumps(references))}"
    for name, value in extra.items():
        values = value if isinstance(value, list) else [value]
        query += "".join(f"&{name}={escaped(str(v).lower() if isinstance(v, bool) else str(v))}" for v in values)
    return query


def preview(api: Any, token: str, tenant: str, references: dict[str, list[str]], **extra: Any) -> Any:
    return call(api, "GET", compliance(tenant, f"/preview?{references_query(references, **extra)}"), token)


def fetch_jobs(api: Any, token: str, tenant: str, *locators: str) -> Any:
    query = "&".join(f"jobLocators={locator}" for locator in locators)
    return call(api, "GET", compliance(tenant, f"/jobs?{query}"), token)
