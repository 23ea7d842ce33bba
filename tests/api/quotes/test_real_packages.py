"""Quotes for the three real configuration packages: created with the minimal valid data of their
products (samples.py), validated, priced (no plugins: no charges) and issued."""

from __future__ import annotations

import pytest

from tests.api.quotes.samples import data_for, element_for
from tests.api.quotes.support import START, advance, create
from tests.support.api import call, ok
from tests.support.configs import deployed_tenant
from tests.unit.configuration.zips import fixture_zip

PACKAGES = {
    "iag-motor-demo": ["PersonalAuto"],
    "itemcare": ["ItemCare"],
    "mgt-commercial": ["GeneralLiability", "PackageProduct", "Property"],
}


@pytest.mark.parametrize("package", PACKAGES)
def test_a_quote_of_each_real_product_is_created_validated_and_issued(api, admin_token, package):
    tenant = deployed_tenant(api, admin_token, fixture_zip(package))
    model = ok(call(api, "GET", f"/config/{tenant}/deployments/datamodel?resolve=true", admin_token))
    for product in PACKAGES[package]:
        quote_and_issue(api, admin_token, tenant, model, product)


def quote_and_issue(api, admin_token, tenant: str, model: dict, product: str) -> None:
    definition = model["products"][product]
    account_type = (
        definition.get("eligibleAccountTypes")
        or [next(name for name, account in model["accounts"].items() if not account.get("abstract"))]
    )[0]
    account = ok(
        call(
            api,
            "POST",
            f"/policy/{tenant}/accounts",
            admin_token,
            {"type": account_type, "data": data_for(model, model["accounts"][account_type].get("data") or {})},
        )
    )
    tree = element_for(model, product, definition)

    quote = create(
        api,
        admin_token,
        tenant,
        {
            "productName": product,
            "accountLocator": account["locator"],
            "startTime": START,
            "data": tree["data"],
            "coverageTerms": tree["coverageTerms"],
            "elements": tree["elements"],
            "static": data_for(model, definition.get("staticData") or {}),
        },
    )
    issued = ok(advance(api, admin_token, tenant, quote["locator"], "issue"))

    assert quote["validationResult"] == {"success": True, "validationItems": []}, quote["validationResult"]
    assert issued["quoteState"] == "issued", issued.get("validationResult")
    policy = ok(call(api, "GET", f"/policy/{tenant}/policies/{issued['policyLocator']}", admin_token))
    assert (policy["productName"], policy["accountLocator"]) == (product, account["locator"])
    assert ok(call(api, "GET", f"/policy/{tenant}/quotes/{quote['locator']}/price", admin_token))["items"] == []
