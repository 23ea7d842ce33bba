"""Schedules of policy transactions: copied from the quote on issue (the issuance shows the issued
quote's items), a change shows its base's until its first write makes them its own, a renewal empties a
schedule that `resetOnRenewal` and keeps one that does not; only a draft transaction takes changes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.quotes.support import new_account
from tests.api.schedules.support import every_item, item, schedule_path, schedules_model
from tests.api.transactions.support import AUGUST, create, params, transaction_path
from tests.support.api import assert_error, call, event_types, ok
from tests.support.configs import quotes_tenant


def _issued_with_items(api: Any, token: str, tenant: str, serials: list[str]) -> tuple[dict[str, Any], str]:
    """A policy issued from a quote whose Vehicle schedule holds `serials`: (policy, Vehicle static locator)."""
    account = new_account(api, token, tenant)
    quote = ok(
        call(
            api,
            "POST",
            f"/policy/{tenant}/quotes",
            token,
            {
                "productName": "PersonalAuto",
                "accountLocator": account,
                "startTime": "2026-02-01T05:00:00Z",
                "data": {"channel": "web"},
                "elements": [
                    {
                        "type": "Vehicle",
                        "data": {"vin": "1HGCM82633A004352", "value": "12000.50"},
                        "elements": [{"type": "Collision", "coverageTerms": {"Limit": "l50k"}}],
                    }
                ],
            },
        )
    )
    vehicle = quote["element"]["elements"][0]["staticLocator"]
    ok(call(api, "PUT", schedule_path(tenant, quote["locator"], vehicle), token, [item(s) for s in serials]))
    issued = ok(call(api, "PATCH", f"/policy/{tenant}/quotes/{quote['locator']}/issue", token))
    return ok(call(api, "GET", f"/policy/{tenant}/policies/{issued['policyLocator']}", token)), vehicle


def _serials(api: Any, token: str, tenant: str, transaction: str, vehicle: str) -> list[str]:
    return [
        entry["data"]["serial"]
        for entry in every_item(api, token, transaction_path(tenant, transaction, f"/schedules/{vehicle}"))
    ]


@pytest.fixture
def tenant(api, admin_token) -> str:
    return quotes_tenant(api, admin_token, schedules_model(reset_on_renewal=True))


def test_issue_copies_the_quotes_items_and_a_change_makes_them_its_own_on_first_write(api, admin_token, tenant):
    policy, vehicle = _issued_with_items(api, admin_token, tenant, ["AB0001", "AB0002"])
    issuance = policy["issuedTransactionLocator"]
    described = ok(call(api, "GET", transaction_path(tenant, issuance, "/schedules"), admin_token))
    assert described[vehicle]["scheduleItemType"] == "Equipment"
    assert _serials(api, admin_token, tenant, issuance, vehicle) == ["AB0001", "AB0002"]
    assert_error(
        call(api, "PUT", transaction_path(tenant, issuance, f"/schedules/{vehicle}"), admin_token, [item("AB0003")]),
        409,
        "transaction.not_draft",
    )

    change = ok(create(api, admin_token, tenant, policy["locator"], "change", [params(AUGUST)]))["locator"]
    path = transaction_path(tenant, change, f"/schedules/{vehicle}")
    inherited = every_item(api, admin_token, path)
    assert [entry["data"]["serial"] for entry in inherited] == ["AB0001", "AB0002"]
    added = call(api, "PUT", path, admin_token, [item("AB0003")])
    assert ok(added)["success"] is True
    assert event_types(api, admin_token, tenant, added) == ["schedule.items.add"]
    ok(
        call(
            api,
            "PATCH",
            path,
            admin_token,
            [{"locator": inherited[0]["locator"], "setData": {"kind": "phone"}, "removeData": {}}],
        )
    )
    assert call(api, "DELETE", path, admin_token, [inherited[1]["locator"]]).status_code == 200
    mine = every_item(api, admin_token, path)
    assert [(entry["locator"], entry["data"]["serial"], entry["data"]["kind"]) for entry in mine[:1]] == [
        (inherited[0]["locator"], "AB0001", "phone")
    ]
    assert [entry["data"]["serial"] for entry in mine] == ["AB0001", "AB0003"]
    # the issued transaction's (the quote's) schedule is unchanged
    assert _serials(api, admin_token, tenant, issuance, vehicle) == ["AB0001", "AB0002"]


def test_a_draft_change_patching_inherited_items_first_makes_them_its_own(api, admin_token, tenant):
    policy, vehicle = _issued_with_items(api, admin_token, tenant, ["AB0001", "AB0002"])
    change = ok(create(api, admin_token, tenant, policy["locator"], "change", [params(AUGUST)]))["locator"]
    path = transaction_path(tenant, change, f"/schedules/{vehicle}")
    first = every_item(api, admin_token, path)[0]
    ok(
        call(
            api,
            "PATCH",
            path,
            admin_token,
            [{"locator": first["locator"], "setData": {"value": "5"}, "removeData": {}}],
        )
    )
    assert [str(entry["data"]["value"]) for entry in every_item(api, admin_token, path)] == ["5.00", "1000.00"]


@pytest.mark.parametrize("reset, expected", [(True, []), (False, ["AB0001"])])
def test_a_renewal_empties_a_schedule_that_resets_on_renewal(api, admin_token, reset, expected):
    tenant = quotes_tenant(api, admin_token, schedules_model(reset_on_renewal=reset))
    policy, vehicle = _issued_with_items(api, admin_token, tenant, ["AB0001"])
    renewal = ok(create(api, admin_token, tenant, policy["locator"], "renew", []))["locator"]
    assert _serials(api, admin_token, tenant, renewal, vehicle) == expected
