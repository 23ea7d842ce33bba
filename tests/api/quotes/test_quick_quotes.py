"""Quick quotes: priced without an account, checked against the data model only (no validation plugin),
sent back to draft without their price by any change, final once discarded."""

from __future__ import annotations

import pytest

from tests.api.quotes.support import CHARGE_FIELDS, START, UNKNOWN, auto, errors_of, vehicle
from tests.support.api import assert_error, call, event_types, ok
from tests.support.configs import CITIES_CSV, quotes_model, quotes_tenant, upload_constraint_table

QUICK_FIELDS = {"locator", "quickQuoteState", "productName", "element", "contacts"}
QUICK_PRICE_FIELDS = {
    "tenantLocator",
    "quickQuoteLocator",
    "quickQuoteState",
    "productName",
    "startTime",
    "endTime",
    "duration",
    "durationBasis",
    "items",
    "state",
}


def quick(tenant: str, suffix: str = "") -> str:
    return f"/policy/{tenant}/quickquotes{suffix}"


def body(**fields) -> dict:
    return {key: value for key, value in auto("", **fields).items() if key != "accountLocator"}


def test_a_quick_quote_is_priced_without_an_account(api, admin_token, tenant):
    response = call(api, "POST", quick(tenant), admin_token, body())
    created = ok(response)
    locator = created["locator"]
    validated = ok(call(api, "PATCH", quick(tenant, f"/{locator}/validate"), admin_token))
    priced = ok(call(api, "PATCH", quick(tenant, f"/{locator}/price"), admin_token))

    assert QUICK_FIELDS <= set(created)
    assert (created["quickQuoteState"], created["startTime"], created["duration"]) == (
        "draft",
        START.replace("Z", ".000Z"),
        12,
    )
    assert "accountLocator" not in created
    assert event_types(api, admin_token, tenant, response) == ["policy.quickquote.create"]
    assert validated["quickQuoteState"] == "validated"
    assert QUICK_PRICE_FIELDS <= set(priced)
    assert (priced["quickQuoteState"], priced["state"]) == ("priced", "priced")
    assert all(CHARGE_FIELDS <= set(charge) for charge in priced["items"])
    assert [c["amount"] for c in priced["items"]] == [1200, 25]
    assert ok(call(api, "GET", quick(tenant, f"/{locator}/price"), admin_token)) == priced
    assert ok(call(api, "GET", quick(tenant, f"/{locator}"), admin_token))["quickQuoteState"] == "priced"


def test_elements_sent_as_the_definition_types_them_keep_none_of_their_answer_fields(api, admin_token, tenant):
    # QuickQuoteCreateRequest's elements are ElementResponses: a platform client sends their locator,
    # originalEffectiveTime and category too
    answered = {"locator": "01J00000000000000000000001", "originalEffectiveTime": START, "category": "exposure"}
    given = vehicle(**answered)
    given["elements"][0].update(answered, locator="01J00000000000000000000002", category="coverage")
    created = ok(call(api, "POST", quick(tenant), admin_token, body(elements=[given])))

    [exposure] = created["element"]["elements"]
    [coverage] = exposure["elements"]
    assert (exposure["type"], coverage["type"]) == ("Vehicle", "Collision")
    assert {exposure["locator"], coverage["locator"]}.isdisjoint(
        {"01J00000000000000000000001", "01J00000000000000000000002"}
    )
    assert exposure["originalEffectiveTime"] == created["startTime"]


def test_pricing_a_draft_validates_it_first_and_records_both(api, admin_token, tenant):
    locator = ok(call(api, "POST", quick(tenant), admin_token, body()))["locator"]
    response = call(api, "PATCH", quick(tenant, f"/{locator}/price"), admin_token)

    assert ok(response)["quickQuoteState"] == "priced"
    assert event_types(api, admin_token, tenant, response) == ["policy.quickquote.validate", "policy.quickquote.price"]


def test_the_validation_plugin_does_not_run_on_quick_quotes(api, admin_token, tenant):
    locator = ok(call(api, "POST", quick(tenant), admin_token, body(elements=[vehicle(vin="00000000000000001")])))[
        "locator"
    ]
    assert ok(call(api, "PATCH", quick(tenant, f"/{locator}/validate"), admin_token))["quickQuoteState"] == "validated"


def test_data_that_fails_the_model_answers_the_draft_with_its_result(api, admin_token, tenant):
    created = ok(call(api, "POST", quick(tenant), admin_token, body(elements=[vehicle(vin="short")])))
    response = call(api, "PATCH", quick(tenant, f"/{created['locator']}/price"), admin_token)

    assert ok(response)["quickQuoteState"] == "draft"
    assert errors_of(ok(response)["validationResult"]) == ["elements[0].data.vin: must be at least 11 characters long"]
    assert event_types(api, admin_token, tenant, response) == []
    assert_error(
        call(api, "GET", quick(tenant, f"/{created['locator']}/price"), admin_token), 409, "quickQuote.not_priced"
    )


def test_a_failing_rating_plugin_keeps_the_quick_quote_as_it_was(api, admin_token, tenant):
    locator = ok(call(api, "POST", quick(tenant), admin_token, body(elements=[vehicle(vin="CRASH000000000001")])))[
        "locator"
    ]
    validated = ok(call(api, "PATCH", quick(tenant, f"/{locator}/validate"), admin_token))
    failed = ok(call(api, "PATCH", quick(tenant, f"/{locator}/price"), admin_token))

    assert (failed["quickQuoteState"], failed["items"], failed["validationResult"]["success"]) == (
        "validated",
        [],
        False,
    )
    assert ok(call(api, "GET", quick(tenant, f"/{locator}"), admin_token)) == validated


def test_a_change_sends_a_priced_quick_quote_back_to_draft_without_its_price(api, admin_token, tenant):
    locator = ok(call(api, "POST", quick(tenant), admin_token, body()))["locator"]
    ok(call(api, "PATCH", quick(tenant, f"/{locator}/price"), admin_token))
    response = call(api, "PATCH", quick(tenant, f"/{locator}"), admin_token, {"setData": {"channel": "agent"}})
    changed = ok(response)

    assert (changed["quickQuoteState"], changed["element"]["data"]) == ("draft", {"channel": "agent"})
    assert event_types(api, admin_token, tenant, response) == ["policy.quickquote.update"]
    assert_error(call(api, "GET", quick(tenant, f"/{locator}/price"), admin_token), 409, "quickQuote.not_priced")
    assert ok(call(api, "PATCH", quick(tenant, f"/{locator}/price"), admin_token))["items"][0]["rate"] == 120


def test_a_discarded_quick_quote_is_final(api, admin_token, tenant):
    locator = ok(call(api, "POST", quick(tenant), admin_token, body()))["locator"]
    response = call(api, "PATCH", quick(tenant, f"/{locator}/discard"), admin_token)

    assert ok(response)["quickQuoteState"] == "discarded"
    assert event_types(api, admin_token, tenant, response) == ["policy.quickquote.discard"]
    for method, suffix, payload in [
        ("PATCH", "/validate", None),
        ("PATCH", "/price", None),
        ("PATCH", "/discard", None),
        ("PATCH", "", {"setData": {}}),
    ]:
        assert_error(
            call(api, method, quick(tenant, f"/{locator}{suffix}"), admin_token, payload),
            409,
            "quickQuote.invalid_state",
        )


def test_an_account_given_must_exist_and_may_buy_the_product(api, admin_token, tenant, account):
    with_account = ok(call(api, "POST", quick(tenant), admin_token, {**body(), "accountLocator": account}))

    assert with_account["accountLocator"] == account
    assert_error(
        call(api, "POST", quick(tenant), admin_token, {**body(), "accountLocator": UNKNOWN}),
        400,
        "quote.unknown_account",
    )


@pytest.mark.parametrize(
    "change, code",
    [
        ({"productName": "Boats"}, "quote.unknown_product"),
        ({"elements": [{"type": "Dwelling"}]}, "quote.invalid_element"),
        ({"quickQuoteState": "priced"}, "request.invalid"),
    ],
)
def test_bad_quick_quotes_are_400s(api, admin_token, tenant, change, code):
    assert_error(call(api, "POST", quick(tenant), admin_token, {**body(), **change}), 400, code)


def test_an_unknown_quick_quote_is_a_404(api, admin_token, tenant):
    for method, suffix in [("GET", ""), ("PATCH", "/validate"), ("GET", "/price"), ("GET", "/constraints/dependency")]:
        assert_error(call(api, method, quick(tenant, f"/{UNKNOWN}{suffix}"), admin_token), 404, "quickQuote.not_found")


def test_the_constraint_endpoints_of_a_quick_quote(api, admin_token):
    model = quotes_model()
    model["products"]["PersonalAuto"]["data"]["garageState"] = {
        "type": "string?",
        "constraint": {"table": "Cities", "column": "state", "where": {}},
    }
    tenant = quotes_tenant(api, admin_token, model, plugins=None)
    upload_constraint_table(api, admin_token, tenant, "Cities", CITIES_CSV)
    created = ok(call(api, "POST", quick(tenant), admin_token, body()))
    root = created["element"]["locator"]

    assert ok(call(api, "POST", quick(tenant, f"/{created['locator']}/constraints/evaluate"), admin_token, {})) == {
        root: {"garageState": ["CA", "NY"]}
    }
    assert ok(call(api, "GET", quick(tenant, f"/{created['locator']}/constraints/dependency"), admin_token)) == {
        root: {"garageState": {"table": "Cities", "column": "state", "where": {}}}
    }
