"""Creating quotes from the deployed configuration, reading and listing them, and the bad inputs of
creation: what names something the configuration lacks is a 400; what the data model rejects is kept
on the draft with its validationResult."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.quotes.support import (
    ELEMENT_FIELDS,
    QUOTE_FIELDS,
    UNKNOWN,
    auto,
    create,
    dwelling_data,
    errors_of,
    home,
    new_account,
    of_type,
    quote_path,
    quotes,
    vehicle,
    walk,
)
from tests.support.api import assert_error, call, event_types, json_of, ok
from tests.support.configs import quotes_model, quotes_tenant


def test_a_quote_is_created_as_a_draft_with_the_tenants_defaults(api, admin_token, tenant, account):
    response = call(api, "POST", quotes(tenant), admin_token, auto(account))
    quote = ok(response)

    assert QUOTE_FIELDS <= set(quote)
    assert (quote["quoteState"], quote["productName"], quote["accountLocator"]) == ("draft", "PersonalAuto", account)
    assert (quote["currency"], quote["timezone"], quote["durationBasis"]) == ("USD", "America/New_York", "months")
    assert (quote["startTime"], quote["endTime"], quote["duration"]) == (
        "2026-02-01T05:00:00.000Z",
        "2027-02-01T05:00:00.000Z",
        12,
    )
    assert (quote["billingLevel"], quote["contacts"], quote["static"]) == ("account", [], {})
    assert quote["validationResult"] == {"success": True, "validationItems": []}
    assert "quoteNumber" not in quote  # PersonalAuto numbers quotes on validation
    assert event_types(api, admin_token, tenant, response) == ["policy.quote.create"]
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token)) == quote


def test_the_element_tree_gets_locators_parents_categories_and_default_coverage_terms(
    api, admin_token, tenant, account
):
    quote = create(
        api,
        admin_token,
        tenant,
        auto(
            account,
            vehicle(),
            vehicle("2HGCM82633A004352", "30000"),
            data={"channel": "agent", "drivers": [{"name": "Ada", "licensed": "2001-05-01"}]},
        ),
    )
    root = quote["element"]
    vehicles = of_type(quote, "Vehicle")

    assert all(ELEMENT_FIELDS <= set(element) for element in walk(root))
    assert (root["type"], root["category"], root["parentLocator"]) == ("PersonalAuto", "product", quote["locator"])
    assert root["data"] == {"channel": "agent", "drivers": [{"name": "Ada", "licensed": "2001-05-01"}]}
    assert [(v["category"], v["parentLocator"], v["data"]["value"]) for v in vehicles] == [
        ("exposure", root["locator"], Decimal("12000.50")),
        ("exposure", root["locator"], Decimal("30000.00")),
    ]
    collision = vehicles[0]["elements"][0]
    assert (collision["category"], collision["parentLocator"]) == ("coverage", vehicles[0]["locator"])
    assert collision["coverageTerms"] == {"Limit": "l50k", "Deductible": "d500"}
    assert len({element["locator"] for element in walk(root)}) == 5
    assert all(element["staticLocator"] == element["locator"] for element in walk(root))
    assert all(element["originalEffectiveTime"] == "2026-02-01T05:00:00.000Z" for element in walk(root))


def test_elements_the_contents_mark_with_an_exclamation_mark_create_themselves(api, admin_token, tenant, account):
    quote = create(api, admin_token, tenant, home(account))
    given = create(
        api,
        admin_token,
        tenant,
        home(account, elements=[{"type": "Dwelling", "data": dwelling_data(), "elements": [{"type": "Fire"}]}]),
    )

    assert [element["type"] for element in walk(quote["element"])] == ["Homeowners", "Dwelling"]
    assert [element["type"] for element in walk(given["element"])] == ["Homeowners", "Dwelling", "Fire"]
    assert of_type(given, "Fire")[0]["coverageTerms"] == {"Limit": "l100k"}
    assert given["validationResult"]["success"] is True


def test_the_request_overrides_the_defaults_and_the_account_gives_the_time_zone(api, admin_token, tenant):
    account = ok(
        call(
            api,
            "POST",
            f"/policy/{tenant}/accounts",
            admin_token,
            {"type": "CompanyAccount", "timezone": "Europe/London", "data": {"companyName": "Engines", "state": "NY"}},
        )
    )
    quote = create(api, admin_token, tenant, auto(account["locator"], termDuration=6))
    weekly = create(
        api,
        admin_token,
        tenant,
        auto(
            account["locator"],
            currency="EUR",
            timezone="Asia/Tokyo",
            durationBasis="weeks",
            endTime="2026-03-01T05:00:00Z",
            billingLevel="policy",
            expirationTime="2026-01-31T00:00:00Z",
        ),
    )

    assert (quote["timezone"], quote["endTime"], quote["duration"]) == ("Europe/London", "2026-08-01T04:00:00.000Z", 6)
    assert (weekly["currency"], weekly["timezone"], weekly["durationBasis"], weekly["duration"]) == (
        "EUR",
        "Asia/Tokyo",
        "weeks",
        4,
    )
    assert (weekly["billingLevel"], weekly["expirationTime"]) == ("policy", "2026-01-31T00:00:00.000Z")


def test_plan_names_come_from_the_account_then_the_product_then_the_tenant(api, admin_token):
    model = quotes_model()
    model["delinquencyPlans"] = {"Standard": {"gracePeriodDays": 7}, "Lenient": {"gracePeriodDays": 30}}
    model["autoRenewalPlans"] = {"Yearly": {"generateAutoRenewals": True}}
    model["defaultDelinquencyPlan"] = "Standard"
    model["products"]["PersonalAuto"]["defaultAutoRenewalPlan"] = "Yearly"
    tenant = quotes_tenant(api, admin_token, model, plugins=None)
    plain = new_account(api, admin_token, tenant)
    lenient = ok(
        call(
            api,
            "POST",
            f"/policy/{tenant}/accounts",
            admin_token,
            {"type": "CompanyAccount", "delinquencyPlanName": "Lenient", "data": {"companyName": "E", "state": "NY"}},
        )
    )

    from_tenant = create(api, admin_token, tenant, auto(plain))
    from_account = create(api, admin_token, tenant, auto(lenient["locator"]))

    assert (from_tenant["delinquencyPlanName"], from_tenant["autoRenewalPlanName"]) == ("Standard", "Yearly")
    assert from_account["delinquencyPlanName"] == "Lenient"


def test_data_the_model_rejects_is_kept_on_the_draft_with_its_validation_result(api, admin_token, tenant, account):
    quote = create(
        api,
        admin_token,
        tenant,
        auto(account, vehicle(vin="short", value="lots"), data={"channel": "phone", "unknown": 1}),
    )
    vehicle_element = of_type(quote, "Vehicle")[0]

    assert quote["quoteState"] == "draft"
    assert quote["validationResult"]["success"] is False
    assert sorted(errors_of(quote["validationResult"])) == [
        "data.channel: must be one of: web, agent",
        "data.unknown: is not a configured field",
        "elements[0].data.value: must be a number",
        "elements[0].data.vin: must be at least 11 characters long",
    ]
    assert {item["locator"] for item in quote["validationResult"]["validationItems"]} == {
        quote["element"]["locator"],
        vehicle_element["locator"],
    }
    assert vehicle_element["data"] == {"vin": "short", "value": "lots"}


def test_missing_elements_and_terms_are_reported_not_refused(api, admin_token, tenant, account):
    quote = create(api, admin_token, tenant, auto(account, elements=[]))
    bare_vehicle = create(
        api, admin_token, tenant, auto(account, {"type": "Vehicle", "data": {"vin": "1HGCM82633A004352", "value": 1}})
    )

    assert errors_of(quote["validationResult"]) == ["elements: needs at least 1 Vehicle (Vehicle+), has 0"]
    assert errors_of(bare_vehicle["validationResult"]) == [
        "elements[0].elements: needs at least 1 Collision (Collision), has 0"
    ]


@pytest.mark.parametrize(
    "change, status, code, field",
    [
        ({"productName": "Boats"}, 400, "quote.unknown_product", "productName"),
        ({"accountLocator": UNKNOWN}, 400, "quote.unknown_account", "accountLocator"),
        ({"elements": [{"type": "Dwelling"}]}, 400, "quote.invalid_element", "elements[0].type"),
        ({"elements": [{"type": "Yacht"}]}, 400, "quote.invalid_element", "elements[0].type"),
        ({"elements": [{"type": "BaseVehicle"}]}, 400, "quote.invalid_element", "elements[0].type"),
        (
            {"elements": [{"type": "Vehicle", "elements": [{"type": "Fire"}]}]},
            400,
            "quote.invalid_element",
            "elements[0].elements[0].type",
        ),
        ({"delinquencyPlanName": "Strict"}, 400, "quote.invalid_reference", "delinquencyPlanName"),
        ({"timezone": "Mars/Olympus"}, 400, "quote.invalid_reference", "timezone"),
        (
            {"contacts": [{"contactLocator": UNKNOWN, "roles": ["pilot"]}]},
            400,
            "quote.invalid_reference",
            "contacts.0.roles",
        ),
        ({"durationBasis": "fortnights"}, 400, "request.invalid", "durationBasis"),
        ({"startTime": "soon"}, 400, "request.invalid", "startTime"),
        ({"quoteState": "issued"}, 400, "request.invalid", "quoteState"),
        ({"locator": UNKNOWN}, 400, "request.invalid", "locator"),
        ({"invoiceFeeAmount": -1}, 400, "request.invalid", "invoiceFeeAmount"),
    ],
)
def test_a_request_naming_what_does_not_exist_is_a_400_and_stores_nothing(
    api, admin_token, tenant, account, change, status, code, field
):
    body = assert_error(call(api, "POST", quotes(tenant), admin_token, {**auto(account), **change}), status, code)

    assert field in {error["field"] for error in body["fieldErrors"]}
    assert ok(call(api, "GET", quotes(tenant, "/list"), admin_token))["items"] == []


def test_a_product_the_accounts_type_may_not_buy_is_a_400(api, admin_token, tenant):
    prospect = new_account(api, admin_token, tenant, "ProspectAccount")
    body = assert_error(
        call(api, "POST", quotes(tenant), admin_token, home(prospect)), 400, "quote.account_not_eligible"
    )
    assert body["fieldErrors"][0]["field"] == "accountLocator"


def test_malformed_and_missing_bodies_are_400s(api, admin_token, tenant, account):
    assert_error(
        api.http.post(
            quotes(tenant),
            body=b"{nope",
            headers={"Authorization": f"Bearer {admin_token}", "Content-Type": "application/json"},
        ),
        400,
        "request.malformed_json",
    )
    missing = assert_error(
        call(api, "POST", quotes(tenant), admin_token, {"productName": "PersonalAuto"}), 400, "request.invalid"
    )
    assert {error["field"] for error in missing["fieldErrors"]} == {"accountLocator", "startTime"}


def test_an_idempotency_key_creates_one_quote_for_two_identical_requests(api, admin_token, tenant, account):
    first = create(api, admin_token, tenant, auto(account), **{"X-Idempotency-Key": "quote-1"})
    again = create(api, admin_token, tenant, auto(account), **{"X-Idempotency-Key": "quote-1"})
    other = call(
        api,
        "POST",
        quotes(tenant),
        admin_token,
        auto(account, termDuration=3),
        headers={"X-Idempotency-Key": "quote-1"},
    )

    assert again == first
    assert_error(other, 409, "idempotency.key_reused")
    assert [q["locator"] for q in ok(call(api, "GET", quotes(tenant, "/list"), admin_token))["items"]] == [
        first["locator"]
    ]


def test_lists_of_the_tenant_and_of_the_account_page_oldest_first(api, admin_token, tenant, account):
    other = new_account(api, admin_token, tenant)
    made = [create(api, admin_token, tenant, auto(owner))["locator"] for owner in (account, other, account)]

    first = ok(call(api, "GET", quotes(tenant, "/list?count=2"), admin_token))
    rest = ok(call(api, "GET", quotes(tenant, "/list?offset=2&count=2"), admin_token))
    of_account = ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}/quotes/list", admin_token))

    assert ([q["locator"] for q in first["items"]], first["listCompleted"]) == (made[:2], False)
    assert ([q["locator"] for q in rest["items"]], rest["listCompleted"]) == (made[2:], True)
    assert [q["locator"] for q in of_account["items"]] == [made[0], made[2]]
    assert all(QUOTE_FIELDS <= set(q) for q in of_account["items"])
    assert_error(call(api, "GET", quotes(tenant, "/list?count=101"), admin_token), 400, "request.invalid")


def test_the_quotes_of_an_unknown_account_are_a_404(api, admin_token, tenant):
    assert_error(
        call(api, "GET", f"/policy/{tenant}/accounts/{UNKNOWN}/quotes/list", admin_token), 404, "account.not_found"
    )


def test_an_unknown_quote_is_a_404(api, admin_token, tenant):
    for suffix in ("", "/price", "/underwritingFlags", "/static"):
        assert_error(call(api, "GET", quote_path(tenant, UNKNOWN, suffix), admin_token), 404, "quote.not_found")
    assert_error(call(api, "PATCH", quote_path(tenant, UNKNOWN, "/issue"), admin_token), 404, "quote.not_found")


def test_a_draft_is_completed_by_updates_and_added_elements(api, admin_token, tenant, account):
    quote = create(api, admin_token, tenant, home(account))
    dwelling = of_type(quote, "Dwelling")[0]
    updated = ok(
        call(
            api,
            "PATCH",
            quote_path(tenant, quote["locator"]),
            admin_token,
            {"elements": [{"locator": dwelling["locator"], "setData": dwelling_data()}]},
        )
    )
    completed = ok(
        call(
            api,
            "PUT",
            quote_path(tenant, quote["locator"], "/elements"),
            admin_token,
            [{"type": "Fire", "parentLocator": dwelling["locator"]}],
        )
    )

    assert sorted(errors_of(quote["validationResult"])) == [
        "elements[0].data.address: is required",
        "elements[0].elements: needs at least 1 Fire (Fire), has 0",
    ]
    assert errors_of(updated["validationResult"]) == ["elements[0].elements: needs at least 1 Fire (Fire), has 0"]
    assert completed["validationResult"]["success"] is True
    assert json_of(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token)) == completed
