"""Quote numbers (plans, triggers, set, generate), the reserved policy number, static data and its
history, and the constraint table endpoints of quotes."""

from __future__ import annotations

import pytest

from tests.api.quotes.support import (
    advance,
    auto,
    create,
    dwelling_data,
    errors_of,
    home,
    new_account,
    quote_path,
    quotes,
)
from tests.support.api import assert_error, call, event_types, ok
from tests.support.configs import constrained_tenant, quotes_model, quotes_tenant

# --- numbers -------------------------------------------------------------------------------------


def test_quotes_are_numbered_on_validation_by_the_products_plan(api, admin_token, tenant, account):
    first = create(api, admin_token, tenant, auto(account))
    second = create(api, admin_token, tenant, auto(account))
    numbered = [ok(advance(api, admin_token, tenant, q["locator"], "validate"))["quoteNumber"] for q in (second, first)]
    again = ok(advance(api, admin_token, tenant, first["locator"], "validate"))

    assert numbered == ["QPA-000001", "QPA-000002"]
    assert again["quoteNumber"] == "QPA-000002"
    assert [q["locator"] for q in ok(call(api, "GET", quotes(tenant, "/numbers/QPA-000002"), admin_token))] == [
        first["locator"]
    ]
    assert_error(call(api, "GET", quotes(tenant, "/numbers/QPA-999999"), admin_token), 404, "quote.not_found")


def test_a_product_may_number_its_quotes_at_creation_and_its_policy_may_copy_the_number(api, admin_token):
    model = quotes_model()
    model["products"]["PersonalAuto"]["numberingTrigger"] = "creation"
    model["numberingPlans"]["PolicyNumbers"]["copyFromQuote"] = True
    tenant = quotes_tenant(api, admin_token, model)
    quote = create(api, admin_token, tenant, auto(new_account(api, admin_token, tenant)))
    issued = ok(advance(api, admin_token, tenant, quote["locator"], "issue"))

    assert quote["quoteNumber"] == "QPA-000001"
    assert (issued["quoteNumber"], issued["policyNumber"]) == ("QPA-000001", "QPA-000001")


def test_a_number_set_by_hand_is_unique_and_frees_the_old_one(api, admin_token, tenant, account):
    one, two = (create(api, admin_token, tenant, auto(account))["locator"] for _ in range(2))
    ok(advance(api, admin_token, tenant, one, "validate"))
    response = call(api, "POST", quote_path(tenant, one, "/number/set?quoteNumber=Q-7"), admin_token)

    assert ok(response)["quoteNumber"] == "Q-7"
    assert event_types(api, admin_token, tenant, response) == ["policy.quote.update"]
    assert_error(
        call(api, "POST", quote_path(tenant, two, "/number/set?quoteNumber=Q-7"), admin_token),
        409,
        "quote.number_taken",
    )
    assert (
        ok(call(api, "POST", quote_path(tenant, two, "/number/set?quoteNumber=QPA-000001"), admin_token))["quoteNumber"]
        == "QPA-000001"
    )
    assert_error(
        call(api, "POST", quote_path(tenant, two, "/number/set?quoteNumber=%20x"), admin_token), 400, "request.invalid"
    )
    assert_error(call(api, "POST", quote_path(tenant, two, "/number/set"), admin_token), 400, "request.invalid")


def test_a_generated_number_replaces_the_quotes_number(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    first = ok(call(api, "POST", quote_path(tenant, locator, "/number/generate"), admin_token))
    second = ok(call(api, "POST", quote_path(tenant, locator, "/number/generate"), admin_token))

    assert (first["quoteNumber"], second["quoteNumber"]) == ("QPA-000001", "QPA-000002")
    assert ok(
        call(
            api,
            "POST",
            quote_path(
                tenant, create(api, admin_token, tenant, auto(account))["locator"], "/number/set?quoteNumber=QPA-000001"
            ),
            admin_token,
        )
    )


def test_a_product_without_a_numbering_plan_generates_no_number(api, admin_token):
    model = quotes_model()
    del model["products"]["PersonalAuto"]["numberingPlan"]
    tenant = quotes_tenant(api, admin_token, model, plugins=None)
    locator = create(api, admin_token, tenant, auto(new_account(api, admin_token, tenant)))["locator"]

    assert_error(
        call(api, "POST", quote_path(tenant, locator, "/number/generate"), admin_token), 409, "quote.no_numbering_plan"
    )
    assert "quoteNumber" not in ok(advance(api, admin_token, tenant, locator, "validate"))


def test_a_reserved_policy_number_becomes_the_policys_number(api, admin_token, tenant, account):
    one, two = (create(api, admin_token, tenant, auto(account))["locator"] for _ in range(2))
    response = call(
        api, "POST", quote_path(tenant, one, "/reservedPolicyNumber/set?reservedPolicyNumber=EXT-9"), admin_token
    )

    assert ok(response)["reservedPolicyNumber"] == "EXT-9"
    assert event_types(api, admin_token, tenant, response) == [
        "policy.quote.update",
        "policy.quote.policyNumberAssigned",
    ]
    assert_error(
        call(api, "POST", quote_path(tenant, two, "/reservedPolicyNumber/set?reservedPolicyNumber=EXT-9"), admin_token),
        409,
        "quote.policy_number_taken",
    )
    assert ok(advance(api, admin_token, tenant, one, "issue"))["policyNumber"] == "EXT-9"


def test_a_number_of_an_existing_policy_cannot_be_reserved(api, admin_token, tenant, account):
    issued = ok(advance(api, admin_token, tenant, create(api, admin_token, tenant, auto(account))["locator"], "issue"))
    locator = create(api, admin_token, tenant, auto(account))["locator"]

    reserve = f"/reservedPolicyNumber/set?reservedPolicyNumber={issued['policyNumber']}"
    assert_error(call(api, "POST", quote_path(tenant, locator, reserve), admin_token), 409, "quote.policy_number_taken")


# --- static data ---------------------------------------------------------------------------------


def test_static_data_is_added_replaced_and_updated_with_its_history(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account, static={"agency": "North"}))["locator"]
    ok(advance(api, admin_token, tenant, locator, "issue"))
    added = call(api, "POST", quote_path(tenant, locator, "/static"), admin_token, {"agent": "Ann"})
    replaced = call(api, "PUT", quote_path(tenant, locator, "/static"), admin_token, {"agency": "South"})
    updated = call(
        api,
        "PATCH",
        quote_path(tenant, locator, "/static"),
        admin_token,
        {"setData": {"agent": "Bo"}, "removeData": {"agency": ""}},
    )

    assert ok(added)["static"] == {"agency": "North", "agent": "Ann"}
    assert ok(replaced)["static"] == {"agency": "South"}
    assert ok(updated)["static"] == {"agent": "Bo"}
    assert [event_types(api, admin_token, tenant, r) for r in (added, replaced, updated)] == [
        ["policy.quote.staticdata.add"],
        ["policy.quote.staticdata.replace"],
        ["policy.quote.staticdata.update"],
    ]
    assert ok(call(api, "GET", quote_path(tenant, locator, "/static"), admin_token)) == {"agent": "Bo"}
    history = ok(call(api, "GET", quote_path(tenant, locator, "/static/history/list"), admin_token))
    assert [entry["staticData"] for entry in history["items"]] == [
        {"agency": "North", "agent": "Ann"},
        {"agency": "South"},
        {"agent": "Bo"},
    ]
    assert set(history["items"][0]) == {"historyLocator", "staticData", "updatedBy", "updatedAt"}


def test_static_data_is_validated_as_the_products_static_data_says(api, admin_token):
    model = quotes_model()
    model["products"]["PersonalAuto"]["staticData"] = {"agency": {"type": "string"}, "renewals": {"type": "int?"}}
    tenant = quotes_tenant(api, admin_token, model, plugins=None)
    quote = create(api, admin_token, tenant, auto(new_account(api, admin_token, tenant), static={"renewals": "x"}))
    failed = ok(advance(api, admin_token, tenant, quote["locator"], "validate"))
    ok(call(api, "PUT", quote_path(tenant, quote["locator"], "/static"), admin_token, {"agency": "North"}))

    assert errors_of(quote["validationResult"]) == [
        "static.agency: is required",
        "static.renewals: must be a whole number",
    ]
    assert (failed["quoteState"], failed["validationResult"]) == ("draft", quote["validationResult"])
    assert ok(advance(api, admin_token, tenant, quote["locator"], "issue"))["static"] == {"agency": "North"}


def test_a_discarded_quotes_static_data_is_fixed(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    ok(advance(api, admin_token, tenant, locator, "discard"))
    assert_error(
        call(api, "POST", quote_path(tenant, locator, "/static"), admin_token, {"a": 1}), 409, "quote.invalid_state"
    )
    assert_error(
        call(api, "PATCH", quote_path(tenant, locator, "/static"), admin_token, {"setdata": {}}), 400, "request.invalid"
    )


# --- constraint tables ---------------------------------------------------------------------------


@pytest.fixture
def constrained(api, admin_token) -> str:
    return constrained_tenant(api, admin_token, plugins=None)


def test_the_constraints_of_a_quote_are_evaluated_with_its_data_or_the_values_given(api, admin_token, constrained):
    tenant = constrained
    quote = create(api, admin_token, tenant, auto(new_account(api, admin_token, tenant), data={"garageState": "NY"}))
    root = quote["element"]["locator"]
    path = quote_path(tenant, quote["locator"], "/constraints/evaluate")

    assert ok(call(api, "POST", path, admin_token, {})) == {
        root: {"garageState": ["CA", "NY"], "garageCity": ["New York", "Buffalo"]}
    }
    assert ok(call(api, "POST", path, admin_token, {root: {"data": {"garageState": "CA"}}}))[root]["garageCity"] == [
        "Los Angeles",
        "San Diego",
    ]
    assert_error(call(api, "POST", path, admin_token, {quote["locator"]: {}}), 400, "quote.invalid_element")


def test_the_constraint_dependencies_of_a_quote_name_the_element_holding_each_key(api, admin_token, constrained):
    tenant = constrained
    quote = create(api, admin_token, tenant, auto(new_account(api, admin_token, tenant), data={"garageState": "NY"}))
    root = quote["element"]

    assert ok(call(api, "GET", quote_path(tenant, quote["locator"], "/constraints/dependency"), admin_token)) == {
        root["locator"]: {
            "garageState": {"table": "Cities", "column": "state", "where": {}},
            "garageCity": {
                "table": "Cities",
                "column": "city",
                "where": {"state": {"staticLocator": root["staticLocator"], "fieldName": "garageState", "values": []}},
            },
        }
    }


def test_a_value_its_constraint_table_does_not_allow_fails_validation(api, admin_token, constrained):
    tenant = constrained
    quote = create(
        api,
        admin_token,
        tenant,
        auto(new_account(api, admin_token, tenant), data={"garageState": "NY", "garageCity": "San Diego"}),
    )
    body = ok(advance(api, admin_token, tenant, quote["locator"], "validate"))

    assert body["quoteState"] == "draft"
    assert errors_of(body["validationResult"]) == [
        "data.garageCity: 'San Diego' is not allowed by constraint table Cities (allowed: New York, Buffalo)"
    ]


def test_a_quote_without_constrained_fields_evaluates_to_nothing(api, admin_token, tenant, account):
    quote = create(
        api,
        admin_token,
        tenant,
        home(account, elements=[{"type": "Dwelling", "data": dwelling_data(), "elements": [{"type": "Fire"}]}]),
    )
    assert ok(call(api, "POST", quote_path(tenant, quote["locator"], "/constraints/evaluate"), admin_token, {})) == {}
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"], "/constraints/dependency"), admin_token)) == {}
