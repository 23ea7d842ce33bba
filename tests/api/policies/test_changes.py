"""Changing a policy: static data and its history, numbers, contacts, jurisdiction, billing level and
delinquency plan. Each change records its event in the same transaction; a lost race is a 409."""

from __future__ import annotations

import pytest

from tests.api.policies.support import (
    CONTACT,
    OTHER_CONTACT,
    UNKNOWN,
    issue,
    new_account,
    policies,
    policies_model,
    policies_tenant,
)
from tests.builders import system_ctx
from tests.support.api import assert_error, call, event_types, events_of, ok


def path(tenant, issued, suffix=""):
    return policies(tenant, f"/{issued.policyLocator}{suffix}")


def fetch(api, token, tenant, issued):
    return ok(call(api, "GET", path(tenant, issued), token))


# --- static data ---------------------------------------------------------------------------------


def test_static_data_is_added_updated_and_replaced_with_its_events(api, admin_token, tenant, issued):
    static = path(tenant, issued, "/static")
    assert ok(call(api, "GET", static, admin_token)) == {"agency": "Downtown"}

    response = call(api, "POST", static, admin_token, {"agentCode": "ABC"})
    assert ok(response)["static"] == {"agency": "Downtown", "agentCode": "ABC"}
    assert event_types(api, admin_token, tenant, response) == ["policy.staticdata.add"]

    response = call(api, "PATCH", static, admin_token, {"setData": {"renewals": 2}, "removeData": {"agentCode": None}})
    assert ok(response)["static"] == {"agency": "Downtown", "renewals": 2}
    assert event_types(api, admin_token, tenant, response) == ["policy.staticdata.update"]

    response = call(api, "PUT", static, admin_token, {"agency": "Uptown"})
    assert ok(response)["static"] == {"agency": "Uptown"}
    (event,) = events_of(api, admin_token, tenant, response)
    assert (event["type"], event["data"]) == ("policy.staticdata.replace", {"policyLocator": issued.policyLocator})

    assert ok(call(api, "GET", static, admin_token)) == {"agency": "Uptown"}
    assert fetch(api, admin_token, tenant, issued)["static"] == {"agency": "Uptown"}


def test_the_static_data_history_lists_every_version_oldest_first(api, admin_token, tenant, issued, clock):
    static = path(tenant, issued, "/static")
    clock.advance(hours=1)
    ok(call(api, "POST", static, admin_token, {"agentCode": "ABC"}))
    clock.advance(hours=1)
    ok(call(api, "PUT", static, admin_token, {"agency": "Uptown", "renewals": 1}))

    history = ok(call(api, "GET", static + "/history/list", admin_token))
    assert history["listCompleted"] is True
    assert [(h["updatedAt"], h["staticData"]) for h in history["items"]] == [
        ("2026-01-15T09:30:00.000Z", {"agency": "Downtown"}),
        ("2026-01-15T10:30:00.000Z", {"agency": "Downtown", "agentCode": "ABC"}),
        ("2026-01-15T11:30:00.000Z", {"agency": "Uptown", "renewals": 1}),
    ]
    assert all({"historyLocator", "updatedAt", "updatedBy", "staticData"} <= set(h) for h in history["items"])
    assert history["items"][0]["updatedBy"] == system_ctx().user_locator
    assert len({h["historyLocator"] for h in history["items"]}) == 3

    page = ok(call(api, "GET", static + "/history/list?offset=1&count=1", admin_token))
    assert page["listCompleted"] is False
    assert [h["staticData"] for h in page["items"]] == [{"agency": "Downtown", "agentCode": "ABC"}]


@pytest.mark.parametrize(
    "method, body",
    [
        ("POST", {"agentCode": "abc"}),  # regex
        ("POST", {"renewals": "many"}),  # type
        ("POST", {"unknownField": 1}),  # not configured
        ("PUT", {"renewals": 1}),  # the required agency is missing
        ("PATCH", {"setData": {}, "removeData": {"agency": None}}),  # same
    ],
)
def test_static_data_that_fails_validation_changes_nothing(api, admin_token, tenant, issued, method, body):
    static = path(tenant, issued, "/static")
    response = call(api, method, static, admin_token, body)

    answer = ok(response)
    assert answer["static"] == {"agency": "Downtown"}
    assert answer["validationResult"]["success"] is False
    (item,) = answer["validationResult"]["validationItems"]
    assert (item["locator"], item["elementType"]) == (issued.policyLocator, "PersonalAuto")
    assert item["errors"] and all(error.startswith("static.") for error in item["errors"])
    assert event_types(api, admin_token, tenant, response) == []
    assert ok(call(api, "GET", static, admin_token)) == {"agency": "Downtown"}
    assert len(ok(call(api, "GET", static + "/history/list", admin_token))["items"]) == 1


@pytest.mark.parametrize(
    "method, body",
    [
        ("POST", ["agency"]),
        ("PUT", "Downtown"),
        ("PATCH", {"setData": [], "removeData": {}}),
        ("PATCH", {"setData": {}, "removeData": {}, "version": 3}),
    ],
)
def test_static_bodies_of_the_wrong_shape_are_400s(api, admin_token, tenant, issued, method, body):
    assert_error(call(api, method, path(tenant, issued, "/static"), admin_token, body), 400, "request.invalid")


def test_a_malformed_static_body_is_a_400(api, admin_token, tenant, issued):
    response = api.http.post(
        path(tenant, issued, "/static"),
        body=b"{not json",
        headers={"Authorization": f"Bearer {admin_token}", "Content-Type": "application/json"},
    )
    assert_error(response, 400, "request.malformed_json")


# --- numbers -------------------------------------------------------------------------------------


def test_a_number_is_set_and_the_old_one_freed(api, admin_token, tenant, issued):
    response = call(api, "POST", path(tenant, issued, "/number/set?policyNumber=CUSTOM-7"), admin_token)
    assert ok(response)["policyNumber"] == "CUSTOM-7"
    assert event_types(api, admin_token, tenant, response) == ["policy.update"]
    (found,) = ok(call(api, "GET", policies(tenant, "/numbers/CUSTOM-7"), admin_token))
    assert found["locator"] == issued.policyLocator
    assert_error(call(api, "GET", policies(tenant, "/numbers/PA-000001"), admin_token), 404, "policy.not_found")


def test_a_number_in_use_is_a_409(api, admin_token, tenant, account, issued):
    other = issue(tenant, account)
    response = call(api, "POST", path(tenant, other, "/number/set?policyNumber=PA-000001"), admin_token)
    assert_error(response, 409, "policy.number_taken")
    assert event_types(api, admin_token, tenant, response) == []
    assert fetch(api, admin_token, tenant, other)["policyNumber"] == "PA-000002"


def test_setting_the_policys_own_number_changes_nothing(api, admin_token, tenant, issued):
    response = call(api, "POST", path(tenant, issued, "/number/set?policyNumber=PA-000001"), admin_token)
    assert ok(response)["policyNumber"] == "PA-000001"
    assert event_types(api, admin_token, tenant, response) == []


@pytest.mark.parametrize("query", ["", "?policyNumber=", "?policyNumber=%20PA-1", "?policyNumber=" + "9" * 129])
def test_a_missing_or_malformed_number_is_a_400(api, admin_token, tenant, issued, query):
    assert_error(call(api, "POST", path(tenant, issued, "/number/set" + query), admin_token), 400, "request.invalid")


def test_a_generated_number_is_the_plans_next(api, admin_token, tenant, account, issued):
    issue(tenant, account)  # PA-000002
    response = call(api, "POST", path(tenant, issued, "/number/generate"), admin_token)
    assert ok(response)["policyNumber"] == "PA-000003"
    assert event_types(api, admin_token, tenant, response) == ["policy.update"]
    assert_error(call(api, "GET", policies(tenant, "/numbers/PA-000001"), admin_token), 404, "policy.not_found")
    ok(call(api, "POST", path(tenant, issued, "/number/set?policyNumber=PA-000001"), admin_token))


def test_generating_without_a_plan_is_a_409(api, admin_token):
    model = policies_model()
    del model["products"]["PersonalAuto"]["numberingPlan"]
    tenant = policies_tenant(api, admin_token, model)
    issued = issue(tenant, new_account(api, admin_token, tenant))
    assert_error(
        call(api, "POST", path(tenant, issued, "/number/generate"), admin_token), 409, "policy.no_numbering_plan"
    )
    assert (
        ok(call(api, "POST", path(tenant, issued, "/number/set?policyNumber=HAND-1"), admin_token))["policyNumber"]
        == "HAND-1"
    )


# --- contacts ------------------------------------------------------------------------------------


def test_contacts_are_added_updated_listed_and_deleted(api, admin_token, tenant, issued):
    contacts = path(tenant, issued, "/contacts")
    response = call(api, "POST", contacts, admin_token, {"contactLocator": OTHER_CONTACT, "roles": ["billing"]})
    assert ok(response)["contacts"] == [
        {"contactLocator": CONTACT, "roles": ["primary"]},
        {"contactLocator": OTHER_CONTACT, "roles": ["billing"]},
    ]
    assert event_types(api, admin_token, tenant, response) == ["policy.update"]

    updated = ok(
        call(
            api,
            "PATCH",
            f"{contacts}/{CONTACT}",
            admin_token,
            {"addRoles": ["broker", "primary"], "removeRoles": ["primary"]},
        )
    )
    assert updated["contacts"][0] == {"contactLocator": CONTACT, "roles": ["broker", "primary"]}
    assert ok(call(api, "GET", contacts, admin_token)) == updated["contacts"]

    remaining = ok(call(api, "DELETE", f"{contacts}/{CONTACT}", admin_token))["contacts"]
    assert remaining == [{"contactLocator": OTHER_CONTACT, "roles": ["billing"]}]


def test_contact_mistakes(api, admin_token, tenant, issued):
    contacts = path(tenant, issued, "/contacts")
    assert_error(
        call(api, "POST", contacts, admin_token, {"contactLocator": CONTACT, "roles": []}), 409, "policy.contact_exists"
    )
    assert_error(
        call(api, "POST", contacts, admin_token, {"contactLocator": OTHER_CONTACT, "roles": ["boss"]}),
        400,
        "policy.invalid_reference",
    )
    assert_error(
        call(api, "POST", contacts, admin_token, {"contactLocator": "not-a-ulid", "roles": []}), 400, "request.invalid"
    )
    assert_error(
        call(api, "PATCH", f"{contacts}/{CONTACT}", admin_token, {"addRoles": ["boss"]}),
        400,
        "policy.invalid_reference",
    )
    assert_error(
        call(api, "PATCH", f"{contacts}/{OTHER_CONTACT}", admin_token, {"addRoles": []}), 404, "contact.not_found"
    )
    assert_error(call(api, "DELETE", f"{contacts}/{OTHER_CONTACT}", admin_token), 404, "contact.not_found")
    assert fetch(api, admin_token, tenant, issued)["contacts"] == [{"contactLocator": CONTACT, "roles": ["primary"]}]


# --- jurisdiction, billing level, delinquency plan -------------------------------------------------


def test_jurisdiction_is_set_and_removed(api, admin_token, tenant, issued):
    jurisdiction = path(tenant, issued, "/jurisdiction")
    response = call(api, "PATCH", jurisdiction, admin_token, {"jurisdiction": "CA"})
    assert ok(response)["jurisdiction"] == "CA"
    assert event_types(api, admin_token, tenant, response) == ["policy.update"]
    assert "jurisdiction" not in ok(call(api, "PATCH", jurisdiction, admin_token, {}))
    assert_error(call(api, "PATCH", jurisdiction, admin_token, {"jurisdiction": "TX"}), 400, "policy.invalid_reference")


def test_billing_level_is_set(api, admin_token, tenant, issued):
    billing = path(tenant, issued, "/billingLevel")
    response = call(api, "PATCH", billing, admin_token, {"billingLevel": "policy"})
    assert ok(response)["billingLevel"] == "policy"
    assert event_types(api, admin_token, tenant, response) == ["policy.update"]
    assert_error(call(api, "PATCH", billing, admin_token, {"billingLevel": "household"}), 400, "request.invalid")
    assert_error(call(api, "PATCH", billing, admin_token, {}), 400, "request.invalid")
    assert fetch(api, admin_token, tenant, issued)["billingLevel"] == "policy"


def test_delinquency_plan_is_set(api, admin_token, tenant, issued):
    plan = path(tenant, issued, "/delinquencyPlan")
    response = call(api, "PATCH", plan, admin_token, {"delinquencyPlanName": "Lenient"})
    assert ok(response)["delinquencyPlanName"] == "Lenient"
    assert event_types(api, admin_token, tenant, response) == ["policy.update"]
    assert_error(
        call(api, "PATCH", plan, admin_token, {"delinquencyPlanName": "Strict"}), 400, "policy.invalid_reference"
    )
    assert_error(call(api, "PATCH", plan, admin_token, {}), 400, "request.invalid")
    assert fetch(api, admin_token, tenant, issued)["delinquencyPlanName"] == "Lenient"


@pytest.mark.parametrize(
    "method, suffix, body",
    [
        ("POST", "/static", {"agentCode": "ABC"}),
        ("PATCH", "/static", {"setData": {"renewals": 1}}),
        ("PUT", "/static", {"agency": "Uptown"}),
        ("POST", "/number/set?policyNumber=X-1", None),
        ("POST", "/number/generate", None),
        ("POST", "/contacts", {"contactLocator": UNKNOWN, "roles": []}),
        ("PATCH", "/billingLevel", {"billingLevel": "policy"}),
        ("PATCH", "/delinquencyPlan", {"delinquencyPlanName": "Lenient"}),
        ("PATCH", "/jurisdiction", {"jurisdiction": "NY"}),
    ],
)
def test_a_change_that_loses_a_race_is_a_409_and_changes_nothing(
    api, admin_token, tenant, issued, method, suffix, body
):
    """Clients send no version: two requests read the same one. Here another writer changes the policy
    between this request's read and its write (just before its transaction is sent)."""
    from chalicelib.policies import service
    from chalicelib.storage import clients

    racing = []

    def rival(**_):
        if not racing:
            racing.append(True)
            service.set_jurisdiction(system_ctx().for_tenant(tenant), issued.policyLocator, "CA")

    events = clients.dynamodb().meta.events
    events.register("before-call.dynamodb.TransactWriteItems", rival)
    try:
        response = call(api, method, path(tenant, issued, suffix), admin_token, body)
    finally:
        events.unregister("before-call.dynamodb.TransactWriteItems", rival)

    assert_error(response, 409, "conflict.concurrent_modification")
    assert event_types(api, admin_token, tenant, response) == []
    policy = fetch(api, admin_token, tenant, issued)
    assert policy["jurisdiction"] == "CA"  # the rival's change, and nothing of this request's
    assert (policy["static"], policy["policyNumber"], policy["billingLevel"], policy["delinquencyPlanName"]) == (
        {"agency": "Downtown"},
        "PA-000001",
        "account",
        "Standard",
    )
    assert len(policy["contacts"]) == 1
    assert len(ok(call(api, "GET", path(tenant, issued, "/static/history/list"), admin_token))["items"]) == 1


def test_changes_to_an_unknown_policy_are_404s(api, admin_token, tenant):
    unknown = policies(tenant, f"/{UNKNOWN}")
    assert_error(call(api, "POST", unknown + "/static", admin_token, {}), 404, "policy.not_found")
    assert_error(
        call(api, "PATCH", unknown + "/billingLevel", admin_token, {"billingLevel": "policy"}), 404, "policy.not_found"
    )
    assert_error(call(api, "POST", unknown + "/number/generate", admin_token), 404, "policy.not_found")
