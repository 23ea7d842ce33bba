"""The constraint table endpoints of a transaction (spec part 1, "Tables"): evaluated on the element
tree the transaction makes, a draft's worked out from its instructions."""

from __future__ import annotations

import pytest

from tests.api.quotes.support import new_account
from tests.api.transactions.support import (
    AUGUST,
    UNKNOWN,
    create,
    issued_policy,
    modify,
    params,
    segment_of_policy,
    step,
    transaction_path,
)
from tests.support.api import assert_error, call, ok
from tests.support.configs import constrained_tenant


@pytest.fixture
def constrained(api, admin_token) -> str:
    return constrained_tenant(api, admin_token)


def _change_to_california(api, admin_token, tenant) -> tuple[dict, str]:
    """A policy garaged in New York and a draft change moving it to California: (policy, change locator)."""
    policy = issued_policy(api, admin_token, tenant, new_account(api, admin_token, tenant), data={"garageState": "NY"})
    root = segment_of_policy(api, admin_token, tenant, policy)["element"]["staticLocator"]
    change = ok(
        create(api, admin_token, tenant, policy["locator"], "change", [params(AUGUST), modify(root, garageState="CA")])
    )
    return policy, change["locator"]


def test_a_draft_change_is_evaluated_on_the_tree_its_instructions_make(api, admin_token, constrained):
    tenant = constrained
    policy, change = _change_to_california(api, admin_token, tenant)
    root = ok(call(api, "GET", transaction_path(tenant, change, "/segment"), admin_token))["element"]["locator"]
    path = transaction_path(tenant, change, "/elements/constraints/evaluate")

    assert ok(call(api, "POST", path, admin_token, {})) == {
        root: {"garageState": ["CA", "NY"], "garageCity": ["Los Angeles", "San Diego"]}
    }
    assert ok(call(api, "POST", path, admin_token, {root: {"data": {"garageState": "NY"}}}))[root]["garageCity"] == [
        "New York",
        "Buffalo",
    ]

    ok(step(api, admin_token, tenant, change, "initialize"))
    assert ok(call(api, "POST", path, admin_token, {}))[root]["garageCity"] == ["Los Angeles", "San Diego"]


def test_the_constraint_dependencies_of_a_transaction_name_the_element_holding_each_key(api, admin_token, constrained):
    tenant = constrained
    policy, change = _change_to_california(api, admin_token, tenant)
    root = ok(call(api, "GET", transaction_path(tenant, change, "/segment"), admin_token))["element"]

    assert ok(call(api, "GET", transaction_path(tenant, change, "/elements/constraints/dependency"), admin_token)) == {
        root["locator"]: {
            "garageState": {"table": "Cities", "column": "state", "where": {}},
            "garageCity": {
                "table": "Cities",
                "column": "city",
                "where": {"state": {"staticLocator": root["staticLocator"], "fieldName": "garageState", "values": []}},
            },
        }
    }


def test_unknown_elements_and_transactions_are_refused(api, admin_token, constrained):
    tenant = constrained
    _, change = _change_to_california(api, admin_token, tenant)

    assert_error(
        call(
            api, "POST", transaction_path(tenant, change, "/elements/constraints/evaluate"), admin_token, {change: {}}
        ),
        400,
        "transaction.invalid_element",
    )
    assert_error(
        call(api, "POST", transaction_path(tenant, change, "/elements/constraints/evaluate"), admin_token, "not a map"),
        400,
        "request.invalid",
    )
    assert_error(
        call(api, "POST", transaction_path(tenant, UNKNOWN, "/elements/constraints/evaluate"), admin_token, {}),
        404,
        "transaction.not_found",
    )
    assert_error(
        call(api, "GET", transaction_path(tenant, UNKNOWN, "/elements/constraints/dependency"), admin_token),
        404,
        "transaction.not_found",
    )
