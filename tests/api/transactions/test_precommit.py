"""PATCH /transactions/{locator}/precommit runs the product's precommit plugin on a draft (initializing
it) or initialized transaction: its element changes land in the segment's tree."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.quotes.support import new_account
from tests.api.transactions.support import (
    AUGUST,
    create,
    issued_policy,
    params,
    step,
    transaction_path,
    vehicle_of,
)
from tests.support.api import assert_error, call, event_types, ok
from tests.support.configs import QUOTE_PLUGINS, quotes_tenant

PRECOMMIT = """

def precommit_PersonalAuto(request):
    if request["transactionCategory"] == "cancellation":
        raise RuntimeError("no precommit for cancellations")
    return {"elements": [{"locator": v["locator"], "setData": {"value": 19999}}
                         for v in _vehicles(request)]}
"""


@pytest.fixture
def tenant(api, admin_token) -> str:
    return quotes_tenant(api, admin_token, plugins=QUOTE_PLUGINS + PRECOMMIT)


@pytest.fixture
def policy(api, admin_token, tenant) -> dict:
    return issued_policy(api, admin_token, tenant, new_account(api, admin_token, tenant))


def test_precommit_initializes_a_draft_and_applies_the_plugins_changes(api, admin_token, tenant, policy):
    draft = ok(create(api, admin_token, tenant, policy["locator"], "change", [params(AUGUST)]))

    response = step(api, admin_token, tenant, draft["locator"], "precommit")
    precommitted = ok(response)

    assert precommitted["transactionState"] == "initialized"
    assert event_types(api, admin_token, tenant, response) == ["policy.change.update"]
    segment = ok(call(api, "GET", transaction_path(tenant, draft["locator"], "/segment"), admin_token))
    assert vehicle_of(segment)["data"]["value"] == Decimal("19999")
    priced = ok(step(api, admin_token, tenant, draft["locator"], "price"))
    assert priced["transactionState"] == "priced"
    assert_error(step(api, admin_token, tenant, draft["locator"], "precommit"), 409, "transaction.invalid_state")


def test_a_failing_precommit_plugin_answers_200_and_stores_nothing(api, admin_token, tenant, policy):
    cancellation = ok(create(api, admin_token, tenant, policy["locator"], "cancel", params(AUGUST)))

    response = step(api, admin_token, tenant, cancellation["locator"], "precommit")
    body = ok(response)

    assert (body["transactionState"], body["validationResult"]["success"]) == ("draft", False)
    assert "precommit_PersonalAuto" in body["validationResult"]["validationItems"][0]["errors"][0]
    assert event_types(api, admin_token, tenant, response) == []
