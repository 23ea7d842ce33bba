"""Entity holds through the API, continued: a draft or validated hold is updated with every field of the
request (a validated one is a draft again) and moves to another quote or policy only with
`referenceUpdate`; an active hold with `holdStaticData` keeps its quote's or policy's static data as it is,
as does a policy hold blocking `change` transactions unless its scope has `allowStaticData`."""

from __future__ import annotations

from tests.api.quotes.support import auto, create, new_account, quote_path
from tests.api.transactions.support import issued_policy, policy_path
from tests.support.api import assert_error, call, event_types, ok
from tests.support.configs import quotes_model, quotes_tenant


def holds(tenant: str, suffix: str = "") -> str:
    return f"/policy/{tenant}/holds{suffix}"


def quote_hold(quote: dict, **fields) -> dict:
    return {
        "referenceType": "quote",
        "referenceLocator": quote["locator"],
        "description": "",
        "holdStaticData": False,
        "quoteHoldScope": {"quoteState": "priced"},
        "policyHoldScope": None,
        "referenceUpdate": False,
        **fields,
    }


def policy_hold(policy: dict, categories: list[str], *, allow_static: bool, hold_static: bool = False) -> dict:
    return {
        "referenceType": "policy",
        "referenceLocator": policy["locator"],
        "holdStaticData": hold_static,
        "policyHoldScope": {"transactionCategory": categories, "transactionType": [], "allowStaticData": allow_static},
    }


def active(api, token, tenant, body) -> dict:
    created = ok(call(api, "PUT", holds(tenant), token, body))
    return ok(call(api, "PATCH", holds(tenant, f"/{created['locator']}/activate"), token))


def test_a_draft_or_validated_hold_is_updated_and_moves_to_another_quote_only_with_reference_update(api, admin_token):
    tenant = quotes_tenant(api, admin_token)
    other = quotes_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    first, second = (create(api, admin_token, tenant, auto(account)) for _ in range(2))
    foreign = create(api, admin_token, other, auto(new_account(api, admin_token, other)))
    draft = ok(
        call(
            api,
            "PUT",
            holds(tenant),
            admin_token,
            {
                "referenceType": "quote",
                "referenceLocator": first["locator"],
                "quoteHoldScope": {"quoteState": "priced"},
            },
        )
    )
    ok(call(api, "PATCH", holds(tenant, f"/{draft['locator']}/validate"), admin_token))
    path = holds(tenant, f"/{draft['locator']}")

    updated = call(
        api,
        "PATCH",
        path,
        admin_token,
        quote_hold(
            first, description="awaiting documents", holdStaticData=True, quoteHoldScope={"quoteState": "underwritten"}
        ),
    )
    changed = ok(updated)
    assert (
        changed["state"],
        changed["description"],
        changed["holdStaticData"],
        changed["quoteHoldScope"],
        changed["policyHoldScope"],
        changed["referenceLocator"],
    ) == ("draft", "awaiting documents", True, {"quoteState": "underwritten"}, None, first["locator"])
    assert "validationResult" not in changed or changed["validationResult"] is None
    assert event_types(api, admin_token, tenant, updated) == ["policy.hold.update"]
    assert ok(call(api, "GET", path, admin_token)) == changed

    # another reference without referenceUpdate, a scope of the other kind, another tenant's quote: nothing moves
    assert_error(call(api, "PATCH", path, admin_token, quote_hold(second)), 400, "entityHold.invalid_reference")
    assert_error(
        call(
            api,
            "PATCH",
            path,
            admin_token,
            quote_hold(
                first,
                quoteHoldScope=None,
                policyHoldScope={"transactionCategory": ["change"], "transactionType": [], "allowStaticData": False},
            ),
        ),
        400,
        "entityHold.invalid_scope",
    )
    assert_error(
        call(api, "PATCH", path, admin_token, quote_hold(foreign, referenceUpdate=True)), 404, "quote.not_found"
    )
    assert_error(
        call(api, "PATCH", path, admin_token, {**quote_hold(first), "referenceUpdate": None}), 400, "request.invalid"
    )
    assert ok(call(api, "GET", path, admin_token)) == changed

    moved = ok(call(api, "PATCH", path, admin_token, quote_hold(second, referenceUpdate=True)))
    assert (moved["referenceLocator"], moved["holdStaticData"], moved["description"]) == (second["locator"], False, "")
    assert ok(call(api, "GET", quote_path(tenant, first["locator"], "/holds"), admin_token)) == []
    assert [
        h["locator"] for h in ok(call(api, "GET", quote_path(tenant, second["locator"], "/holds"), admin_token))
    ] == [draft["locator"]]

    ok(call(api, "PATCH", holds(tenant, f"/{draft['locator']}/activate"), admin_token))
    assert_error(call(api, "PATCH", path, admin_token, quote_hold(second)), 409, "entityHold.invalid_state")
    assert_error(
        call(api, "PATCH", holds(other, f"/{draft['locator']}"), admin_token, quote_hold(second)),
        404,
        "entityHold.not_found",
    )


def test_a_quote_hold_with_hold_static_data_keeps_the_quote_static_data_until_released(api, admin_token):
    tenant = quotes_tenant(api, admin_token)
    quote = create(api, admin_token, tenant, auto(new_account(api, admin_token, tenant), static={"agency": "North"}))
    static = quote_path(tenant, quote["locator"], "/static")
    loose = active(
        api,
        admin_token,
        tenant,
        {"referenceType": "quote", "referenceLocator": quote["locator"], "quoteHoldScope": {"quoteState": "priced"}},
    )
    assert ok(call(api, "POST", static, admin_token, {"agent": "Ann"}))["static"] == {"agency": "North", "agent": "Ann"}

    strict = active(
        api,
        admin_token,
        tenant,
        {
            "referenceType": "quote",
            "referenceLocator": quote["locator"],
            "quoteHoldScope": {"quoteState": "priced"},
            "holdStaticData": True,
        },
    )
    refused = assert_error(call(api, "PUT", static, admin_token, {"agency": "South"}), 409, "quote.held")
    assert strict["locator"] in refused["message"] and loose["locator"] not in refused["message"]
    assert_error(
        call(api, "PATCH", static, admin_token, {"setData": {"agent": "Bo"}, "removeData": {}}), 409, "quote.held"
    )
    assert ok(call(api, "GET", static, admin_token)) == {"agency": "North", "agent": "Ann"}

    ok(call(api, "PATCH", holds(tenant, f"/{strict['locator']}/release"), admin_token))
    assert ok(call(api, "PUT", static, admin_token, {"agency": "South"}))["static"] == {"agency": "South"}


def test_a_policy_hold_on_changes_keeps_static_data_unless_its_scope_allows_it(api, admin_token):
    model = quotes_model()
    model["products"]["PersonalAuto"]["staticData"] = {"agency": {"type": "string?"}}
    tenant = quotes_tenant(api, admin_token, model)
    policy = issued_policy(api, admin_token, tenant, new_account(api, admin_token, tenant))
    static = policy_path(tenant, policy["locator"], "/static")
    cancellations = active(api, admin_token, tenant, policy_hold(policy, ["cancellation"], allow_static=False))
    allowing = active(api, admin_token, tenant, policy_hold(policy, ["change"], allow_static=True))
    added = call(api, "POST", static, admin_token, {"agency": "Downtown"})
    assert ok(added)["static"] == {"agency": "Downtown"}
    assert event_types(api, admin_token, tenant, added) == ["policy.staticdata.add"]

    changes = active(api, admin_token, tenant, policy_hold(policy, ["change"], allow_static=False))
    refused = assert_error(call(api, "PUT", static, admin_token, {"agency": "Uptown"}), 409, "policy.held")
    assert changes["locator"] in refused["message"]
    ok(call(api, "PATCH", holds(tenant, f"/{changes['locator']}/release"), admin_token))

    held = active(api, admin_token, tenant, policy_hold(policy, ["cancellation"], allow_static=True, hold_static=True))
    assert_error(
        call(api, "PATCH", static, admin_token, {"setData": {"agency": "Uptown"}, "removeData": {}}), 409, "policy.held"
    )
    assert ok(call(api, "GET", static, admin_token)) == {"agency": "Downtown"}
    ok(call(api, "PATCH", holds(tenant, f"/{held['locator']}/release"), admin_token))
    assert ok(call(api, "PUT", static, admin_token, {"agency": "Uptown"}))["static"] == {"agency": "Uptown"}
    assert {cancellations["state"], allowing["state"]} == {"active"}
