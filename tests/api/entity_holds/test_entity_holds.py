"""Entity holds through the API: an active hold on a quote keeps it from going past its scope's state, one
on a policy blocks the transactions of its categories (creating and issuing them); releasing the hold
lifts it. A hold moves only as its state allows, names a quote or policy of its tenant, and takes the
scope of what it holds."""

from __future__ import annotations

from tests.api.quotes.support import advance, auto, create, new_account, quote_path
from tests.api.transactions.support import create as create_transaction
from tests.api.transactions.support import issued_policy, params, policy_path, step
from tests.support.api import assert_error, call, event_types, ok
from tests.support.configs import quotes_tenant

CANCEL_AT = "2026-06-01T04:00:00.000Z"


def holds(tenant: str, suffix: str = "") -> str:
    return f"/policy/{tenant}/holds{suffix}"


def test_an_active_quote_hold_keeps_the_quote_from_going_past_its_state_until_released(api, admin_token):
    tenant = quotes_tenant(api, admin_token)
    quote = create(api, admin_token, tenant, auto(new_account(api, admin_token, tenant)))
    created = call(
        api,
        "PUT",
        holds(tenant),
        admin_token,
        {
            "referenceType": "quote",
            "referenceLocator": quote["locator"],
            "description": "documents missing",
            "quoteHoldScope": {"quoteState": "priced"},
        },
    )
    draft = ok(created)
    assert (draft["state"], draft["referenceType"], draft["quoteHoldScope"], draft["policyHoldScope"]) == (
        "draft",
        "quote",
        {"quoteState": "priced"},
        None,
    )
    assert event_types(api, admin_token, tenant, created) == ["policy.hold.create"]
    assert ok(call(api, "PATCH", holds(tenant, f"/{draft['locator']}/validate"), admin_token))["state"] == "validated"
    active = ok(call(api, "PATCH", holds(tenant, f"/{draft['locator']}/activate"), admin_token))
    assert (active["state"], active["validationResult"]) == ("active", {"success": True, "validationItems": []})

    assert ok(advance(api, admin_token, tenant, quote["locator"], "price"))["quoteState"] == "priced"
    refused = assert_error(advance(api, admin_token, tenant, quote["locator"], "underwrite"), 409, "quote.held")
    assert draft["locator"] in refused["message"]
    assert_error(advance(api, admin_token, tenant, quote["locator"], "issue"), 409, "quote.held")
    fetched = ok(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token))
    assert fetched["quoteState"] == "priced"
    assert [
        (h["locator"], h["state"])
        for h in ok(call(api, "GET", quote_path(tenant, quote["locator"], "/holds"), admin_token))
    ] == [(draft["locator"], "active")]

    released = call(api, "PATCH", holds(tenant, f"/{draft['locator']}/release"), admin_token)
    assert ok(released)["state"] == "released"
    assert event_types(api, admin_token, tenant, released) == ["policy.hold.release"]
    assert ok(advance(api, admin_token, tenant, quote["locator"], "underwrite"))["quoteState"] == "underwritten"
    assert_error(
        call(api, "PATCH", holds(tenant, f"/{draft['locator']}/release"), admin_token), 409, "entityHold.invalid_state"
    )


def test_an_active_policy_hold_blocks_its_transaction_categories_until_released(api, admin_token, jobs):
    tenant = quotes_tenant(api, admin_token)
    policy = issued_policy(api, admin_token, tenant, new_account(api, admin_token, tenant))
    drafted = ok(create_transaction(api, admin_token, tenant, policy["locator"], "cancel", params(CANCEL_AT)))
    hold = ok(
        call(
            api,
            "PUT",
            holds(tenant),
            admin_token,
            {
                "referenceType": "policy",
                "referenceLocator": policy["locator"],
                "policyHoldScope": {
                    "transactionCategory": ["cancellation"],
                    "transactionType": [],
                    "allowStaticData": True,
                },
            },
        )
    )
    ok(call(api, "PATCH", holds(tenant, f"/{hold['locator']}/activate"), admin_token))

    assert_error(
        create_transaction(api, admin_token, tenant, policy["locator"], "cancel", params(CANCEL_AT)),
        409,
        "transaction.held",
    )
    assert_error(step(api, admin_token, tenant, drafted["locator"], "issue"), 409, "transaction.held")
    change = ok(create_transaction(api, admin_token, tenant, policy["locator"], "change", [params(CANCEL_AT)]))
    assert change["transactionCategory"] == "change"  # other categories go on
    listed = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/holds"), admin_token))
    assert [(h["locator"], h["state"], h["policyHoldScope"]["transactionCategory"]) for h in listed] == [
        (hold["locator"], "active", ["cancellation"])
    ]

    ok(call(api, "PATCH", holds(tenant, f"/{hold['locator']}/release"), admin_token))
    issued = ok(step(api, admin_token, tenant, drafted["locator"], "issue"))
    assert issued["transactionState"] == "issued"


def test_a_hold_names_what_it_holds_in_its_own_tenant_and_moves_only_as_its_state_allows(api, admin_token):
    tenant = quotes_tenant(api, admin_token)
    other = quotes_tenant(api, admin_token)
    quote = create(api, admin_token, tenant, auto(new_account(api, admin_token, tenant)))
    foreign = create(api, admin_token, other, auto(new_account(api, admin_token, other)))
    assert_error(
        call(
            api,
            "PUT",
            holds(tenant),
            admin_token,
            {
                "referenceType": "quote",
                "referenceLocator": quote["locator"],
                "policyHoldScope": {"transactionCategory": ["change"], "transactionType": [], "allowStaticData": False},
            },
        ),
        400,
        "entityHold.invalid_scope",
    )
    assert_error(
        call(
            api,
            "PUT",
            holds(tenant),
            admin_token,
            {
                "referenceType": "quote",
                "referenceLocator": foreign["locator"],
                "quoteHoldScope": {"quoteState": "priced"},
            },
        ),
        404,
        "quote.not_found",
    )
    assert_error(
        call(
            api,
            "PUT",
            holds(tenant),
            admin_token,
            {
                "referenceType": "quote",
                "referenceLocator": quote["locator"],
                "quoteHoldScope": {"quoteState": "issued"},
            },
        ),
        400,
        "request.invalid",
    )
    foreign_hold = ok(
        call(
            api,
            "PUT",
            holds(other),
            admin_token,
            {
                "referenceType": "quote",
                "referenceLocator": foreign["locator"],
                "quoteHoldScope": {"quoteState": "priced"},
            },
        )
    )
    assert_error(
        call(api, "PATCH", holds(tenant, f"/{foreign_hold['locator']}/activate"), admin_token),
        404,
        "entityHold.not_found",
    )
    assert ok(call(api, "GET", holds(other, f"/{foreign_hold['locator']}"), admin_token))["state"] == "draft"
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"], "/holds"), admin_token)) == []

    ok(call(api, "PATCH", holds(other, f"/{foreign_hold['locator']}/discard"), admin_token))
    assert_error(
        call(api, "PATCH", holds(other, f"/{foreign_hold['locator']}/activate"), admin_token),
        409,
        "entityHold.invalid_state",
    )
    assert ok(call(api, "GET", holds(other, f"/{foreign_hold['locator']}"), admin_token))["state"] == "discarded"


def test_a_policy_hold_without_a_scope_holds_the_whole_policy(api, admin_token):
    """The definition makes both scopes optional: a policy's hold that names none blocks every transaction
    of the policy, and its static data."""
    tenant = quotes_tenant(api, admin_token)
    policy = issued_policy(api, admin_token, tenant, new_account(api, admin_token, tenant))
    created = call(
        api, "PUT", holds(tenant), admin_token, {"referenceType": "policy", "referenceLocator": policy["locator"]}
    )
    hold = ok(created)
    assert (hold["state"], hold["quoteHoldScope"], hold["policyHoldScope"]) == (
        "draft",
        None,
        {
            "transactionCategory": [
                "issuance",
                "change",
                "renewal",
                "cancellation",
                "reinstatement",
                "reversal",
                "aggregate",
            ],
            "transactionType": [],
            "allowStaticData": False,
        },
    )
    assert event_types(api, admin_token, tenant, created) == ["policy.hold.create"]
    ok(call(api, "PATCH", holds(tenant, f"/{hold['locator']}/activate"), admin_token))

    for kind, body in (("cancel", params(CANCEL_AT)), ("change", [params(CANCEL_AT)]), ("renew", [])):
        assert_error(
            create_transaction(api, admin_token, tenant, policy["locator"], kind, body), 409, "transaction.held"
        )
    assert_error(
        call(api, "POST", policy_path(tenant, policy["locator"], "/static"), admin_token, {"agency": "X"}),
        409,
        "policy.held",
    )

    ok(call(api, "PATCH", holds(tenant, f"/{hold['locator']}/release"), admin_token))
    cancellation = ok(create_transaction(api, admin_token, tenant, policy["locator"], "cancel", params(CANCEL_AT)))
    assert cancellation["transactionCategory"] == "cancellation"
