"""Helpers of the policies tests: a deployed configuration, policies issued through the service (as
the quotes domain issues them), paths. HTTP helpers: tests/support/api.py.

Policies come into being only by issuing a quote; these tests issue through `add_issued_policy` in a
unit of work of their own, from a PolicyIssuance built here for the test configuration.
"""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from chalicelib.core.ids import new_locator
from chalicelib.policies.models import PolicyIssuance, PolicyIssued
from chalicelib.priceable.models import Charge, Element
from tests.builders import system_ctx
from tests.support.api import call, ok
from tests.support.configs import configured_tenant, policy_model

START = datetime(2026, 2, 1, 5, tzinfo=timezone.utc)  # midnight in New York, the tenant's default zone
END = datetime(2027, 2, 1, 5, tzinfo=timezone.utc)
POLICY_FIELDS = {
    "locator",
    "accountLocator",
    "issuedTransactionLocator",
    "latestSegmentLocator",
    "latestTermLocator",
    "productName",
    "startTime",
    "endTime",
    "currency",
    "durationBasis",
    "timezone",
    "billingLevel",
    "static",
    "createdAt",
    "createdBy",
    "contacts",
    "moratoriumElections",
    "statuses",
}
"""What PolicyResponse requires (the OpenAPI definition)."""
CONTACT = "01J0000000000000000000000A"
OTHER_CONTACT = "01J0000000000000000000000B"
UNKNOWN = "01J00000000000000000000000"


def policies_model() -> dict[str, Any]:
    """The shared test configuration plus what policies need: static data on PersonalAuto (one field
    required), jurisdictions and delinquency plans."""
    model = policy_model()
    model["products"]["PersonalAuto"]["staticData"] = {
        "agency": {"type": "string"},
        "agentCode": {"type": "string?", "regex": "[A-Z]{3}"},
        "renewals": {"type": "int?", "min": 0},
    }
    model["jurisdictions"] = {"CA": {}, "NY": {}}
    model["delinquencyPlans"] = {"Standard": {"gracePeriodDays": 7}, "Lenient": {"gracePeriodDays": 30}}
    return model


def policies_tenant(api: Any, token: str, model: dict[str, Any] | None = None) -> str:
    return configured_tenant(api, token, policies_model() if model is None else model)


def new_account(api: Any, token: str, tenant: str) -> str:
    body = {
        "type": "PersonAccount",
        "data": {
            "firstName": "Ada",
            "lastName": "Lovelace",
            "email": "ada@example.com",
            "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
        },
    }
    return ok(call(api, "POST", f"/policy/{tenant}/accounts", token, body))["locator"]


def vehicle(index: int, coverages: int = 1) -> Element:
    """A Vehicle with a Collision coverage and, for `coverages` > 1, more (Glass) children."""
    children = [
        Element(
            locator=new_locator(),
            staticLocator=new_locator(),
            type="Collision",
            coverageTerms={"Deductible": "d500", "Limit": "l100k"},
        )
    ]
    children += [
        Element(locator=new_locator(), staticLocator=new_locator(), type="Glass") for _ in range(coverages - 1)
    ]
    return Element(
        locator=new_locator(),
        staticLocator=new_locator(),
        type="Vehicle",
        data={"vin": f"1HGCM82633A{index:06d}", "value": Decimal("12000.50")},
        elements=children,
    )


def element_tree(vehicles: int = 1, coverages: int = 1) -> Element:
    return Element(
        locator=new_locator(),
        staticLocator=new_locator(),
        type="PersonalAuto",
        data={"channel": "web"},
        elements=[vehicle(i, coverages) for i in range(vehicles)],
    )


def issuance(tenant: str, account: str, **overrides: Any) -> PolicyIssuance:
    """A PersonalAuto policy for a year from START, priced at 1200.00 premium, 60.00 tax."""
    from chalicelib.configuration import service as configuration

    version, _ = configuration.current_model(system_ctx().for_tenant(tenant))
    element = overrides.pop("element", None) or element_tree()
    vehicle_element = element.elements[0]
    charges = [
        Charge(
            locator=new_locator(),
            elementLocator=vehicle_element.locator,
            elementStaticLocator=vehicle_element.staticLocator,
            chargeType="premium",
            chargeCategory="premium",
            rate=Decimal("100"),
            amount=Decimal("1200.00"),
        ),
        Charge(
            locator=new_locator(),
            elementLocator=element.locator,
            elementStaticLocator=element.staticLocator,
            chargeType="tax",
            chargeCategory="tax",
            rate=Decimal("5"),
            amount=Decimal("60.00"),
            referenceRate=Decimal("5.5"),
            tag="state",
        ),
    ]
    fields: dict[str, Any] = {
        "quoteLocator": new_locator(),
        "accountLocator": account,
        "productName": "PersonalAuto",
        "startTime": START,
        "endTime": END,
        "currency": "USD",
        "timezone": "America/New_York",
        "durationBasis": "months",
        "termDuration": Decimal(12),
        "billingLevel": "account",
        "delinquencyPlanName": "Standard",
        "static": {"agency": "Downtown"},
        "element": element,
        "charges": charges,
        "configVersion": version,
        "preferences": {"installmentPreferences": {"installmentWeights": [1], "cadence": "monthly"}},
        "contacts": [{"contactLocator": CONTACT, "roles": ["primary"]}],
    }
    fields.update(overrides)
    return PolicyIssuance(**fields)


def issue(tenant: str, account: str, **overrides: Any) -> PolicyIssued:
    """Issues a policy the way the quotes domain does: add_issued_policy in one unit of work, committed."""
    from chalicelib.policies import service
    from chalicelib.runtime import wiring

    ctx = system_ctx().for_tenant(tenant)
    uow = wiring.unit_of_work(ctx)
    issued = service.add_issued_policy(ctx, uow, issuance(tenant, account, **overrides))
    uow.commit()
    return issued


# --- paths ---------------------------------------------------------------------------------------


def policies(tenant: str, suffix: str = "") -> str:
    return f"/policy/{tenant}/policies{suffix}"
