"""Contacts, billing level, constraint endpoints."""

from __future__ import annotations

import pytest

from tests.api.accounts.support import (
    CONTACT,
    OTHER_CONTACT,
    UNKNOWN_ACCOUNT,
    accounts,
    create,
    errors_of,
    fetch,
    field_names,
    person,
)
from tests.support.api import assert_error, call, event_types, ok
from tests.support.configs import CITIES_CSV, upload_constraint_table


def contacts_path(tenant, locator, contact=None):
    return accounts(tenant, f"/{locator}/contacts" + (f"/{contact}" if contact else ""))


# --- contacts ------------------------------------------------------------------------------------


def test_contacts_are_added_listed_updated_and_deleted(api, admin_token, tenant):
    account = create(api, admin_token, tenant)
    locator = account["locator"]

    added = call(
        api, "POST", contacts_path(tenant, locator), admin_token, {"contactLocator": CONTACT, "roles": ["primary"]}
    )
    assert ok(added)["contacts"] == [{"contactLocator": CONTACT, "roles": ["primary"]}]
    assert event_types(api, admin_token, tenant, added) == ["policy.account.update"]
    ok(call(api, "POST", contacts_path(tenant, locator), admin_token, {"contactLocator": OTHER_CONTACT, "roles": []}))
    assert ok(call(api, "GET", contacts_path(tenant, locator), admin_token)) == [
        {"contactLocator": CONTACT, "roles": ["primary"]},
        {"contactLocator": OTHER_CONTACT, "roles": []},
    ]

    updated = ok(
        call(
            api,
            "PATCH",
            contacts_path(tenant, locator, CONTACT),
            admin_token,
            {"addRoles": ["billing", "broker", "billing"], "removeRoles": ["primary"]},
        )
    )
    assert updated["contacts"][0] == {"contactLocator": CONTACT, "roles": ["billing", "broker"]}

    deleted = call(api, "DELETE", contacts_path(tenant, locator, OTHER_CONTACT), admin_token)
    assert ok(deleted)["contacts"] == [{"contactLocator": CONTACT, "roles": ["billing", "broker"]}]
    assert event_types(api, admin_token, tenant, deleted) == ["policy.account.update"]
    assert fetch(api, admin_token, tenant, locator)["contacts"] == ok(deleted)["contacts"]


def test_contacts_change_on_a_validated_account_too(api, admin_token, tenant):
    account = create(api, admin_token, tenant, person(autoValidate=True))
    answered = ok(
        call(
            api,
            "POST",
            contacts_path(tenant, account["locator"]),
            admin_token,
            {"contactLocator": CONTACT, "roles": ["broker"]},
        )
    )
    assert (answered["accountState"], answered["contacts"]) == (
        "validated",
        [{"contactLocator": CONTACT, "roles": ["broker"]}],
    )


def test_adding_a_contact_twice_is_a_409(api, admin_token, tenant):
    account = create(api, admin_token, tenant, person(contacts=[{"contactLocator": CONTACT, "roles": []}]))
    response = call(
        api,
        "POST",
        contacts_path(tenant, account["locator"]),
        admin_token,
        {"contactLocator": CONTACT, "roles": ["primary"]},
    )
    assert_error(response, 409, "account.contact_exists")
    assert fetch(api, admin_token, tenant, account["locator"]) == account


def test_a_contact_not_on_the_account_is_a_404(api, admin_token, tenant):
    account = create(api, admin_token, tenant)
    assert_error(
        call(api, "PATCH", contacts_path(tenant, account["locator"], CONTACT), admin_token, {"addRoles": ["primary"]}),
        404,
        "contact.not_found",
    )
    assert_error(
        call(api, "DELETE", contacts_path(tenant, account["locator"], CONTACT), admin_token), 404, "contact.not_found"
    )


@pytest.mark.parametrize(
    "method, suffix, body, status, code, field",
    [
        ("POST", "", {"contactLocator": CONTACT, "roles": ["chauffeur"]}, 400, "account.invalid_reference", "roles"),
        ("POST", "", {"contactLocator": CONTACT}, 400, "request.invalid", "roles"),
        ("POST", "", {"contactLocator": "x", "roles": []}, 400, "request.invalid", "contactLocator"),
        ("PATCH", f"/{CONTACT}", {"addRoles": ["chauffeur"]}, 400, "account.invalid_reference", "addRoles"),
        ("PATCH", f"/{CONTACT}", {"addRoles": "primary"}, 400, "request.invalid", "addRoles"),
    ],
)
def test_bad_contact_requests(api, admin_token, tenant, method, suffix, body, status, code, field):
    account = create(api, admin_token, tenant, person(contacts=[{"contactLocator": CONTACT, "roles": []}]))
    response = call(api, method, contacts_path(tenant, account["locator"]) + suffix, admin_token, body)
    assert field_names(assert_error(response, status, code)) == {field}


def test_contact_endpoints_of_an_unknown_account_are_a_404(api, admin_token, tenant):
    for method, suffix, body in [
        ("GET", "", None),
        ("POST", "", {"contactLocator": CONTACT, "roles": []}),
        ("PATCH", f"/{CONTACT}", {}),
        ("DELETE", f"/{CONTACT}", None),
    ]:
        response = call(api, method, contacts_path(tenant, UNKNOWN_ACCOUNT) + suffix, admin_token, body)
        assert_error(response, 404, "account.not_found")


# --- billing level -------------------------------------------------------------------------------


def test_billing_level_is_set(api, admin_token, tenant):
    account = create(api, admin_token, tenant)
    response = call(
        api, "PATCH", accounts(tenant, f"/{account['locator']}/billingLevel"), admin_token, {"billingLevel": "inherit"}
    )
    assert ok(response)["billingLevel"] == "inherit"
    assert fetch(api, admin_token, tenant, account["locator"])["billingLevel"] == "inherit"
    assert event_types(api, admin_token, tenant, response) == ["policy.account.update"]


@pytest.mark.parametrize("body", [{}, {"billingLevel": "sometimes"}, {"billingLevel": "account", "x": 1}])
def test_a_bad_billing_level_is_a_400(api, admin_token, tenant, body):
    account = create(api, admin_token, tenant)
    assert_error(
        call(api, "PATCH", accounts(tenant, f"/{account['locator']}/billingLevel"), admin_token, body),
        400,
        "request.invalid",
    )


def test_the_configurations_default_billing_level_applies(api, admin_token):
    from tests.support.configs import configured_tenant, policy_model

    model = policy_model()
    model["defaultBillingLevel"] = "policy"
    tenant = configured_tenant(api, admin_token, model)
    assert create(api, admin_token, tenant)["billingLevel"] == "policy"


# --- constraint tables ---------------------------------------------------------------------------


def company(api, token, tenant, **data):
    return create(api, token, tenant, {"type": "CompanyAccount", "data": {"companyName": "Acme", **data}})


def test_constrained_fields_are_checked_against_the_constraint_table(api, admin_token, tenant):
    upload_constraint_table(api, admin_token, tenant, "Cities", CITIES_CSV)
    assert company(api, admin_token, tenant, state="CA", city="San Diego")["validationResult"]["success"] is True
    account = company(api, admin_token, tenant, state="CA", city="Buffalo")
    assert errors_of(account) == [
        "data.city: 'Buffalo' is not allowed by constraint table Cities (allowed: Los Angeles, San Diego)"
    ]
    answered = ok(call(api, "PATCH", accounts(tenant, f"/{account['locator']}/validate"), admin_token))
    assert answered["accountState"] == "draft"


def test_a_constraint_table_that_is_not_loaded_fails_validation(api, admin_token, tenant):
    account = company(api, admin_token, tenant, state="CA")
    [message] = errors_of(account)
    assert message.startswith("data: cannot be checked against its constraint tables: ")


def test_evaluate_answers_the_options_of_constrained_fields(api, admin_token, tenant):
    upload_constraint_table(api, admin_token, tenant, "Cities", CITIES_CSV)
    account = company(api, admin_token, tenant, state="NY")
    path = accounts(tenant, f"/{account['locator']}/constraints/evaluate")
    assert ok(call(api, "POST", path, admin_token, {})) == {
        account["locator"]: {"state": ["CA", "NY"], "city": ["New York", "Buffalo"]}
    }
    assert ok(call(api, "POST", path, admin_token, {account["locator"]: {"state": "CA"}})) == {
        account["locator"]: {"state": ["CA", "NY"], "city": ["Los Angeles", "San Diego"]}
    }


def test_evaluate_needs_a_map_of_maps(api, admin_token, tenant):
    account = company(api, admin_token, tenant)
    assert_error(
        call(api, "POST", accounts(tenant, f"/{account['locator']}/constraints/evaluate"), admin_token, {"x": "CA"}),
        400,
        "request.invalid",
    )


def test_dependency_names_the_fields_each_constraint_reads(api, admin_token, tenant):
    account = company(api, admin_token, tenant)
    assert ok(call(api, "GET", accounts(tenant, f"/{account['locator']}/constraints/dependency"), admin_token)) == {
        account["locator"]: {
            "state": {"column": "state", "table": "Cities", "where": {}},
            "city": {
                "column": "city",
                "table": "Cities",
                "where": {"state": {"staticLocator": account["locator"], "fieldName": "state", "values": []}},
            },
        }
    }


def test_an_account_without_constrained_fields_has_no_dependencies(api, admin_token, tenant):
    account = create(api, admin_token, tenant)
    assert ok(call(api, "GET", accounts(tenant, f"/{account['locator']}/constraints/dependency"), admin_token)) == {
        account["locator"]: {}
    }


def test_the_constraint_endpoints_of_an_unknown_account_are_a_404(api, admin_token, tenant):
    assert_error(
        call(api, "POST", accounts(tenant, f"/{UNKNOWN_ACCOUNT}/constraints/evaluate"), admin_token, {}),
        404,
        "account.not_found",
    )
    assert_error(
        call(api, "GET", accounts(tenant, f"/{UNKNOWN_ACCOUNT}/constraints/dependency"), admin_token),
        404,
        "account.not_found",
    )
