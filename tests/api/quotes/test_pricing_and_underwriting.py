"""Pricing and underwriting through the plugins (tests/support/configs.py, QUOTE_PLUGINS): charges from
lookup and range tables at rate x duration, flags of every level deciding the state, manual flags beside
plugin flags, plugin failures contained in the validationResult, previews that store nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.api.quotes.support import (
    CHARGE_FIELDS,
    FLAG_FIELDS,
    PRICE_FIELDS,
    QUOTE_FIELDS,
    advance,
    auto,
    create,
    dwelling_data,
    errors_of,
    home,
    of_type,
    quote_path,
    quotes,
    vehicle,
)
from tests.support.api import assert_error, call, event_types, ok


def flags_path(tenant: str, locator: str, suffix: str = "") -> str:
    return quote_path(tenant, locator, f"/underwritingFlags{suffix}")


# --- pricing -------------------------------------------------------------------------------------


def test_charges_come_from_the_rating_plugin_at_rate_times_duration(api, admin_token, tenant, account):
    quote = create(
        api,
        admin_token,
        tenant,
        auto(account, vehicle(), vehicle("2HGCM82633A004352", "30000"), data={"channel": "agent"}),
    )
    cheap, dear = of_type(quote, "Vehicle")
    priced = ok(advance(api, admin_token, tenant, quote["locator"], "price"))

    assert PRICE_FIELDS <= set(priced)
    assert all(CHARGE_FIELDS <= set(charge) for charge in priced["items"])
    assert (priced["duration"], priced["durationBasis"]) == (12, "months")
    assert [
        (
            c["elementLocator"],
            c["chargeType"],
            c["chargeCategory"],
            c["rate"],
            c["amount"],
            c["referenceRate"],
            c.get("tag"),
        )
        for c in priced["items"]
    ] == [
        (cheap["locator"], "premium", "premium", 120, Decimal("1440.00"), 120, "band 1.0"),
        (dear["locator"], "premium", "premium", Decimal("180.0"), Decimal("2160.00"), 120, "band 1.5"),
        (quote["element"]["locator"], "tax", "tax", Decimal(25) / 12, Decimal("25.00"), Decimal(25) / 12, None),
    ]
    assert {(c["handling"], c["invoicing"]) for c in priced["items"]} == {("normal", "scheduled")}
    assert priced["items"][0]["elementStaticLocator"] == cheap["staticLocator"]
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"], "/price"), admin_token)) == priced


def test_a_part_of_a_month_is_priced_as_its_fraction(api, admin_token, tenant, account):
    # Feb 1 -> Jun 16 (New York midnights): 4 whole months, then 15 of June 1 -> July 1's 30 days
    quote = create(api, admin_token, tenant, auto(account, endTime="2026-06-16T04:00:00Z"))
    priced = ok(advance(api, admin_token, tenant, quote["locator"], "price"))

    assert (quote["duration"], priced["duration"]) == (Decimal("4.5"), Decimal("4.5"))
    assert priced["items"][0]["amount"] == Decimal("450.00")


def test_a_product_without_plugins_is_priced_and_underwritten_with_nothing(api, admin_token, tenant, account):
    quote = create(
        api,
        admin_token,
        tenant,
        home(account, elements=[{"type": "Dwelling", "data": dwelling_data(), "elements": [{"type": "Fire"}]}]),
    )
    priced = ok(advance(api, admin_token, tenant, quote["locator"], "price"))
    underwritten = ok(advance(api, admin_token, tenant, quote["locator"], "underwrite"))

    assert (priced["quoteState"], priced["items"]) == ("priced", [])
    assert (underwritten["quoteState"], underwritten["underwritingFlags"]) == ("underwritten", [])
    assert ok(advance(api, admin_token, tenant, quote["locator"], "issue"))["quoteState"] == "issued"


def test_a_quote_never_priced_has_no_price_to_fetch(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    ok(advance(api, admin_token, tenant, locator, "validate"))
    assert_error(call(api, "GET", quote_path(tenant, locator, "/price"), admin_token), 409, "quote.not_priced")


# --- plugin failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "vin, message",
    [
        (
            "CRASH000000000001",
            "The plugin function rate_PersonalAuto failed: RuntimeError: rating exploded "
            "(plugins/python/auto.py line 23)",
        ),
        (
            "SHAPE000000000001",
            'The plugin function rate_PersonalAuto failed: the answer must be {"items": [...]}, '
            "not {'charges': 'all of them'}",
        ),
    ],
)
@pytest.mark.parametrize("step", ["price", "issue"])
def test_a_failing_rating_plugin_lands_in_the_validation_result_and_the_quote_keeps_its_state(
    api, admin_token, tenant, account, vin, message, step
):
    quote = create(api, admin_token, tenant, auto(account, vehicle(vin=vin)))
    response = advance(api, admin_token, tenant, quote["locator"], step)
    body = ok(response)

    assert body["quoteState"] == "draft"
    assert body["validationResult"] == {
        "success": False,
        "validationItems": [{"locator": quote["locator"], "elementType": "PersonalAuto", "errors": [message]}],
    }
    assert event_types(api, admin_token, tenant, response) == []
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token)) == quote


def test_a_plugin_failure_on_a_validated_quote_leaves_it_validated(api, admin_token, tenant, account):
    quote = create(api, admin_token, tenant, auto(account, vehicle(vin="CRASH000000000001")))
    validated = ok(advance(api, admin_token, tenant, quote["locator"], "validate"))
    body = ok(advance(api, admin_token, tenant, quote["locator"], "price"))

    assert (body["quoteState"], body["items"], body["validationResult"]["success"]) == ("validated", [], False)
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token)) == validated


# --- underwriting --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prefix, state, status",
    [
        ("AP", "underwritten", "approve"),
        ("IN", "underwritten", "info"),
        ("BL", "underwrittenBlocked", "block"),
        ("DC", "declined", "decline"),
        ("RJ", "rejected", "reject"),
        ("1H", "underwritten", "info"),
    ],
)
def test_the_plugins_flags_decide_the_state(api, admin_token, tenant, account, prefix, state, status):
    quote = create(api, admin_token, tenant, auto(account, vehicle(vin=f"{prefix}000000000000001")))
    underwritten = ok(advance(api, admin_token, tenant, quote["locator"], "underwrite"))

    assert (underwritten["quoteState"], underwritten["underwritingStatus"]) == (state, status)
    assert [(f["level"], f["note"], f["tag"], f["elementLocator"]) for f in underwritten["underwritingFlags"]] == (
        []
        if prefix in ("1H",)
        else [(status, f"vin {prefix}000000000000001", "vin", of_type(quote, "Vehicle")[0]["locator"])]
    )


def test_an_approve_flag_passes_a_quote_other_flags_would_stop(api, admin_token, tenant, account):
    quote = create(
        api, admin_token, tenant, auto(account, vehicle(vin="AP000000000000001"), vehicle(vin="DC000000000000001"))
    )
    assert ok(advance(api, admin_token, tenant, quote["locator"], "issue"))["quoteState"] == "issued"


def test_a_blocked_quote_stops_issue_at_underwriting_and_keeps_what_passed(api, admin_token, tenant, account):
    quote = create(api, admin_token, tenant, auto(account, vehicle(vin="BL000000000000001")))
    response = advance(api, admin_token, tenant, quote["locator"], "issue")
    blocked = ok(response)

    assert QUOTE_FIELDS <= set(blocked)
    assert (blocked["quoteState"], blocked["underwritingStatus"]) == ("underwrittenBlocked", "block")
    assert event_types(api, admin_token, tenant, response) == [
        "policy.quote.validate",
        "policy.quote.price",
        "policy.quote.underwrite",
    ]
    assert len(ok(call(api, "GET", quote_path(tenant, quote["locator"], "/price"), admin_token))["items"]) == 2
    assert_error(advance(api, admin_token, tenant, quote["locator"], "price"), 409, "quote.invalid_state")


def test_manual_flags_count_beside_the_plugins_and_cleared_flags_stop_counting(api, admin_token, tenant, account):
    quote = create(api, admin_token, tenant, auto(account, vehicle(vin="BL000000000000001")))
    locator = quote["locator"]
    blocked = ok(advance(api, admin_token, tenant, locator, "underwrite"))
    plugin_flag = blocked["underwritingFlags"][0]

    cleared = call(api, "DELETE", flags_path(tenant, locator, f"/block/{plugin_flag['locator']}"), admin_token)
    passed = ok(advance(api, admin_token, tenant, locator, "underwrite"))
    manual = ok(
        call(
            api,
            "POST",
            flags_path(tenant, locator, "/decline"),
            admin_token,
            {"note": "underwriter says no", "tag": "manual", "elementLocator": of_type(quote, "Vehicle")[0]["locator"]},
        )
    )
    declined = ok(advance(api, admin_token, tenant, locator, "accept"))

    assert event_types(api, admin_token, tenant, cleared) == ["policy.quote.manualunderwrite"]
    assert ok(cleared)["clearedFlags"][0]["locator"] == plugin_flag["locator"]
    assert (passed["quoteState"], passed["underwritingFlags"]) == ("underwritten", [])
    assert [f["level"] for f in manual["flags"]] == ["decline"]
    assert (declined["quoteState"], declined["underwritingStatus"]) == ("declined", "decline")
    everything = ok(call(api, "GET", flags_path(tenant, locator), admin_token))
    assert [(f["level"], f["note"]) for f in everything["flags"]] == [("decline", "underwriter says no")]
    assert [f["locator"] for f in everything["clearedFlags"]] == [plugin_flag["locator"]]
    assert everything["clearedFlags"][0]["clearedTime"] == "2026-01-15T09:30:00.000Z"


def test_flag_responses_carry_every_required_field(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    added = ok(call(api, "POST", flags_path(tenant, locator, "/info"), admin_token, {"note": "fyi"}))
    flag = added["flags"][0]

    assert added["quoteLocator"] == locator
    assert FLAG_FIELDS <= set(flag)
    assert (flag["level"], flag["referenceType"], flag["referenceLocator"], flag["note"], flag["tag"]) == (
        "info",
        "quote",
        locator,
        "fyi",
        "",
    )
    assert (flag["clearedBy"], flag["clearedTime"], flag["taskCreationResponse"]) == (None, None, None)


def test_a_manual_approve_passes_a_declined_quote(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account, vehicle(vin="DC000000000000001")))["locator"]
    ok(advance(api, admin_token, tenant, locator, "underwrite"))
    ok(call(api, "POST", flags_path(tenant, locator, "/approve"), admin_token, {"note": "fine by me"}))

    assert ok(advance(api, admin_token, tenant, locator, "issue"))["quoteState"] == "issued"


def test_an_approve_cannot_pass_a_rejected_quote_but_clearing_the_reject_can(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    ok(call(api, "POST", flags_path(tenant, locator, "/reject"), admin_token, {}))
    rejected = ok(advance(api, admin_token, tenant, locator, "underwrite"))
    ok(call(api, "POST", flags_path(tenant, locator, "/approve"), admin_token, {}))
    still = ok(advance(api, admin_token, tenant, locator, "underwrite"))
    reject = next(f for f in still["underwritingFlags"] if f["level"] == "reject")
    ok(call(api, "DELETE", flags_path(tenant, locator, f"/reject/{reject['locator']}"), admin_token))

    assert rejected["quoteState"] == still["quoteState"] == "rejected"
    assert ok(advance(api, admin_token, tenant, locator, "underwrite"))["quoteState"] == "underwritten"


def test_flags_change_in_bulk_and_reset_can_clear_or_delete_them(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    first = ok(
        call(
            api,
            "PATCH",
            flags_path(tenant, locator),
            admin_token,
            {"addFlags": [{"level": "block", "note": "one"}, {"level": "info", "note": "two"}]},
        )
    )
    block, info = first["flags"]
    second = ok(
        call(
            api,
            "PATCH",
            flags_path(tenant, locator),
            admin_token,
            {"addFlags": [{"level": "decline"}], "clearFlags": [block["locator"]]},
        )
    )
    cleared = ok(
        call(api, "PATCH", quote_path(tenant, locator, "/reset"), admin_token, {"resetAllUnderwritingFlags": True})
    )
    flags = ok(call(api, "GET", flags_path(tenant, locator), admin_token))
    deleted = ok(
        call(
            api,
            "PATCH",
            quote_path(tenant, locator, "/reset"),
            admin_token,
            {"resetFlags": [info["locator"]], "resetFlagsAction": "delete"},
        )
    )

    assert [f["level"] for f in second["flags"]] == ["info", "decline"]
    assert cleared["quoteState"] == "draft"
    assert (flags["flags"], len(flags["clearedFlags"])) == ([], 3)
    assert deleted["quoteState"] == "draft"
    assert len(ok(call(api, "GET", flags_path(tenant, locator), admin_token))["clearedFlags"]) == 2


@pytest.mark.parametrize(
    "method, suffix, body, status, code",
    [
        ("DELETE", "/block/01J00000000000000000000000", None, 404, "underwritingFlag.not_found"),
        ("PATCH", "", {"clearFlags": ["01J00000000000000000000000"]}, 404, "underwritingFlag.not_found"),
        ("POST", "/block", {"level": "approve"}, 400, "request.invalid"),
        ("POST", "/block", {"elementLocator": "01J00000000000000000000000"}, 400, "quote.invalid_flag"),
        ("POST", "/block", {"color": "red"}, 400, "request.invalid"),
        ("PATCH", "", {"addFlags": [{"note": "no level"}]}, 400, "quote.invalid_flag"),
    ],
)
def test_bad_flag_requests(api, admin_token, tenant, account, method, suffix, body, status, code):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    assert_error(call(api, method, flags_path(tenant, locator, suffix), admin_token, body), status, code)
    assert ok(call(api, "GET", flags_path(tenant, locator), admin_token))["flags"] == []


def test_clearing_a_flag_twice_or_under_another_level_fails(api, admin_token, tenant, account):
    locator = create(api, admin_token, tenant, auto(account))["locator"]
    flag = ok(call(api, "POST", flags_path(tenant, locator, "/block"), admin_token, {}))["flags"][0]

    assert_error(
        call(api, "DELETE", flags_path(tenant, locator, f"/info/{flag['locator']}"), admin_token),
        404,
        "underwritingFlag.not_found",
    )
    ok(call(api, "DELETE", flags_path(tenant, locator, f"/block/{flag['locator']}"), admin_token))
    assert_error(
        call(api, "DELETE", flags_path(tenant, locator, f"/block/{flag['locator']}"), admin_token),
        409,
        "underwritingFlag.cleared",
    )


# --- previews ------------------------------------------------------------------------------------


def test_previews_validate_and_price_a_quote_that_is_never_stored(api, admin_token, tenant, account):
    validated = call(api, "POST", quotes(tenant, "/validatePreview"), admin_token, auto(account))
    priced = ok(call(api, "POST", quotes(tenant, "/pricePreview"), admin_token, auto(account)))
    failing = ok(
        call(
            api,
            "POST",
            quotes(tenant, "/validatePreview"),
            admin_token,
            auto(account, vehicle(vin="00000000000000001")),
        )
    )
    crashing = ok(
        call(api, "POST", quotes(tenant, "/pricePreview"), admin_token, auto(account, vehicle(vin="CRASH000000000001")))
    )

    assert QUOTE_FIELDS <= set(ok(validated))
    assert ok(validated)["quoteState"] == "validated"
    assert "quoteNumber" not in ok(validated)
    assert (priced["quoteState"], [c["amount"] for c in priced["items"]]) == ("priced", [1200, 25])
    assert (failing["quoteState"], errors_of(failing["validationResult"])) == ("draft", ["the VIN is not a real one"])
    assert (crashing["quoteState"], crashing["items"], crashing["validationResult"]["success"]) == ("draft", [], False)
    assert event_types(api, admin_token, tenant, validated) == []
    assert ok(call(api, "GET", quotes(tenant, "/list"), admin_token))["items"] == []


def test_a_preview_naming_what_does_not_exist_is_a_400(api, admin_token, tenant, account):
    assert_error(
        call(api, "POST", quotes(tenant, "/pricePreview"), admin_token, auto(account, productName="Boats")),
        400,
        "quote.unknown_product",
    )
