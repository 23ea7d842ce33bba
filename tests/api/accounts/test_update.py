"""PATCH and PUT /accounts/{locator}: data entries, replacement, validated accounts, optimistic locking."""

from __future__ import annotations

import pytest

from chalicelib.core.errors import ConcurrentModification
from tests.api.accounts.support import (
    UNKNOWN_ACCOUNT,
    accounts,
    create,
    errors_of,
    fetch,
    field_names,
    person,
    person_data,
)
from tests.support.api import assert_error, call, event_types, ok


def patch(api, token, tenant, locator, body):
    return call(api, "PATCH", accounts(tenant, f"/{locator}"), token, body)


def put(api, token, tenant, locator, body):
    return call(api, "PUT", accounts(tenant, f"/{locator}"), token, body)


def test_patch_removes_then_sets_data_entries_and_sets_given_fields(api, admin_token, tenant):
    account = create(api, admin_token, tenant, person(data=person_data(tier="gold", nicknames=["Addie"])))
    response = patch(
        api,
        admin_token,
        tenant,
        account["locator"],
        {
            "removeData": {"tier": None, "nicknames": ["Addie"], "lastName": "ignored"},
            "setData": {"lastName": "King", "dependents": 1, "email": None},
            "billingLevel": "policy",
            "timezone": "Europe/London",
        },
    )
    updated = ok(response)

    assert updated["data"] == {
        "firstName": "Ada",
        "lastName": "King",
        "dependents": 1,
        "smoker": False,
        "address": account["data"]["address"],
    }
    assert errors_of(updated) == ["data.email: is required"]
    assert (updated["billingLevel"], updated["timezone"], updated["accountState"]) == (
        "policy",
        "Europe/London",
        "draft",
    )
    assert {k: v for k, v in updated.items() if k not in ("data", "validationResult", "billingLevel", "timezone")} == {
        k: v for k, v in account.items() if k not in ("data", "validationResult", "billingLevel", "timezone")
    }
    assert fetch(api, admin_token, tenant, account["locator"]) == updated
    assert event_types(api, admin_token, tenant, response) == ["policy.account.update"]


def test_patch_can_change_the_type_and_validate(api, admin_token, tenant):
    account = create(api, admin_token, tenant, {"type": "ProspectAccount", "data": {"email": "p@example.com"}})
    response = patch(
        api,
        admin_token,
        tenant,
        account["locator"],
        {"type": "PersonAccount", "setData": person_data(), "autoValidate": True},
    )
    updated = ok(response)
    assert (updated["type"], updated["accountState"], updated["accountNumber"]) == (
        "PersonAccount",
        "validated",
        "AC-A998",
    )
    assert event_types(api, admin_token, tenant, response) == ["policy.account.update", "policy.account.validate"]


def test_patch_to_an_abstract_type_is_a_400(api, admin_token, tenant):
    account = create(api, admin_token, tenant)
    body = assert_error(
        patch(api, admin_token, tenant, account["locator"], {"type": "BaseAccount"}), 400, "account.abstract_type"
    )
    assert field_names(body) == {"type"}
    assert fetch(api, admin_token, tenant, account["locator"]) == account


@pytest.mark.parametrize(
    "body, field",
    [
        ({"region": "West"}, "region"),
        ({"contacts": []}, "contacts"),
        ({"setData": "x"}, "setData"),
        ({"billingLevel": "never"}, "billingLevel"),
    ],
)
def test_patch_takes_only_the_update_request_fields(api, admin_token, tenant, body, field):
    account = create(api, admin_token, tenant)
    response = assert_error(patch(api, admin_token, tenant, account["locator"], body), 400, "request.invalid")
    assert field_names(response) == {field}


def test_patch_naming_an_unknown_plan_is_a_400(api, admin_token, tenant):
    account = create(api, admin_token, tenant)
    body = assert_error(
        patch(api, admin_token, tenant, account["locator"], {"invoicingPlanName": "Nope"}),
        400,
        "account.invalid_reference",
    )
    assert field_names(body) == {"invoicingPlanName"}


def test_put_replaces_every_client_field(api, admin_token, tenant):
    account = create(
        api, admin_token, tenant, person(billingLevel="policy", timezone="Europe/London", data=person_data(tier="gold"))
    )
    response = put(
        api,
        admin_token,
        tenant,
        account["locator"],
        {"type": "PersonAccount", "data": person_data(firstName="Grace", lastName="Hopper")},
    )
    replaced = ok(response)
    assert replaced["data"] == {**person_data(firstName="Grace", lastName="Hopper"), "smoker": False}
    assert (replaced["billingLevel"], replaced["timezone"]) == ("account", "America/New_York")
    assert (replaced["locator"], replaced["createdAt"], replaced["createdBy"]) == (
        account["locator"],
        account["createdAt"],
        account["createdBy"],
    )
    assert event_types(api, admin_token, tenant, response) == ["policy.account.update"]


def test_put_needs_a_type(api, admin_token, tenant):
    account = create(api, admin_token, tenant)
    body = assert_error(put(api, admin_token, tenant, account["locator"], {"data": {}}), 400, "request.invalid")
    assert field_names(body) == {"type"}


def test_a_validated_account_takes_updates_that_keep_it_valid(api, admin_token, tenant):
    account = create(api, admin_token, tenant, person(autoValidate=True))
    updated = ok(patch(api, admin_token, tenant, account["locator"], {"setData": {"lastName": "Byron"}}))
    assert (updated["accountState"], updated["accountNumber"], updated["data"]["lastName"]) == (
        "validated",
        "AC-A998",
        "Byron",
    )


@pytest.mark.parametrize(
    "method, body",
    [("PATCH", {"setData": {"lastName": "B"}}), ("PUT", {"type": "PersonAccount", "data": {"firstName": "Ada"}})],
)
def test_an_update_that_would_invalidate_a_validated_account_changes_nothing(api, admin_token, tenant, method, body):
    account = create(api, admin_token, tenant, person(autoValidate=True))
    response = call(api, method, accounts(tenant, f"/{account['locator']}"), admin_token, body)
    answered = ok(response)
    assert answered["accountState"] == "validated"
    assert answered["data"] == account["data"]
    assert answered["validationResult"]["success"] is False
    assert errors_of(answered)[0].startswith("data.")
    assert fetch(api, admin_token, tenant, account["locator"]) == account
    assert event_types(api, admin_token, tenant, response) == []


def test_updates_of_an_unknown_account_are_a_404(api, admin_token, tenant):
    assert_error(patch(api, admin_token, tenant, UNKNOWN_ACCOUNT, {"setData": {}}), 404, "account.not_found")
    assert_error(put(api, admin_token, tenant, UNKNOWN_ACCOUNT, person()), 404, "account.not_found")


def test_a_write_based_on_a_stale_version_is_a_409_and_changes_nothing(api, admin_token, tenant):
    """Clients send no version: a lost race is two requests reading the same version. The second
    writer here is the repository itself, holding the account as it was before the PATCH."""
    from chalicelib.accounts import repository
    from chalicelib.accounts.models import BillingLevel
    from chalicelib.runtime import wiring
    from tests.builders import system_ctx

    account = create(api, admin_token, tenant)
    stale = repository.get(tenant, account["locator"])
    ok(patch(api, admin_token, tenant, account["locator"], {"setData": {"lastName": "Byron"}}))

    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    repository.save(uow, tenant, stale.model_copy(update={"billingLevel": BillingLevel.POLICY}))
    with pytest.raises(ConcurrentModification):
        uow.commit()
    now = fetch(api, admin_token, tenant, account["locator"])
    assert (now["billingLevel"], now["data"]["lastName"]) == ("account", "Byron")
    assert repository.get(tenant, account["locator"]).version == stale.version + 1
