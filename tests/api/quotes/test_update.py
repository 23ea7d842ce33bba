"""Changing a draft quote: data and terms of the root and its elements, times, plans, contacts, the
account, elements added and removed; each change re-checked and recorded as `policy.quote.update`."""

from __future__ import annotations

import pytest

from tests.api.quotes.support import UNKNOWN, auto, create, errors_of, new_account, of_type, quote_path, vehicle
from tests.support.api import assert_error, call, event_types, ok

CONTACT = "01J0000000000000000000000A"
OTHER_CONTACT = "01J0000000000000000000000B"


def test_an_update_sets_and_removes_data_and_terms_and_is_checked_again(api, admin_token, tenant, account):
    quote = create(api, admin_token, tenant, auto(account))
    collision = of_type(quote, "Collision")[0]
    response = call(
        api,
        "PATCH",
        quote_path(tenant, quote["locator"]),
        admin_token,
        {
            "setData": {"drivers": [{"name": "Ann"}]},
            "removeData": {"channel": ""},
            "elements": [
                {
                    "locator": collision["locator"],
                    "setCoverageTerms": {"Deductible": "d1000"},
                    "removeCoverageTerms": {"Limit": ""},
                }
            ],
        },
    )
    updated = ok(response)

    assert updated["element"]["data"] == {"drivers": [{"name": "Ann"}]}
    assert of_type(updated, "Collision")[0]["coverageTerms"] == {"Deductible": "d1000", "Limit": "l100k"}  # default
    assert errors_of(updated["validationResult"]) == ["data.drivers[0].licensed: is required"]
    assert event_types(api, admin_token, tenant, response) == ["policy.quote.update"]
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token)) == updated


def test_times_follow_the_term_unless_given(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    moved = ok(call(api, "PATCH", quote_path(tenant, locator), admin_token, {"startTime": "2026-03-01T05:00:00Z"}))
    reset = ok(call(api, "PATCH", quote_path(tenant, locator), admin_token, {"resetEndTime": True}))
    explicit = ok(call(api, "PATCH", quote_path(tenant, locator), admin_token, {"endTime": "2026-09-01T04:00:00Z"}))
    backwards = ok(call(api, "PATCH", quote_path(tenant, locator), admin_token, {"endTime": "2026-01-01T00:00:00Z"}))

    assert (moved["endTime"], moved["duration"]) == ("2027-02-01T05:00:00.000Z", 11)
    assert (reset["endTime"], reset["duration"]) == ("2027-03-01T05:00:00.000Z", 12)
    assert (explicit["endTime"], explicit["duration"]) == ("2026-09-01T04:00:00.000Z", 6)
    assert errors_of(backwards["validationResult"]) == ["endTime: must be after startTime"]
    assert "duration" not in backwards


def test_contacts_plans_and_the_account_change(api, admin_token, tenant, account):
    quote = create(
        api, admin_token, tenant, auto(account, contacts=[{"contactLocator": CONTACT, "roles": ["primary"]}])
    )
    company = ok(
        call(
            api,
            "POST",
            f"/policy/{tenant}/accounts",
            admin_token,
            {"type": "CompanyAccount", "data": {"companyName": "E", "state": "NY"}},
        )
    )["locator"]
    updated = ok(
        call(
            api,
            "PATCH",
            quote_path(tenant, quote["locator"]),
            admin_token,
            {
                "setContacts": [
                    {"contactLocator": CONTACT, "roles": ["billing"]},
                    {"contactLocator": OTHER_CONTACT, "roles": ["broker"]},
                ],
                "accountLocator": company,
                "billingLevel": "policy",
                "currency": "EUR",
                "timezone": "Europe/Paris",
            },
        )
    )
    removed = ok(call(api, "PATCH", quote_path(tenant, quote["locator"]), admin_token, {"removeContacts": [CONTACT]}))

    assert updated["contacts"] == [
        {"contactLocator": CONTACT, "roles": ["billing"]},
        {"contactLocator": OTHER_CONTACT, "roles": ["broker"]},
    ]
    assert (updated["accountLocator"], updated["billingLevel"], updated["currency"], updated["timezone"]) == (
        company,
        "policy",
        "EUR",
        "Europe/Paris",
    )
    assert removed["contacts"] == [{"contactLocator": OTHER_CONTACT, "roles": ["broker"]}]
    assert [
        q["locator"]
        for q in ok(call(api, "GET", f"/policy/{tenant}/accounts/{company}/quotes/list", admin_token))["items"]
    ] == [quote["locator"]]
    assert ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}/quotes/list", admin_token))["items"] == []


@pytest.mark.parametrize(
    "body, code, field",
    [
        ({"accountLocator": UNKNOWN}, "quote.unknown_account", "accountLocator"),
        ({"autoRenewalPlanName": "Forever"}, "quote.invalid_reference", "autoRenewalPlanName"),
        (
            {"preferences": {"installmentPreferences": {"installmentWeights": [1], "installmentPlanName": "Weekly"}}},
            "quote.invalid_reference",
            "preferences.installmentPreferences.installmentPlanName",
        ),
        ({"elements": [{"locator": UNKNOWN, "setData": {}}]}, "quote.invalid_element", "elements[0].locator"),
        ({"quoteState": "issued"}, "request.invalid", "quoteState"),
    ],
)
def test_bad_updates_are_400s_and_change_nothing(api, admin_token, tenant, account, body, code, field):
    quote = create(api, admin_token, tenant, auto(account))
    error = assert_error(call(api, "PATCH", quote_path(tenant, quote["locator"]), admin_token, body), 400, code)

    assert field in {e["field"] for e in error["fieldErrors"]}
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token)) == quote


def test_an_account_the_product_is_not_for_cannot_take_the_quote(api, admin_token, tenant, account):
    quote = create(api, admin_token, tenant, auto(account))
    prospect = new_account(api, admin_token, tenant, "ProspectAccount")
    assert_error(
        call(api, "PATCH", quote_path(tenant, quote["locator"]), admin_token, {"accountLocator": prospect}),
        400,
        "quote.account_not_eligible",
    )


def test_elements_are_added_and_removed_with_their_children(api, admin_token, tenant, account):
    quote = create(api, admin_token, tenant, auto(account))
    first = of_type(quote, "Vehicle")[0]
    added = ok(
        call(
            api,
            "PUT",
            quote_path(tenant, quote["locator"], "/elements"),
            admin_token,
            [vehicle("2HGCM82633A004352"), {"type": "Glass", "parentLocator": first["locator"]}],
        )
    )
    response = call(api, "DELETE", quote_path(tenant, quote["locator"], "/elements"), admin_token, [first["locator"]])
    removed = ok(response)

    assert [len(of_type(added, kind)) for kind in ("Vehicle", "Collision", "Glass")] == [2, 2, 1]
    assert [v["data"]["vin"] for v in of_type(removed, "Vehicle")] == ["2HGCM82633A004352"]
    assert [len(of_type(removed, kind)) for kind in ("Collision", "Glass")] == [1, 0]
    assert event_types(api, admin_token, tenant, response) == ["policy.quote.update"]
    assert_error(
        call(
            api, "DELETE", quote_path(tenant, quote["locator"], "/elements"), admin_token, [quote["element"]["locator"]]
        ),
        400,
        "quote.invalid_element",
    )
    assert_error(
        call(api, "PUT", quote_path(tenant, quote["locator"], "/elements"), admin_token, [{"type": "Glass"}]),
        400,
        "quote.invalid_element",
    )
