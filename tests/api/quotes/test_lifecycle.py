"""The quote lifecycle through the API: each step, later steps running the earlier ones, issuing into a
policy in one transaction, failures answering 200 with the state unchanged, the edit, reset, final and
expiry rules, optimistic locking."""

from __future__ import annotations

import pytest

from tests.api.quotes.support import (
    PRICE_FIELDS,
    QUOTE_FIELDS,
    advance,
    auto,
    create,
    errors_of,
    new_account,
    quote_path,
    vehicle,
)
from tests.support.api import assert_error, call, event_types, events_of, ok
from tests.support.configs import quotes_model, quotes_tenant

ADVANCES = ["validate", "price", "underwrite", "accept", "issue"]


def test_issuing_a_draft_validates_prices_underwrites_accepts_and_issues_it_into_a_policy(
    api, admin_token, tenant, account, ddb_calls
):
    quote = create(api, admin_token, tenant, auto(account))
    ddb_calls.clear()
    response = advance(api, admin_token, tenant, quote["locator"], "issue")
    issued = ok(response)

    assert QUOTE_FIELDS <= set(issued)
    assert (issued["quoteState"], issued["quoteNumber"], issued["policyNumber"]) == (
        "issued",
        "QPA-000001",
        "PA-000001",
    )
    assert issued["acceptedTime"] == issued["issuedTime"] == "2026-01-15T09:30:00.000Z"
    assert event_types(api, admin_token, tenant, response) == [
        "policy.quote.validate",
        "policy.quote.price",
        "policy.quote.underwrite",
        "policy.quote.accept",
        "policy.quote.issue",
    ]
    assert ddb_calls.count("TransactWriteItems") == 1
    policy = ok(call(api, "GET", f"/policy/{tenant}/policies/{issued['policyLocator']}", admin_token))
    assert (policy["policyNumber"], policy["accountLocator"], policy["productName"]) == (
        "PA-000001",
        account,
        "PersonalAuto",
    )
    assert (policy["startTime"], policy["endTime"]) == (issued["startTime"], issued["endTime"])
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token)) == issued


def test_each_step_moves_the_quote_one_state_on(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    states, types = [], []
    for step in ADVANCES:
        response = advance(api, admin_token, tenant, locator, step)
        states.append(ok(response)["quoteState"])
        types += event_types(api, admin_token, tenant, response)

    assert states == ["validated", "priced", "underwritten", "accepted", "issued"]
    assert types == [
        f"policy.quote.{step}" for step in ("validate", "price", "underwrite", "underwrite", "accept", "issue")
    ]


def test_the_responses_of_price_and_underwrite_carry_what_the_definition_requires(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    priced = ok(advance(api, admin_token, tenant, locator, "price"))
    underwritten = ok(advance(api, admin_token, tenant, locator, "underwrite"))

    assert PRICE_FIELDS <= set(priced)
    assert (priced["tenantLocator"], priced["quoteLocator"], priced["quoteState"]) == (tenant, locator, "priced")
    assert {"underwritingStatus", "underwritingFlags"} <= set(underwritten)
    assert (underwritten["quoteState"], underwritten["underwritingStatus"]) == ("underwritten", "info")


def test_a_failing_validation_answers_200_with_the_draft_and_its_result_and_changes_nothing(
    api, admin_token, tenant, account
):
    quote = create(api, admin_token, tenant, auto(account, vehicle(vin="short")))
    for step in ADVANCES:
        response = advance(api, admin_token, tenant, quote["locator"], step)
        body = ok(response)
        assert body["quoteState"] == "draft"
        assert errors_of(body["validationResult"]) == ["elements[0].data.vin: must be at least 11 characters long"]
        assert event_types(api, admin_token, tenant, response) == []
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token)) == quote


def test_the_validation_plugin_reports_on_the_element(api, admin_token, tenant, account):
    quote = create(api, admin_token, tenant, auto(account, vehicle(vin="00000000000000001")))
    body = ok(advance(api, admin_token, tenant, quote["locator"], "validate"))
    vehicle_locator = quote["element"]["elements"][0]["locator"]

    assert quote["validationResult"]["success"] is True  # the draft check runs no plugin
    assert body["quoteState"] == "draft"
    assert body["validationResult"] == {
        "success": False,
        "validationItems": [
            {"locator": vehicle_locator, "elementType": "Vehicle", "errors": ["the VIN is not a real one"]}
        ],
    }


@pytest.mark.parametrize(
    "method, suffix, body",
    [
        ("PATCH", "", {"setData": {"channel": "agent"}}),
        ("PUT", "/elements", [{"type": "Vehicle"}]),
        ("DELETE", "/elements", []),
    ],
)
def test_only_a_draft_can_be_changed(api, admin_token, tenant, account, method, suffix, body):
    quote = create(api, admin_token, tenant, auto(account))
    validated = ok(advance(api, admin_token, tenant, quote["locator"], "validate"))

    assert_error(
        call(api, method, quote_path(tenant, quote["locator"], suffix), admin_token, body), 409, "quote.not_draft"
    )
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token)) == validated


def test_asking_for_an_earlier_step_is_a_409_and_the_same_step_runs_again(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    first = ok(advance(api, admin_token, tenant, locator, "price"))
    again = advance(api, admin_token, tenant, locator, "price")

    assert_error(advance(api, admin_token, tenant, locator, "validate"), 409, "quote.invalid_state")
    assert ok(again)["quoteState"] == "priced"
    assert [c["locator"] for c in ok(again)["items"]] != [c["locator"] for c in first["items"]]
    assert event_types(api, admin_token, tenant, again) == ["policy.quote.price"]


def test_reset_returns_to_an_editable_draft_without_a_price(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    ok(advance(api, admin_token, tenant, locator, "underwrite"))
    response = call(api, "PATCH", quote_path(tenant, locator, "/reset"), admin_token)
    reset = ok(response)

    assert (reset["quoteState"], reset.get("underwritingStatus")) == ("draft", None)
    assert reset["quoteNumber"] == "QPA-000001"
    assert event_types(api, admin_token, tenant, response) == ["policy.quote.reset"]
    assert_error(call(api, "GET", quote_path(tenant, locator, "/price"), admin_token), 409, "quote.not_priced")
    assert (
        ok(call(api, "PATCH", quote_path(tenant, locator), admin_token, {"setData": {"channel": "agent"}}))["element"][
            "data"
        ]["channel"]
        == "agent"
    )
    assert ok(advance(api, admin_token, tenant, locator, "price"))["items"][0]["rate"] == 120


@pytest.mark.parametrize("final, state", [("refuse", "refused"), ("discard", "discarded")])
def test_refused_and_discarded_quotes_are_final(api, admin_token, tenant, account, final, state):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    response = advance(api, admin_token, tenant, locator, final)

    assert ok(response)["quoteState"] == state
    assert event_types(api, admin_token, tenant, response) == [f"policy.quote.{final}"]
    for step in [*ADVANCES, "reset", "refuse", "discard"]:
        assert_error(advance(api, admin_token, tenant, locator, step), 409, "quote.invalid_state")


def test_an_accepted_quote_may_be_issued_or_refused_but_not_reset_or_discarded(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    ok(advance(api, admin_token, tenant, locator, "accept"))

    for step in ("validate", "price", "underwrite", "accept", "reset", "discard"):
        assert_error(advance(api, admin_token, tenant, locator, step), 409, "quote.invalid_state")
    assert ok(advance(api, admin_token, tenant, locator, "refuse"))["quoteState"] == "refused"


def test_an_issued_quote_changes_no_more(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    ok(advance(api, admin_token, tenant, locator, "issue"))

    for step in [*ADVANCES, "reset", "refuse", "discard"]:
        assert_error(advance(api, admin_token, tenant, locator, step), 409, "quote.invalid_state")
    assert_error(
        call(api, "POST", quote_path(tenant, locator, "/underwritingFlags/block"), admin_token, {}),
        409,
        "quote.invalid_state",
    )


def test_an_expired_quote_does_not_advance(api, admin_token, tenant, account, clock):
    locator = create(api, admin_token, tenant, auto(account, expirationTime="2026-01-20T00:00:00Z"))["locator"]
    ok(advance(api, admin_token, tenant, locator, "validate"))
    clock.set(clock.now().replace(day=20, hour=0, minute=0))

    for step in ADVANCES[1:]:
        assert_error(advance(api, admin_token, tenant, locator, step), 409, "quote.expired")
    assert ok(call(api, "PATCH", quote_path(tenant, locator, "/reset"), admin_token))["quoteState"] == "draft"
    ok(call(api, "PATCH", quote_path(tenant, locator), admin_token, {"expirationTime": "2026-02-01T00:00:00Z"}))
    assert ok(advance(api, admin_token, tenant, locator, "issue"))["quoteState"] == "issued"


def test_stateless_steps_answer_what_would_happen_and_store_nothing(api, admin_token, tenant, account):
    quote = create(api, admin_token, tenant, auto(account))
    responses = [
        call(api, "PATCH", quote_path(tenant, quote["locator"], f"/{step}?stateless=true"), admin_token)
        for step in ("validate", "price", "underwrite")
    ]

    assert [ok(r)["quoteState"] for r in responses] == ["validated", "priced", "underwritten"]
    assert [c["amount"] for c in ok(responses[1])["items"]] == [1200, 25]
    assert all(event_types(api, admin_token, tenant, r) == [] for r in responses)
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token)) == quote


def test_the_events_name_the_quote_and_the_underwriting_status(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account, vehicle(vin="BL000000000000001")))["locator"]
    events = events_of(api, admin_token, tenant, advance(api, admin_token, tenant, locator, "underwrite"))

    assert [(e["type"], e["data"]) for e in events] == [
        ("policy.quote.validate", {"quoteLocator": locator}),
        ("policy.quote.price", {"quoteLocator": locator}),
        ("policy.quote.underwrite", {"quoteLocator": locator, "underwritingStatus": "block"}),
    ]


def test_a_write_based_on_a_stale_version_is_a_409_and_changes_nothing(api, admin_token, tenant, account):
    """Clients send no version: a lost race is two requests reading the same version. The second
    writer here is the repository itself, holding the quote as it was before the PATCH."""
    from chalicelib.core.errors import ConcurrentModification
    from chalicelib.quotes import repository
    from chalicelib.quotes.models import QuoteState
    from chalicelib.runtime import wiring
    from tests.builders import system_ctx

    locator = create(api, admin_token, tenant, auto(account))["locator"]
    stale = repository.get(tenant, locator)
    ok(call(api, "PATCH", quote_path(tenant, locator), admin_token, {"setData": {"channel": "agent"}}))

    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    repository.save(uow, tenant, stale.model_copy(update={"quoteState": QuoteState.DISCARDED}))
    with pytest.raises(ConcurrentModification):
        uow.commit()
    now = ok(call(api, "GET", quote_path(tenant, locator), admin_token))
    assert (now["quoteState"], now["element"]["data"]["channel"]) == ("draft", "agent")


def test_a_product_that_needs_a_reserved_policy_number_is_not_issued_without_one(api, admin_token):
    model = quotes_model()
    model["products"]["PersonalAuto"]["reservedPolicyNumberRequired"] = True
    strict = quotes_tenant(api, admin_token, model, plugins=None)
    locator = create(api, admin_token, strict, auto(new_account(api, admin_token, strict)))["locator"]

    assert_error(advance(api, admin_token, strict, locator, "issue"), 409, "quote.reserved_policy_number_required")
    assert ok(call(api, "GET", quote_path(strict, locator), admin_token))["quoteState"] == "draft"
    ok(
        call(
            api,
            "POST",
            quote_path(strict, locator, "/reservedPolicyNumber/set?reservedPolicyNumber=EXT-1"),
            admin_token,
        )
    )
    assert ok(advance(api, admin_token, strict, locator, "issue"))["policyNumber"] == "EXT-1"
