"""Helpers of the schedules API tests: the quotes test configuration (tests/support/configs.py) with an
`Equipment` schedule on every Vehicle (a serial of two capitals and four digits, a kind among laptop and
phone, a value of two decimals, optional flags, dates and a list of tags), and paths."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote as escaped

from chalicelib.runtime.jobs import JobMessage, dispatch
from tests.api.quotes.support import auto, new_account, quote_path, vehicle
from tests.support.api import call, ok
from tests.support.configs import quotes_model, quotes_tenant

EQUIPMENT = {
    "serial": {"type": "string", "regex": "[A-Z]{2}[0-9]{4}"},
    "kind": {"type": "string", "options": ["laptop", "phone"]},
    "value": {"type": "decimal", "precision": 2, "min": "0"},
    "insured": {"type": "boolean?"},
    "purchased": {"type": "date?"},
    "tags": {"type": "string*"},
}


def schedules_model(*, reset_on_renewal: bool = True) -> dict[str, Any]:
    model = quotes_model()
    model["schedules"] = {"Equipment": {"resetOnRenewal": reset_on_renewal, "data": EQUIPMENT}}
    model["exposures"]["Vehicle"]["schedule"] = "Equipment"
    return model


def schedules_tenant(api: Any, token: str, *, test_clock: bool = False) -> str:
    return quotes_tenant(api, token, schedules_model(), test_clock=test_clock)


def draft_quote(api: Any, token: str, tenant: str) -> tuple[str, str]:
    """A draft PersonalAuto quote on a new account: (quote locator, the Vehicle's static locator)."""
    quote = ok(call(api, "POST", f"/policy/{tenant}/quotes", token, auto(new_account(api, token, tenant), vehicle())))
    vehicle_element = next(e for e in quote["element"]["elements"] if e["type"] == "Vehicle")
    return quote["locator"], vehicle_element["staticLocator"]


def schedule_path(tenant: str, quote: str, static_locator: str, suffix: str = "") -> str:
    return quote_path(tenant, quote, f"/schedules/{static_locator}{suffix}")


def item(serial: str, value: Any = "1000", kind: str = "laptop", **extra: Any) -> dict[str, Any]:
    return {"data": {"serial": serial, "kind": kind, "value": value, **extra}}


def every_item(api: Any, token: str, path: str) -> list[dict[str, Any]]:
    """Every item of a schedule, page by page (lastSeenLocator)."""
    found: list[dict[str, Any]] = []
    last = ""
    while True:
        page = ok(call(api, "GET", f"{path}?lastSeenLocator={last}" if last else path, token))
        if not page["items"]:
            return found
        found.extend(page["items"])
        last = page["lastSeenLocator"]


def csv_body(text: str, boundary: str = "sched-boundary", name: str = "items.csv") -> tuple[bytes, str]:
    """A multipart/form-data body with `text` as the `file` part: (body, Content-Type)."""
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        f"Content-Type: text/csv\r\n\r\n{text}\r\n--{boundary}--\r\n"
    ).encode()
    return body, f"multipart/form-data; boundary={boundary}"


PARAMS = "params=" + escaped(json.dumps({"source": "fleet"}))
"""The `?params=` of every deserialization these tests start."""


def equipment_csv(rows: int, bad: dict[int, str] | None = None) -> str:
    """A CSV of `rows` Equipment items, the rows numbered in `bad` (from 1) replaced by their text."""
    lines = ["serial,kind,value,insured"]
    for n in range(rows):
        lines.append((bad or {}).get(n + 1, f"EQ{n % 10000:04d},{'laptop' if n % 2 else 'phone'},{n}.5,{n % 3 == 0}"))
    return "\n".join(lines) + "\n"


def deserialize(api: Any, token: str, tenant: str, quote: tuple[str, str], text: str, name: str = "fleet.csv") -> Any:
    """Starts a deserialization job of `text` on the quote (quote locator, vehicle's static locator)."""
    body, content_type = csv_body(text, name=name)
    return api.http.post(
        schedule_path(tenant, quote[0], quote[1], f"/deserialize?{PARAMS}"),
        body=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type},
    )


def deserialize_job(api: Any, token: str, tenant: str, locator: str) -> dict[str, Any]:
    return ok(call(api, "GET", f"/policy/{tenant}/deserializeJobs/{locator}", token))


def run_one_step(jobs: Any) -> None:
    """Runs the first queued job (one step of a deserialization), leaving the rest queued."""
    dispatch(JobMessage.model_validate_json(jobs.messages.pop(0)))
