"""Helpers of the delinquency and hold tests: the billing test configuration with delinquency plans
(Standard by default: 10 days of grace, a reminder 3 days before its end; LongPolicy and LongInvoice: 40 days,
so that the next month's invoice falls due within the grace, of level policy and invoice, the latter's lapse
only accepted)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tests.api.billing.support import billing, billing_model
from tests.api.transactions.support import policy_path
from tests.support.api import call, ok
from tests.support.configs import quotes_tenant

FEB_DUE = "2026-02-01T05:00:00.000Z"
"""The due time of the first invoice (and so the grace start of its delinquency)."""


def delinquency_model(default_plan: str | None = "Standard") -> dict[str, Any]:
    model = billing_model()
    model["delinquencyPlans"] = {
        "Standard": {
            "gracePeriodDays": 10,
            "advanceLapseTo": "issued",
            "delinquencyLevel": "policy",
            "events": {"Reminder": {"offsetBasis": "gracePeriodEnd", "offsetDays": -3}},
        },
        "LongPolicy": {"gracePeriodDays": 40, "advanceLapseTo": "issued", "delinquencyLevel": "policy"},
        "LongInvoice": {"gracePeriodDays": 40, "advanceLapseTo": "accepted", "delinquencyLevel": "invoice"},
    }
    if default_plan:
        model["defaultDelinquencyPlan"] = default_plan
    return model


def delinquency_tenant(api: Any, token: str, default_plan: str | None = "Standard") -> str:
    return quotes_tenant(api, token, delinquency_model(default_plan), test_clock=True)


def delinquencies_of_account(api: Any, token: str, tenant: str, account: str) -> list[dict[str, Any]]:
    return ok(call(api, "GET", billing(tenant, f"/delinquencies/accounts/{account}/list?count=100"), token))["items"]


def events_of(api: Any, token: str, tenant: str, delinquency: str) -> list[dict[str, Any]]:
    return ok(call(api, "GET", billing(tenant, f"/delinquencies/{delinquency}/events/list"), token))["items"]


def event_jobs(api: Any, token: str, tenant: str, delinquency: str) -> list[dict[str, Any]]:
    return ok(call(api, "GET", billing(tenant, f"/jobs/delinquencies/{delinquency}/events/list"), token))["items"]


def pay(api: Any, token: str, tenant: str, account: str, invoice: dict[str, Any], amount: Decimal) -> Any:
    """The response of posting a payment of `amount` to the invoice."""
    payment = ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            token,
            {
                "accountLocator": account,
                "type": "Card",
                "amount": amount,
                "data": {},
                "targets": [{"containerType": "invoice", "containerLocator": invoice["locator"]}],
            },
        )
    )
    posted = call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/post"), token)
    ok(posted)
    return posted


def events_of_type(api: Any, token: str, tenant: str, event_type: str) -> list[dict[str, Any]]:
    """The tenant's events of one type (at most 100)."""
    return ok(call(api, "GET", f"/event/{tenant}/events/list?type={event_type}&pageSize=100", token))["events"]


def hold(api: Any, token: str, tenant: str, account: str, target: str) -> dict[str, Any]:
    """A hold of `target` on the account, created and activated."""
    created = ok(call(api, "POST", billing(tenant, "/holds"), token, {"accountLocator": account, "targetType": target}))
    return ok(call(api, "PATCH", billing(tenant, f"/holds/{created['locator']}/activate"), token))


def statuses(api: Any, token: str, tenant: str, policy: dict[str, Any]) -> list[str]:
    return ok(call(api, "GET", policy_path(tenant, policy["locator"]), token))["statuses"]
