"""Helpers of the transactions API tests: a policy issued from a quote of the quotes test configuration
(tests/support/configs.py: PersonalAuto's premium rate per month is 100 for a vehicle worth under 20,000
and 150 up to 50,000, plus a tax `amount` of 25 per segment), paths and bodies. The clock stands at
2026-01-15T09:30Z; the policy runs a year from 2026-02-01 (midnight in New York). HTTP helpers:
tests/support/api.py."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from tests.api.quotes.support import auto, quotes
from tests.support.api import call, ok

START = "2026-02-01T05:00:00.000Z"
END = "2027-02-01T05:00:00.000Z"
AUGUST = "2026-08-01T04:00:00.000Z"
"""Midnight in New York (summer time): six whole months into the policy."""
MID_MARCH = "2026-03-16T04:00:00.000Z"
"""Midnight in New York after the switch to summer time: 1 + 15/31 months into the policy."""
UNKNOWN = "01J00000000000000000000000"
TRANSACTION_FIELDS = {
    "locator",
    "staticLocator",
    "policyLocator",
    "termLocator",
    "effectiveTime",
    "transactionState",
    "transactionCategory",
    "transactionType",
    "data",
    "createdAt",
    "createdBy",
}
"""What PolicyTransactionResponse requires (the OpenAPI definition)."""
SEGMENT_FIELDS = {"locator", "transactionLocator", "startTime", "endTime", "duration", "element", "segmentType"}


def issued_policy(api: Any, token: str, tenant: str, account: str, **fields: Any) -> dict[str, Any]:
    """A PersonalAuto policy issued from a quote: one vehicle worth 12,000.50 (premium 1,200.00, tax 25)."""
    quote = ok(call(api, "POST", quotes(tenant), token, auto(account, **fields)))
    issued = ok(call(api, "PATCH", quotes(tenant, f"/{quote['locator']}/issue"), token))
    return ok(call(api, "GET", policy_path(tenant, issued["policyLocator"]), token))


def policy_path(tenant: str, locator: str, suffix: str = "") -> str:
    return f"/policy/{tenant}/policies/{locator}{suffix}"


def transaction_path(tenant: str, locator: str, suffix: str = "") -> str:
    return f"/policy/{tenant}/transactions/{locator}{suffix}"


def params(effective: str, **extra: Any) -> dict[str, Any]:
    return {"action": "params", "effectiveTime": effective, **extra}


def modify(static_locator: str, **data: Any) -> dict[str, Any]:
    return {"action": "modify", "staticLocator": static_locator, "setData": data}


def create(api: Any, token: str, tenant: str, policy: str, kind: str, body: Any, query: str = "") -> Any:
    """The response of PATCH /policies/{policy}/{kind} (change, renew, cancel, reinstate or a type)."""
    return call(api, "PATCH", policy_path(tenant, policy, f"/{kind}{query}"), token, body)


def step(api: Any, token: str, tenant: str, transaction: str, name: str, query: str = "") -> Any:
    return call(api, "PATCH", transaction_path(tenant, transaction, f"/{name}{query}"), token)


def issued_transaction(api: Any, token: str, tenant: str, policy: str, kind: str, body: Any) -> dict[str, Any]:
    """A transaction of the policy (as `create`), created and issued: the transaction as created."""
    transaction: dict[str, Any] = ok(create(api, token, tenant, policy, kind, body))
    ok(step(api, token, tenant, transaction["locator"], "issue"))
    return transaction


def issued_change(api: Any, token: str, tenant: str, policy: str, effective: str, *changes: Any) -> dict[str, Any]:
    """A change of the policy effective at `effective` with `changes` (modify, add, remove actions), created and
    issued: the change as created."""
    return issued_transaction(api, token, tenant, policy, "change", [params(effective), *changes])


def segment_of_policy(api: Any, token: str, tenant: str, policy: dict[str, Any]) -> dict[str, Any]:
    return ok(call(api, "GET", f"/policy/{tenant}/transactions/segments/{policy['latestSegmentLocator']}", token))


def segment_shown_last(api: Any, token: str, tenant: str, policy: dict[str, Any]) -> str:
    """The locator of the segment the policy's snapshot shows at its last moment (a millisecond before its end)."""
    end = datetime.fromisoformat(policy["endTime"]) - timedelta(milliseconds=1)
    date = end.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    snapshot = ok(call(api, "GET", policy_path(tenant, policy["locator"], f"/snapshot?date={date}"), token))
    return str(snapshot["transaction"]["segment"]["locator"])


def vehicle_of(segment: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in segment["element"]["elements"] if e["type"] == "Vehicle")


def amounts(charges: list[dict[str, Any]]) -> list[tuple[str, Decimal, bool]]:
    """(chargeType, amount, is a reversal) of each charge, sorted."""
    return sorted((c["chargeType"], Decimal(str(c["amount"])), c.get("reversalOfLocator") is not None) for c in charges)
