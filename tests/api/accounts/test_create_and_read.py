"""POST /accounts, GET /accounts/{locator}, GET /accounts/list."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.accounts.support import (
    ACCOUNT_FIELDS,
    CONTACT,
    UNKNOWN_ACCOUNT,
    accounts,
    create,
    errors_of,
    fetch,
    field_names,
    person,
    person_data,
)
from tests.support.api import assert_error, call, event_types, events_of, json_of, ok
from tests.support.configs import configured_tenant, policy_model


def test_create_answers_the_account_in_draft_with_defaults_and_normalised_data(api, admin_token, tenant):
    response = call(
        api,
        "POST",
        accounts(tenant),
        admin_token,
        person(
            data=person_data(
                income="1234.565",
                dependents="2",
                lastContact="2026-01-15T10:30:00+01:00",
                externalId="A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            )
        ),
    )
    account = ok(response)

    assert ACCOUNT_FIELDS <= set(account)
    assert account["type"] == "PersonAccount"
    assert account["accountState"] == account["state"] == "draft"
    assert account["accountNumber"] == ""  # numbered on validation
    assert account["billingLevel"] == "account"
    assert account["timezone"] == "America/New_York"  # the configuration's defaultTimeZone
    assert account["createdAt"] == "2026-01-15T09:30:00.000Z"
    assert account["contacts"] == []
    assert account["data"] == {
        "email": "ada@example.com",
        "firstName": "Ada",
        "lastName": "Lovelace",
        "income": Decimal("1234.57"),
        "dependents": 2,
        "smoker": False,
        "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
        "externalId": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "lastContact": "2026-01-15T09:30:00.000Z",
    }
    assert account["validationResult"] == {"success": True, "validationItems": []}
    assert fetch(api, admin_token, tenant, account["locator"]) == account
    events = events_of(api, admin_token, tenant, response)
    assert [(e["type"], e["data"]) for e in events] == [
        ("policy.account.create", {"accountLocator": account["locator"]})
    ]
    assert events[0]["userLocator"] == account["createdBy"]


def test_create_takes_every_optional_field(api, admin_token):
    model = policy_model()
    model["delinquencyPlans"] = {"Standard": {"gracePeriodDays": 10}}
    model["regions"] = {"West": {"numberingString": "W"}}
    tenant = configured_tenant(api, admin_token, model)
    preferences = {"installmentPreferences": {"installmentWeights": [1, 1], "cadence": "monthly", "dueLeadDays": 5}}
    account = create(
        api,
        admin_token,
        tenant,
        person(
            billingLevel="policy",
            timezone="Europe/London",
            region="West",
            delinquencyPlanName="Standard",
            contacts=[{"contactLocator": CONTACT, "roles": ["primary"]}],
            preferences=preferences,
        ),
    )
    assert (account["billingLevel"], account["timezone"], account["region"], account["delinquencyPlanName"]) == (
        "policy",
        "Europe/London",
        "West",
        "Standard",
    )
    assert account["contacts"] == [{"contactLocator": CONTACT, "roles": ["primary"]}]
    assert account["preferences"] == preferences


def test_data_that_fails_the_configuration_lands_in_the_validation_result(api, admin_token, tenant):
    account = create(
        api,
        admin_token,
        tenant,
        person(
            data={
                "firstName": "Ada",
                "lastName": "L",
                "email": "not-an-email",
                "tier": "bronze",
                "dependents": "many",
                "birthDate": "1850-01-01",
                "address": {"line1": "x", "city": "y"},
                "previousAddresses": {"line1": "x"},
                "shoeSize": 42,
            }
        ),
    )
    assert account["accountState"] == "draft"
    assert account["validationResult"]["success"] is False
    [item] = account["validationResult"]["validationItems"]
    assert (item["locator"], item["elementType"]) == (account["locator"], "PersonAccount")
    assert item["errors"] == [
        "data.email: must match the pattern [^@ ]+@[^@ ]+\\.[a-z]+",
        "data.tier: must be one of: gold, silver",
        "data.lastName: must be at least 2 characters long",
        "data.birthDate: must be at least 1900-01-01",
        "data.dependents: must be a whole number",
        "data.address.postcode: is required",
        "data.previousAddresses: must be a list",
        "data.shoeSize: is not a configured field",
    ]
    assert account["data"]["dependents"] == "many"  # kept as given, to be fixed in the draft
    assert fetch(api, admin_token, tenant, account["locator"])["validationResult"] == account["validationResult"]


def test_required_fields_missing_from_a_draft_are_reported(api, admin_token, tenant):
    account = create(api, admin_token, tenant, {"type": "PersonAccount"})
    assert errors_of(account) == [
        "data.email: is required",
        "data.firstName: is required",
        "data.lastName: is required",
        "data.address: is required",
    ]
    assert account["data"] == {"smoker": False}


def test_auto_validate_validates_and_numbers_at_once(api, admin_token, tenant):
    response = call(api, "POST", accounts(tenant), admin_token, person(autoValidate=True))
    account = ok(response)
    assert (account["accountState"], account["accountNumber"]) == ("validated", "AC-A998")
    assert event_types(api, admin_token, tenant, response) == ["policy.account.create", "policy.account.validate"]


def test_auto_validate_of_failing_data_leaves_a_draft(api, admin_token, tenant):
    response = call(api, "POST", accounts(tenant), admin_token, {"type": "PersonAccount", "autoValidate": True})
    account = ok(response)
    assert (account["accountState"], account["accountNumber"]) == ("draft", "")
    assert account["validationResult"]["success"] is False
    assert event_types(api, admin_token, tenant, response) == ["policy.account.create"]


def test_a_type_with_a_creation_trigger_is_numbered_at_creation(api, admin_token, tenant):
    first = create(api, admin_token, tenant, {"type": "CompanyAccount", "data": {"companyName": "Acme"}})
    second = create(api, admin_token, tenant, {"type": "CompanyAccount", "data": {"companyName": "Beta"}})
    assert (first["accountState"], first["accountNumber"], second["accountNumber"]) == ("draft", "CO-00001", "CO-00002")


def test_inherited_fields_of_an_extended_type_without_plan(api, admin_token, tenant):
    account = create(
        api, admin_token, tenant, {"type": "ProspectAccount", "data": {"source": "web"}, "autoValidate": True}
    )
    assert errors_of(account) == ["data.email: is required"]
    account = create(
        api,
        admin_token,
        tenant,
        {"type": "ProspectAccount", "autoValidate": True, "data": {"email": "p@example.com", "tier": "gold"}},
    )
    assert (account["accountState"], account["accountNumber"]) == ("validated", "")


@pytest.mark.parametrize(
    "account_type, code", [("NoSuchType", "account.unknown_type"), ("BaseAccount", "account.abstract_type")]
)
def test_an_unknown_or_abstract_account_type_is_a_400_and_stores_nothing(api, admin_token, tenant, account_type, code):
    body = assert_error(call(api, "POST", accounts(tenant), admin_token, person(type=account_type)), 400, code)
    assert field_names(body) == {"type"}
    assert ok(call(api, "GET", accounts(tenant, "/list"), admin_token))["items"] == []


@pytest.mark.parametrize(
    "body, fields",
    [
        (person(accountState="validated"), {"accountState"}),
        (person(locator=UNKNOWN_ACCOUNT), {"locator"}),
        (person(billingLevel="sometimes"), {"billingLevel"}),
        (person(data=["a"]), {"data"}),
        ({"data": {}}, {"type"}),
        (person(contacts=[{"contactLocator": "not-a-ulid", "roles": []}]), {"contacts.0.contactLocator"}),
        (
            person(preferences={"installmentPreferences": {"cadence": "hourly", "installmentWeights": []}}),
            {"preferences.installmentPreferences.cadence"},
        ),
    ],
)
def test_malformed_bodies_and_server_owned_fields_are_a_400(api, admin_token, tenant, body, fields):
    response = assert_error(call(api, "POST", accounts(tenant), admin_token, body), 400, "request.invalid")
    assert field_names(response) == fields


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"delinquencyPlanName": "Nope"}, "delinquencyPlanName"),
        ({"invoiceDocument": "Nope"}, "invoiceDocument"),
        ({"region": "Nope"}, "region"),
        ({"timezone": "Mars/Olympus"}, "timezone"),
        (
            {"contacts": [{"contactLocator": CONTACT, "roles": []}, {"contactLocator": CONTACT, "roles": []}]},
            "contacts.1.contactLocator",
        ),
        ({"contacts": [{"contactLocator": CONTACT, "roles": ["chauffeur"]}]}, "contacts.0.roles"),
    ],
)
def test_names_the_configuration_does_not_have_are_a_400(api, admin_token, tenant, fields, field):
    body = assert_error(
        call(api, "POST", accounts(tenant), admin_token, person(**fields)), 400, "account.invalid_reference"
    )
    assert field_names(body) == {field}


def test_a_body_that_is_not_json_is_a_400(api, admin_token, tenant):
    response = api.http.post(
        accounts(tenant),
        body=b"{nope",
        headers={"Authorization": f"Bearer {admin_token}", "Content-Type": "application/json"},
    )
    assert_error(response, 400, "request.malformed_json")


def test_a_tenant_without_configuration_answers_404(api, admin_token):
    from tests.builders import new_tenant

    assert_error(call(api, "POST", accounts(new_tenant()), admin_token, person()), 404, "configuration.not_found")


def test_create_with_an_idempotency_key_creates_once(api, admin_token, tenant):
    headers = {"X-Idempotency-Key": "create-ada"}
    first = call(api, "POST", accounts(tenant), admin_token, person(), headers=headers)
    again = call(api, "POST", accounts(tenant), admin_token, person(), headers=headers)
    assert ok(again) == ok(first)
    assert len(ok(call(api, "GET", accounts(tenant, "/list"), admin_token))["items"]) == 1
    other = call(api, "POST", accounts(tenant), admin_token, person(billingLevel="policy"), headers=headers)
    assert other.status_code == 409


def test_a_create_costs_one_read_of_the_configuration_and_one_transaction(api, admin_token, tenant, ddb_calls):
    create(api, admin_token, tenant)
    ddb_calls.clear()
    create(api, admin_token, tenant, person(autoValidate=True))
    assert ddb_calls == [
        "BatchGetItem",  # authentication: the token, its user and the roles version
        "GetItem",
        "UpdateItem",
        "TransactWriteItems",
    ]


# --- fetch and list ------------------------------------------------------------------------------


def test_fetch_of_an_unknown_account_is_a_404(api, admin_token, tenant):
    assert_error(call(api, "GET", accounts(tenant, f"/{UNKNOWN_ACCOUNT}"), admin_token), 404, "account.not_found")
    assert_error(call(api, "GET", accounts(tenant, "/" + "x" * 300), admin_token), 404, "account.not_found")


def test_list_pages_through_the_accounts_oldest_first(api, admin_token, tenant):
    created = [
        create(api, admin_token, tenant, person(data=person_data(firstName=f"P{i}")))["locator"] for i in range(5)
    ]

    def page(query: str) -> dict:
        return ok(call(api, "GET", accounts(tenant, f"/list{query}"), admin_token))

    everything = page("")
    assert [a["locator"] for a in everything["items"]] == created
    assert everything["listCompleted"] is True
    assert set(everything["items"][0]) >= ACCOUNT_FIELDS
    first = page("?count=2")
    assert ([a["locator"] for a in first["items"]], first["listCompleted"]) == (created[:2], False)
    rest = page("?offset=3&count=2&extended=true")
    assert ([a["locator"] for a in rest["items"]], rest["listCompleted"]) == (created[3:], True)


@pytest.mark.parametrize(
    "query, field", [("?count=0", "count"), ("?count=101", "count"), ("?offset=-1", "offset"), ("?count=many", "count")]
)
def test_list_paging_limits(api, admin_token, tenant, query, field):
    body = assert_error(call(api, "GET", accounts(tenant, f"/list{query}"), admin_token), 400, "request.invalid")
    assert field_names(body) == {field}


def test_a_response_has_no_internal_fields(api, admin_token, tenant):
    account = json_of(
        call(api, "GET", accounts(tenant, f"/{create(api, admin_token, tenant)['locator']}"), admin_token)
    )
    assert not {"version", "configVersion", "updatedAt", "updatedBy", "PK"} & set(account)
