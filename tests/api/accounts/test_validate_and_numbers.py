"""PATCH .../validate, numbering plans and triggers, number lookup, number/set and number/generate."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.api.accounts.support import UNKNOWN_ACCOUNT, accounts, create, errors_of, fetch, field_names, person
from tests.support.api import assert_error, call, event_types, ok
from tests.support.configs import configured_tenant, policy_model


def validate(api, token, tenant, locator):
    return call(api, "PATCH", accounts(tenant, f"/{locator}/validate"), token)


def set_number(api, token, tenant, locator, number):
    return call(api, "POST", accounts(tenant, f"/{locator}/number/set?accountNumber={quote(number)}"), token)


def generate(api, token, tenant, locator):
    return call(api, "POST", accounts(tenant, f"/{locator}/number/generate"), token)


def by_number(api, token, tenant, number):
    return call(api, "GET", accounts(tenant, f"/numbers/{quote(number, safe='')}"), token)


def test_validate_moves_a_passing_draft_to_validated_and_numbers_it(api, admin_token, tenant):
    account = create(api, admin_token, tenant)
    response = validate(api, admin_token, tenant, account["locator"])
    validated = ok(response)
    assert (validated["accountState"], validated["state"], validated["accountNumber"]) == (
        "validated",
        "validated",
        "AC-A998",
    )
    assert validated["validationResult"] == {"success": True, "validationItems": []}
    assert fetch(api, admin_token, tenant, account["locator"]) == validated
    assert event_types(api, admin_token, tenant, response) == ["policy.account.validate"]


def test_validation_numbers_count_like_an_odometer(api, admin_token, tenant):
    numbers = [create(api, admin_token, tenant, person(autoValidate=True))["accountNumber"] for _ in range(3)]
    assert numbers == ["AC-A998", "AC-A999", "AC-B000"]


def test_a_failing_validate_answers_200_with_the_draft_and_changes_nothing(api, admin_token, tenant):
    account = create(api, admin_token, tenant, {"type": "PersonAccount", "data": {"firstName": "Ada"}})
    response = validate(api, admin_token, tenant, account["locator"])
    answered = ok(response)
    assert (answered["accountState"], answered["accountNumber"]) == ("draft", "")
    assert errors_of(answered) == ["data.email: is required", "data.lastName: is required", "data.address: is required"]
    assert fetch(api, admin_token, tenant, account["locator"]) == account
    assert event_types(api, admin_token, tenant, response) == []


def test_validating_a_validated_account_keeps_its_number(api, admin_token, tenant):
    account = create(api, admin_token, tenant, person(autoValidate=True))
    again = ok(validate(api, admin_token, tenant, account["locator"]))
    assert (again["accountState"], again["accountNumber"]) == ("validated", "AC-A998")


def test_validate_checks_against_the_current_configuration(api, admin_token, tenant):
    from tests.api.configuration.support import deploy, package

    account = create(api, admin_token, tenant)
    model = policy_model()
    model["accounts"]["PersonAccount"]["data"]["phone"] = {"type": "string"}
    ok(deploy(api, admin_token, tenant, package(model)))
    answered = ok(validate(api, admin_token, tenant, account["locator"]))
    assert (answered["accountState"], errors_of(answered)) == ("draft", ["data.phone: is required"])


def test_an_account_whose_type_left_the_configuration_cannot_validate(api, admin_token, tenant):
    from tests.api.configuration.support import deploy, package

    account = create(api, admin_token, tenant, {"type": "ProspectAccount", "data": {"email": "p@example.com"}})
    model = policy_model()
    del model["accounts"]["ProspectAccount"]
    ok(deploy(api, admin_token, tenant, package(model)))
    assert_error(validate(api, admin_token, tenant, account["locator"]), 409, "account.type_not_configured")


def test_validate_of_an_unknown_account_is_a_404(api, admin_token, tenant):
    assert_error(validate(api, admin_token, tenant, UNKNOWN_ACCOUNT), 404, "account.not_found")


# --- lookup by number ----------------------------------------------------------------------------


def test_an_account_is_found_by_its_number(api, admin_token, tenant):
    account = create(api, admin_token, tenant, person(autoValidate=True))
    create(api, admin_token, tenant, person(autoValidate=True))
    assert ok(by_number(api, admin_token, tenant, "AC-A998")) == [account]


def test_an_unknown_number_is_a_404(api, admin_token, tenant):
    create(api, admin_token, tenant, person(autoValidate=True))
    assert_error(by_number(api, admin_token, tenant, "AC-Z999"), 404, "account.not_found")


def test_numbers_are_per_tenant(api, admin_token, tenant):
    create(api, admin_token, tenant, person(autoValidate=True))
    other = configured_tenant(api, admin_token)
    assert_error(by_number(api, admin_token, other, "AC-A998"), 404, "account.not_found")
    assert create(api, admin_token, other, person(autoValidate=True))["accountNumber"] == "AC-A998"


# --- number/set ----------------------------------------------------------------------------------


def test_set_gives_a_draft_the_chosen_number(api, admin_token, tenant):
    account = create(api, admin_token, tenant)
    response = set_number(api, admin_token, tenant, account["locator"], "VIP-1A")
    numbered = ok(response)
    assert (numbered["accountNumber"], numbered["accountState"]) == ("VIP-1A", "draft")
    assert ok(by_number(api, admin_token, tenant, "VIP-1A")) == [numbered]
    assert event_types(api, admin_token, tenant, response) == ["policy.account.update"]
    validated = ok(validate(api, admin_token, tenant, account["locator"]))
    assert validated["accountNumber"] == "VIP-1A"


def test_set_replaces_a_number_and_frees_the_old_one(api, admin_token, tenant):
    first = create(api, admin_token, tenant, person(autoValidate=True))
    ok(set_number(api, admin_token, tenant, first["locator"], "MANUAL-1"))
    assert_error(by_number(api, admin_token, tenant, "AC-A998"), 404, "account.not_found")
    second = create(api, admin_token, tenant)
    assert ok(set_number(api, admin_token, tenant, second["locator"], "AC-A998"))["accountNumber"] == "AC-A998"


def test_a_number_in_use_is_a_409_and_changes_nothing(api, admin_token, tenant):
    first = create(api, admin_token, tenant, person(autoValidate=True))
    second = create(api, admin_token, tenant)
    response = set_number(api, admin_token, tenant, second["locator"], first["accountNumber"])
    assert_error(response, 409, "account.number_taken")
    assert fetch(api, admin_token, tenant, second["locator"]) == second
    assert event_types(api, admin_token, tenant, response) == []


def test_setting_the_number_an_account_has_is_harmless(api, admin_token, tenant):
    account = create(api, admin_token, tenant, person(autoValidate=True))
    response = set_number(api, admin_token, tenant, account["locator"], "AC-A998")
    assert ok(response) == account
    assert event_types(api, admin_token, tenant, response) == []


@pytest.mark.parametrize(
    "query", ["", "?accountNumber=", "?accountNumber=%20x", "?accountNumber=" + "9" * 129, "?accountNumber=a%0Ab"]
)
def test_set_needs_a_sensible_number(api, admin_token, tenant, query):
    account = create(api, admin_token, tenant)
    body = assert_error(
        call(api, "POST", accounts(tenant, f"/{account['locator']}/number/set{query}"), admin_token),
        400,
        "request.invalid",
    )
    assert field_names(body) == {"accountNumber"}


# --- number/generate -----------------------------------------------------------------------------


def test_generate_numbers_from_the_plan_and_frees_the_old_number(api, admin_token, tenant):
    account = create(api, admin_token, tenant, person(autoValidate=True))
    response = generate(api, admin_token, tenant, account["locator"])
    regenerated = ok(response)
    assert regenerated["accountNumber"] == "AC-A999"
    assert event_types(api, admin_token, tenant, response) == ["policy.account.update"]
    assert_error(by_number(api, admin_token, tenant, "AC-A998"), 404, "account.not_found")


def test_generate_gives_a_draft_a_number(api, admin_token, tenant):
    account = create(api, admin_token, tenant)
    assert ok(generate(api, admin_token, tenant, account["locator"]))["accountNumber"] == "AC-A998"
    assert ok(validate(api, admin_token, tenant, account["locator"]))["accountNumber"] == "AC-A998"


def test_generate_without_a_numbering_plan_is_a_409(api, admin_token, tenant):
    account = create(api, admin_token, tenant, {"type": "ProspectAccount", "data": {}})
    assert_error(generate(api, admin_token, tenant, account["locator"]), 409, "account.no_numbering_plan")


def test_a_generated_number_someone_took_by_hand_fails_that_request_and_the_next_one_skips_it(api, admin_token, tenant):
    taken = create(api, admin_token, tenant)
    ok(set_number(api, admin_token, tenant, taken["locator"], "AC-A998"))
    account = create(api, admin_token, tenant)
    assert_error(validate(api, admin_token, tenant, account["locator"]), 409, "account.number_taken")
    assert fetch(api, admin_token, tenant, account["locator"])["accountState"] == "draft"
    assert ok(validate(api, admin_token, tenant, account["locator"]))["accountNumber"] == "AC-A999"


def test_a_used_up_plan_is_a_409(api, admin_token):
    model = policy_model()
    model["numberingPlans"]["AccountNumbers"] = {"format": "\\A-#", "initialCoreNumber": "8", "copyFromQuote": False}
    tenant = configured_tenant(api, admin_token, model)
    assert [create(api, admin_token, tenant, person(autoValidate=True))["accountNumber"] for _ in range(2)] == [
        "A-8",
        "A-9",
    ]
    assert_error(
        call(api, "POST", accounts(tenant), admin_token, person(autoValidate=True)), 409, "numbering.exhausted"
    )


def test_a_plan_that_cannot_number_accounts_is_a_409(api, admin_token):
    model = policy_model()
    model["numberingPlans"]["AccountNumbers"]["format"] = "{product}-###"
    tenant = configured_tenant(api, admin_token, model)
    assert_error(
        call(api, "POST", accounts(tenant), admin_token, person(autoValidate=True)), 409, "numbering.invalid_plan"
    )
