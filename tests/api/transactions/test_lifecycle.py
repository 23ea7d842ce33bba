"""The transaction lifecycle through the API beyond the happy path: stateless steps, a failing validation
answering 200 with nothing stored, underwriting flags and their outcomes, accept, reset, refuse, discard,
expiry and the 409s of final states."""

from __future__ import annotations

import pytest

from tests.api.quotes.support import vehicle
from tests.api.transactions.support import (
    AUGUST,
    create,
    modify,
    params,
    segment_of_policy,
    step,
    transaction_path,
    vehicle_of,
)
from tests.support.api import assert_error, call, event_types, ok


def _draft(api, token, tenant, policy, *instructions):
    return ok(create(api, token, tenant, policy["locator"], "change", [params(AUGUST), *instructions]))


def _vehicle_static(api, token, tenant, policy):
    return vehicle_of(segment_of_policy(api, token, tenant, policy))["staticLocator"]


def test_stateless_steps_answer_the_result_and_store_nothing(api, admin_token, tenant, policy):
    draft = _draft(api, admin_token, tenant, policy)
    for name, state in (("validate", "validated"), ("price", "priced"), ("underwrite", "underwritten")):
        response = step(api, admin_token, tenant, draft["locator"], name, "?stateless=true")
        assert ok(response)["transactionState"] == state
        assert event_types(api, admin_token, tenant, response) == []
    assert ok(call(api, "GET", transaction_path(tenant, draft["locator"]), admin_token)) == draft


def test_a_failing_validation_answers_200_with_the_result_and_changes_nothing(api, admin_token, tenant, policy):
    static = _vehicle_static(api, admin_token, tenant, policy)
    draft = _draft(api, admin_token, tenant, policy, modify(static, vin="000SHORTVIN12345"))
    for name in ("validate", "price", "issue"):
        response = step(api, admin_token, tenant, draft["locator"], name)
        body = ok(response)
        assert body["transactionState"] == "draft"
        assert body["validationResult"]["success"] is False
        assert event_types(api, admin_token, tenant, response) == []
    assert ok(call(api, "GET", transaction_path(tenant, draft["locator"]), admin_token)) == draft


@pytest.mark.parametrize(
    "prefix, state, status",
    [("BL", "underwrittenBlocked", "block"), ("DC", "declined", "decline"), ("RJ", "rejected", "reject")],
)
def test_underwriting_stops_and_an_approve_flag_lets_it_through(
    api, admin_token, tenant, policy, prefix, state, status
):
    static = _vehicle_static(api, admin_token, tenant, policy)
    draft = _draft(api, admin_token, tenant, policy, modify(static, vin=f"{prefix}CM82633A004352"))

    stopped = ok(step(api, admin_token, tenant, draft["locator"], "underwrite"))
    assert (stopped["transactionState"], stopped["underwritingStatus"]) == (state, status)
    assert stopped["underwritingFlags"][0]["referenceType"] == "transaction"
    assert_error(step(api, admin_token, tenant, draft["locator"], "price"), 409, "transaction.invalid_state")

    flags = ok(
        call(
            api,
            "POST",
            transaction_path(tenant, draft["locator"], "/underwritingFlags/approve"),
            admin_token,
            {"note": "fine by me"},
        )
    )
    assert [f["level"] for f in flags["flags"]] == [status, "approve"]
    underwritten = ok(step(api, admin_token, tenant, draft["locator"], "underwrite"))
    expected = "rejected" if state == "rejected" else "underwritten"
    assert underwritten["transactionState"] == expected


def test_flags_are_added_and_cleared_by_level_and_in_bulk(api, admin_token, tenant, policy):
    draft = _draft(api, admin_token, tenant, policy)
    path = transaction_path(tenant, draft["locator"], "/underwritingFlags")
    response = call(api, "POST", f"{path}/block", admin_token, {"note": "check"})
    added = ok(response)
    assert event_types(api, admin_token, tenant, response) == ["policy.change.manualUnderwrite"]
    (flag,) = added["flags"]
    assert_error(
        call(api, "DELETE", f"{path}/decline/{flag['locator']}", admin_token), 404, "underwritingFlag.not_found"
    )
    cleared = ok(call(api, "DELETE", f"{path}/block/{flag['locator']}", admin_token))
    assert (cleared["flags"], [f["locator"] for f in cleared["clearedFlags"]]) == ([], [flag["locator"]])
    bulk = ok(call(api, "PATCH", path, admin_token, {"addFlags": [{"level": "info", "note": "fyi"}]}))
    assert [f["level"] for f in bulk["flags"]] == ["info"]
    assert ok(call(api, "GET", path, admin_token)) == bulk
    assert_error(call(api, "POST", f"{path}/info", admin_token, {"level": "block"}), 400, "request.invalid")


def test_accept_reset_refuse_and_discard(api, admin_token, tenant, policy):
    accepted = ok(step(api, admin_token, tenant, _draft(api, admin_token, tenant, policy)["locator"], "accept"))
    assert (accepted["transactionState"], accepted["acceptedTime"]) == ("accepted", "2026-01-15T09:30:00.000Z")
    assert_error(step(api, admin_token, tenant, accepted["locator"], "reset"), 409, "transaction.invalid_state")
    assert_error(step(api, admin_token, tenant, accepted["locator"], "discard"), 409, "transaction.invalid_state")
    refused = ok(step(api, admin_token, tenant, accepted["locator"], "refuse"))
    assert refused["transactionState"] == "refused"
    assert_error(step(api, admin_token, tenant, accepted["locator"], "issue"), 409, "transaction.invalid_state")

    priced = ok(step(api, admin_token, tenant, _draft(api, admin_token, tenant, policy)["locator"], "price"))
    response = step(api, admin_token, tenant, priced["locator"], "reset")
    initialized = ok(response)
    assert (initialized["transactionState"], event_types(api, admin_token, tenant, response)) == (
        "initialized",
        ["policy.change.reset"],
    )
    assert (
        ok(step(api, admin_token, tenant, priced["locator"], "reset", "?resetToDraft=true"))["transactionState"]
        == "draft"
    )
    assert_error(
        call(api, "GET", transaction_path(tenant, priced["locator"], "/price"), admin_token),
        409,
        "transaction.not_priced",
    )
    discarded = ok(step(api, admin_token, tenant, priced["locator"], "discard"))
    assert discarded["transactionState"] == "discarded"
    assert_error(
        call(api, "PUT", transaction_path(tenant, priced["locator"], "/elements"), admin_token, [vehicle()]),
        409,
        "transaction.not_draft",
    )


def test_an_expired_transaction_advances_no_further(api, admin_token, tenant, policy):
    draft = ok(
        create(
            api,
            admin_token,
            tenant,
            policy["locator"],
            "change",
            [params(AUGUST, expirationTime="2026-01-10T00:00:00Z")],
        )
    )
    assert draft["expirationTime"] == "2026-01-10T00:00:00.000Z"
    assert_error(step(api, admin_token, tenant, draft["locator"], "validate"), 409, "transaction.expired")
