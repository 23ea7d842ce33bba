"""The real configuration packages (shared/fixtures/socotra-configs) with a rating plugin of our own, and a policy
of each issued: for the tests that run the whole life of a policy on them (test_real_packages.py, and the
documents rendered from them)."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from typing import Any

from tests.api.quotes.samples import data_for, element_for
from tests.api.quotes.support import START
from tests.api.transactions.support import policy_path
from tests.support.api import call, ok


@dataclass(frozen=True)
class Case:
    product: str
    exposure: str
    field: str
    issued_value: Any
    changed_value: Any
    premium: str
    tax: str
    factor: str
    """premium rate per duration unit = factor x the exposure's `field`"""
    term_end: str
    basis: str
    zone: str


CASES = {
    "iag-motor-demo": Case(
        "PersonalAuto",
        "PersonalVehicle",
        "excess",
        "300",
        "900",
        "Premium",
        "GST",
        "0.5",
        "2026-08-01T04:00:00.000Z",
        "months",
        "America/New_York",
    ),
    "itemcare": Case(
        "ItemCare",
        "Item",
        "purchasePrice",
        "480.00",
        "999.99",
        "premium",
        "tax",
        "0.1",
        "2027-02-01T05:00:00.000Z",
        "months",
        "America/Phoenix",
    ),
    "mgt-commercial": Case(
        "GeneralLiability",
        "Location",
        "applicantsExposures",
        1200,
        2000,
        "Premium",
        "Tax",
        "1.25",
        "2027-02-01T05:00:00.000Z",
        "years",
        "America/Los_Angeles",
    ),
}


RATING = """
from decimal import Decimal

CASES = {cases!r}


def _rate(request):
    exposure, field, premium, tax, factor = CASES[request["productName"]]
    root = request["segment"]["element"]
    items = [{{"elementLocator": e["locator"], "chargeType": premium,
              "rate": Decimal(str(e["data"][field])) * Decimal(factor)}}
             for e in root["elements"] if e["type"] == exposure]
    items.append({{"elementLocator": root["locator"], "chargeType": tax, "amount": 25}})
    return {{"items": items}}
"""


def rating_plugin() -> str:
    cases = {case.product: (case.exposure, case.field, case.premium, case.tax, case.factor) for case in CASES.values()}
    functions = "".join(f"\n\ndef rate_{product}(request):\n    return _rate(request)\n" for product in cases)
    return RATING.format(cases=cases) + functions


def with_plugin(package: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            out.writestr(info, source.read(info))
        out.writestr("plugins/python/rating.py", rating_plugin())
    return buffer.getvalue()


def issued_policy(api: Any, token: str, tenant: str, case: Case) -> dict[str, Any]:
    """A quote of the product with its required data (samples.py) and the exposure's field set, issued."""
    model = ok(call(api, "GET", f"/config/{tenant}/deployments/datamodel?resolve=true", token))
    definition = model["products"][case.product]
    account_type = (
        definition.get("eligibleAccountTypes")
        or [next(name for name, account in model["accounts"].items() if not account.get("abstract"))]
    )[0]
    account = ok(
        call(
            api,
            "POST",
            f"/policy/{tenant}/accounts",
            token,
            {"type": account_type, "data": data_for(model, model["accounts"][account_type].get("data") or {})},
        )
    )
    tree = element_for(model, case.product, definition)
    (exposure,) = [element for element in tree["elements"] if element["type"] == case.exposure]
    exposure["data"][case.field] = case.issued_value
    quote = ok(
        call(
            api,
            "POST",
            f"/policy/{tenant}/quotes",
            token,
            {
                "productName": case.product,
                "accountLocator": account["locator"],
                "startTime": START,
                "data": tree["data"],
                "coverageTerms": tree["coverageTerms"],
                "elements": tree["elements"],
                "static": data_for(model, definition.get("staticData") or {}),
            },
        )
    )
    issued = ok(call(api, "PATCH", f"/policy/{tenant}/quotes/{quote['locator']}/issue", token))
    assert issued["quoteState"] == "issued", issued.get("validationResult")
    return ok(call(api, "GET", policy_path(tenant, issued["policyLocator"]), token))
