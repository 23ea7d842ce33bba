"""A rating plugin prices per scheduled item: the plugin request's `schedules` holds, per static locator of
an element with a schedule, its items (`locator`, `data`) as the schedule shows them."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.quotes.support import new_account
from tests.api.schedules.support import draft_quote, item, schedule_path, schedules_model
from tests.api.transactions.support import AUGUST, create, params, transaction_path
from tests.support.api import call, ok
from tests.support.configs import quotes_tenant

PER_ITEM_RATING = """
PRICES = {"laptop": 10, "phone": 4}


def rate_PersonalAuto(request):
    items = []
    for vehicle in request["segment"]["element"]["elements"]:
        equipment = request.get("schedules", {}).get(vehicle["staticLocator"], [])
        amount = sum(PRICES[entry["data"]["kind"]] for entry in equipment)
        items.append({"elementLocator": vehicle["locator"], "chargeType": "premium", "amount": amount})
        items.append({"elementLocator": vehicle["locator"], "chargeType": "tax", "amount": len(equipment)})
    return {"items": items}


def underwrite_PersonalAuto(request):
    counts = sorted(len(entries) for entries in request.get("schedules", {}).values())
    return {"flags": [{"level": "info", "note": "scheduled items: " + str(counts), "tag": "count"}]}
"""
"""Premium 10 a laptop and 4 a phone of the vehicle's Equipment schedule; a tax of 1 an item; an info flag
counting the items of each schedule the request carries."""


def test_a_rating_plugin_prices_each_scheduled_item(api, admin_token):
    tenant = quotes_tenant(api, admin_token, schedules_model(), plugins=PER_ITEM_RATING)
    new_account(api, admin_token, tenant)
    quote, vehicle = draft_quote(api, admin_token, tenant)
    path = schedule_path(tenant, quote, vehicle)
    ok(call(api, "PUT", path, admin_token, [item("AB0001"), item("AB0002", kind="phone"), item("AB0003")]))
    third = ok(call(api, "GET", path, admin_token))["items"][2]["locator"]
    assert call(api, "DELETE", path, admin_token, [third]).status_code == 200

    priced = ok(call(api, "PATCH", f"/policy/{tenant}/quotes/{quote}/price", admin_token))
    assert sorted((charge["chargeType"], charge["amount"]) for charge in priced["items"]) == [
        ("premium", Decimal("14.00")),
        ("tax", Decimal("2.00")),
    ]


def _flag_notes(answer: dict) -> list[str]:
    return [flag["note"] for flag in answer["underwritingFlags"]]


@pytest.mark.parametrize("reset, renewal_counts", [(True, "[0]"), (False, "[2]")])
def test_transactions_plugins_see_the_schedule_they_show(api, admin_token, reset, renewal_counts):
    tenant = quotes_tenant(api, admin_token, schedules_model(reset_on_renewal=reset), plugins=PER_ITEM_RATING)
    quote, vehicle = draft_quote(api, admin_token, tenant)
    ok(call(api, "PUT", schedule_path(tenant, quote, vehicle), admin_token, [item("AB0001"), item("AB0002")]))
    issued = ok(call(api, "PATCH", f"/policy/{tenant}/quotes/{quote}/issue", admin_token))
    policy = issued["policyLocator"]

    change = ok(create(api, admin_token, tenant, policy, "change", [params(AUGUST)]))["locator"]
    underwritten = ok(call(api, "PATCH", transaction_path(tenant, change, "/underwrite"), admin_token))
    assert _flag_notes(underwritten) == ["scheduled items: [2]"]  # the base's, not written to yet
    path = transaction_path(tenant, change, f"/schedules/{vehicle}")
    another = ok(create(api, admin_token, tenant, policy, "change", [params(AUGUST)]))["locator"]
    ok(call(api, "PUT", transaction_path(tenant, another, f"/schedules/{vehicle}"), admin_token, [item("AB0003")]))
    underwritten = ok(call(api, "PATCH", transaction_path(tenant, another, "/underwrite"), admin_token))
    assert _flag_notes(underwritten) == ["scheduled items: [3]"]  # its own, once written
    assert len(ok(call(api, "GET", path, admin_token))["items"]) == 2

    renewal = ok(create(api, admin_token, tenant, policy, "renew", []))["locator"]
    underwritten = ok(call(api, "PATCH", transaction_path(tenant, renewal, "/underwrite"), admin_token))
    assert _flag_notes(underwritten) == [f"scheduled items: {renewal_counts}"]
