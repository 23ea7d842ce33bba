"""Helpers of the accounts API tests: JSON calls, bodies, errors, the events of one request."""
from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import simplejson

ACCOUNT_FIELDS = {"locator", "type", "accountState", "state", "accountNumber", "billingLevel", "data", "createdAt",
                  "createdBy", "contacts"}
"""What AccountResponse requires (the OpenAPI definition)."""
CONTACT = "01J0000000000000000000000A"
OTHER_CONTACT = "01J0000000000000000000000B"
UNKNOWN_ACCOUNT = "01J00000000000000000000000"


def call(api: Any, method: str, path: str, token: str | None, body: Any = None, *,
         headers: dict[str, str] | None = None) -> Any:
    sent = {"Content-Type": "application/json"}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    sent.update(headers or {})
    data = b"" if body is None else simplejson.dumps(body, use_decimal=True)
    return api.http.request(method, path, headers=sent, body=data)


def json_of(response: Any) -> Any:
    return json.loads(response.body, parse_float=Decimal)


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.body
    return json_of(response)


def accounts(tenant: str, suffix: str = "") -> str:
    return f"/policy/{tenant}/accounts{suffix}"


def person_data(**overrides: Any) -> dict[str, Any]:
    """Data of a PersonAccount that passes validation."""
    return {"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com",
            "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"}, **overrides}


def person(**fields: Any) -> dict[str, Any]:
    return {"type": "PersonAccount", "data": person_data(), **fields}


def create(api: Any, token: str, tenant: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    return ok(call(api, "POST", accounts(tenant), token, person() if body is None else body))


def fetch(api: Any, token: str, tenant: str, locator: str) -> dict[str, Any]:
    return ok(call(api, "GET", accounts(tenant, f"/{locator}"), token))


def events_of(api: Any, token: str, tenant: str, response: Any) -> list[dict[str, Any]]:
    """The events the request that gave `response` recorded (through the event API)."""
    return ok(call(api, "GET", f"/event/{tenant}/events/request/{response.headers['X-Request-Id']}", token))


def event_types(api: Any, token: str, tenant: str, response: Any) -> list[str]:
    return [event["type"] for event in events_of(api, token, tenant, response)]


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.body
    body = json_of(response)
    assert (body["httpStatus"], body["code"]) == (status, code), body
    assert body["requestId"] == response.headers["X-Request-Id"]
    return body


def field_names(body: dict[str, Any]) -> set[str]:
    return {error["field"] for error in body.get("fieldErrors", [])}


def errors_of(account: dict[str, Any]) -> list[str]:
    """The messages of an account's validationResult (its one item, about the account itself)."""
    result = account["validationResult"]
    return [message for item in result["validationItems"] for message in item["errors"]]
