"""Helpers of the migration API tests: requests shaped like a converted source book, and the calls."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from tests.api.accounts.support import person_data
from tests.support.api import call, ok

CREATED_BY = "00000000-0000-4000-8000-000000000001"


def migrations(tenant: str, suffix: str = "") -> str:
    return f"/migration/{tenant}/migrations{suffix}"


def vehicle(original: str, *, premium: str = "1.00", items: list[str] | None = None) -> dict[str, Any]:
    """A Vehicle with its Collision coverage; its premium charge at `premium` a month, with installment items."""
    charge = {
        "chargeType": "premium",
        "tag": "base",
        "rate": Decimal(premium),
        "referenceRate": Decimal(premium),
        "installmentItems": [
            {"amount": Decimal(amount), "id": f"{original}-i{n}", "installmentNumber": n}
            for n, amount in enumerate(items or [], start=1)
        ],
    }
    return {
        "elementType": "Vehicle",
        "id": original,
        "data": {"vin": "1HGCM82633A004352", "value": 15000},
        "charges": [charge],
        "coverageTerms": {},
        "elements": [
            {
                "elementType": "Collision",
                "id": f"{original}-col",
                "data": {},
                "charges": [],
                "coverageTerms": {"Deductible": "d1000"},
                "elements": [],
            }
        ],
    }


def auto_policy(original: str, **overrides: Any) -> dict[str, Any]:
    """A PersonalAuto policy of one year (2025-06-01 to 2026-06-01, on risk at the tests' clock), issued, then
    changed on 2025-12-01 (a second vehicle added)."""
    issuance: dict[str, Any] = {
        "issuedTime": "2025-05-20T10:00:00Z",
        "createdAt": "2025-05-20T09:00:00Z",
        "transactionType": "issuance",
        "createdBy": CREATED_BY,
        "installments": [],
        "segment": {
            "startTime": "2025-06-01T04:00:00Z",
            "segmentType": "coverage",
            "rootElement": {
                "elementType": "PersonalAuto",
                "id": f"{original}-root",
                "data": {"channel": "agent"},
                "charges": [],
                "coverageTerms": {},
                "elements": [vehicle(f"{original}-v1", premium="12.00")],
            },
        },
    }
    change = copy.deepcopy(issuance)
    change.update(
        {"issuedTime": "2025-11-20T10:00:00Z", "createdAt": "2025-11-20T09:00:00Z", "transactionType": "change"}
    )
    change["segment"]["startTime"] = "2025-12-01T05:00:00Z"
    change["segment"]["rootElement"]["elements"].append(vehicle(f"{original}-v2", premium="6.00"))
    policy = {
        "productName": "PersonalAuto",
        "id": original,
        "durationBasis": "months",
        "createdAt": "2025-05-20T09:00:00Z",
        "createdBy": CREATED_BY,
        "staticData": {},
        "currency": "USD",
        "timezone": "America/New_York",
        "terms": [
            {"startTime": "2025-06-01T04:00:00Z", "endTime": "2026-06-01T04:00:00Z", "transactions": [issuance, change]}
        ],
    }
    policy.update(overrides)
    return policy


def account_request(original: str, *, policies: list[dict[str, Any]] | None = None, **data: Any) -> dict[str, Any]:
    return {
        "accountData": {
            "accountType": "PersonAccount",
            "id": original,
            "data": {**person_data(), **data},
            "createdAt": "2025-05-19T12:00:00Z",
            "createdBy": CREATED_BY,
        },
        "defaultCreatedBy": CREATED_BY,
        "policies": [auto_policy(f"{original}-p1")] if policies is None else policies,
    }


def start(api: Any, token: str, tenant: str, body: list[dict[str, Any]], key: str | None = None) -> Any:
    return call(api, "POST", migrations(tenant), token, body, headers={"X-Idempotency-Key": key} if key else None)


def fetch(api: Any, token: str, tenant: str, migration: str, suffix: str = "") -> Any:
    return ok(call(api, "GET", migrations(tenant, f"/{migration}{suffix}"), token))


def control(api: Any, token: str, tenant: str, migration: str, action: str) -> Any:
    return call(api, "PATCH", migrations(tenant, f"/{migration}/{action}"), token)


def account_of(api: Any, token: str, tenant: str, migration: str, original: str) -> dict[str, Any]:
    """The account's mappings entry of the migration, found by its original id."""
    listed = fetch(api, token, tenant, migration, "/mappings/list?count=100")
    return next(item for item in listed["items"] if item["originalAccountId"] == original)


def events_of_type(api: Any, token: str, tenant: str, event_type: str) -> list[dict[str, Any]]:
    """The data of every event of the type in the tenant's stream."""
    found = ok(call(api, "GET", f"/event/{tenant}/events/list?type={event_type}&pageSize=100", token))
    return [event["data"] for event in found["events"]]


def source_installment(original: str, invoice: str, month: int) -> dict[str, Any]:
    return {
        "id": original,
        "invoiceId": invoice,
        "startTime": f"2025-{month:02d}-01T04:00:00Z",
        "generateTime": f"2025-{month - 1:02d}-20T04:00:00Z",
        "dueTime": f"2025-{month:02d}-01T04:00:00Z",
    }


def source_invoice(original: str, month: int, state: str) -> dict[str, Any]:
    return {
        "id": original,
        "startTime": f"2025-{month:02d}-01T04:00:00Z",
        "endTime": f"2025-{month + 1:02d}-01T04:00:00Z",
        "generateTime": f"2025-{month - 1:02d}-20T04:00:00Z",
        "dueTime": f"2025-{month:02d}-01T04:00:00Z",
        "invoiceState": state,
    }


def source_payment(
    original: str, items: list[tuple[str, str]], currency: str = "USD", payment_type: str = "standard"
) -> dict[str, Any]:
    return {
        "id": original,
        "paymentType": payment_type,
        "paymentTime": "2025-06-02T12:00:00Z",
        "data": {},
        "currency": currency,
        "paymentItems": [{"invoiceId": invoice, "amount": Decimal(amount)} for invoice, amount in items],
    }


def billed_policy(original: str, installments: list[dict[str, Any]], items: list[tuple[int, str]]) -> dict[str, Any]:
    """The support's auto policy whose issuance (144.00: 12.00 a month for a year) brings its installments and
    its premium's installment items (installment number, amount)."""
    policy = auto_policy(original)
    issuance = policy["terms"][0]["transactions"][0]
    issuance["installments"] = installments
    issuance["segment"]["rootElement"]["elements"][0]["charges"][0]["installmentItems"] = [
        {"id": f"{original}-item{n}", "installmentNumber": number, "amount": Decimal(amount)}
        for n, (number, amount) in enumerate(items)
    ]
    return policy
