"""The HTTP helpers every API test uses: JSON calls through chalice's test client, the error body of
DECISIONS.md, and the events one request recorded (through the event API)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import simplejson


def call(
    api: Any,
    method: str,
    path: str,
    token: str | None = None,
    body: Any = None,
    *,
    raw: bytes | str | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """One request with a JSON body (numbers as Decimal, or `raw` bytes) and, with `token`, a bearer header."""
    sent = {"Content-Type": "application/json"}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    sent.update(headers or {})
    data = raw if raw is not None else (b"" if body is None else simplejson.dumps(body, use_decimal=True))
    return api.http.request(method, path, headers=sent, body=data)


def json_of(response: Any) -> Any:
    """The response body, numbers with a fraction as Decimal (money is never float)."""
    return json.loads(response.body, parse_float=Decimal)


def ok(response: Any) -> Any:
    assert response.status_code == 200, response.body
    return json_of(response)


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    """Our error body with `status` and `code`, naming the request that failed."""
    assert response.status_code == status, response.body
    body = json_of(response)
    assert (body["httpStatus"], body["code"]) == (status, code), body
    assert body["requestId"] == response.headers["X-Request-Id"]
    return body


def events_of(api: Any, token: str, tenant: str, response: Any) -> list[dict[str, Any]]:
    """The events the request that gave `response` recorded, in order."""
    return ok(call(api, "GET", f"/event/{tenant}/events/request/{response.headers['X-Request-Id']}", token))


def event_types(api: Any, token: str, tenant: str, response: Any) -> list[str]:
    return [event["type"] for event in events_of(api, token, tenant, response)]
