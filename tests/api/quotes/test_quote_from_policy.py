"""A draft quote from a policy segment (POST /policies/{locator}/quote): what it copies from the policy
and the segment (the issuance's by default, or the one `date` picks by effective or issued time), static
data only on request, new locators, numbering and the event of any new quote, one read of the policy and
one write; bad input, permissions and tenants. The clock stands at 2026-01-15T09:30Z; the policies run a
year from 2026-02-01 (midnight in New York)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tests.api.quotes.support import (
    END,
    QUOTE_FIELDS,
    UNKNOWN,
    auto,
    new_account,
    of_type,
    quote_path,
    quotes,
    vehicle,
    walk,
)
from tests.builders import new_user
from tests.support.api import assert_error, call, event_types, events_of, ok
from tests.support.configs import package, quotes_model, quotes_tenant

D = Decimal
START = "2026-02-01T05:00:00.000Z"
AUGUST = "2026-08-01T04:00:00.000Z"
"""Midnight in New York (summer time): six whole months into the policy."""
SEPTEMBER = "2026-09-10T12:00:00Z"
CONTACT, BROKER = "01J00000000000000000000001", "01J00000000000000000000002"
MONTHLY = {"installmentPreferences": {"installmentWeights": [1], "cadence": "monthly"}}


def _model() -> dict[str, Any]:
    """quotes_model() with plans, regions, jurisdictions and static data to copy, and quotes numbered on
    creation."""
    model = quotes_model()
    model["delinquencyPlans"] = {"Standard": {"gracePeriodDays": 7}, "Lenient": {"gracePeriodDays": 30}}
    model["autoRenewalPlans"] = {"Yearly": {"generateAutoRenewals": True}}
    model["regions"] = {"West": {"numberingString": "W"}}
    model["jurisdictions"] = {"CA": {}, "NY": {}}
    model["products"]["PersonalAuto"]["numberingTrigger"] = "creation"
    model["products"]["PersonalAuto"]["staticData"] = {"agency": {"type": "string?"}, "agent": {"type": "string?"}}
    return model


@pytest.fixture
def tenant(api, admin_token) -> str:
    return quotes_tenant(api, admin_token, _model())


def _policy_path(tenant: str, locator: str, suffix: str = "") -> str:
    return f"/policy/{tenant}/policies/{locator}{suffix}"


def _issued(api, token, tenant, account, *vehicles, **fields) -> dict[str, Any]:
    """A PersonalAuto policy issued from a quote (one vehicle worth 12,000.50 by default: premium 100 a
    month, tax 25)."""
    quote = ok(call(api, "POST", quotes(tenant), token, auto(account, *vehicles, **fields)))
    issued = ok(call(api, "PATCH", quote_path(tenant, quote["locator"], "/issue"), token))
    return ok(call(api, "GET", _policy_path(tenant, issued["policyLocator"]), token))


def _from_policy(api, token, tenant, policy, query: str = "") -> Any:
    return call(api, "POST", _policy_path(tenant, policy, f"/quote{query}"), token)


def _segment(api, token, tenant, locator) -> dict[str, Any]:
    return ok(call(api, "GET", f"/policy/{tenant}/transactions/segments/{locator}", token))


def _priced(api, token, tenant, quote) -> list[tuple[str, Decimal]]:
    price = ok(call(api, "PATCH", quote_path(tenant, quote, "/price"), token))
    return sorted((item["chargeType"], D(str(item["amount"]))) for item in price["items"])


def _shape(element: dict[str, Any]) -> tuple[Any, ...]:
    """An element tree without its locators."""
    return (
        element["type"],
        element["category"],
        element["data"],
        element["coverageTerms"],
        tuple(_shape(child) for child in element["elements"]),
    )


def _issue_change(api, token, tenant, policy, effective, **data) -> dict[str, Any]:
    """A change of the policy's vehicle's data from `effective`, issued."""
    vehicle_element = of_type(_segment(api, token, tenant, policy["latestSegmentLocator"]), "Vehicle")[0]
    change = ok(
        call(
            api,
            "PATCH",
            _policy_path(tenant, policy["locator"], "/change"),
            token,
            [
                {"action": "params", "effectiveTime": effective},
                {"action": "modify", "staticLocator": vehicle_element["staticLocator"], "setData": data},
            ],
        )
    )
    return ok(call(api, "PATCH", f"/policy/{tenant}/transactions/{change['locator']}/issue", token))


# --- what is copied --------------------------------------------------------------------------------


def test_by_default_the_quote_copies_the_policy_and_its_issuance_segment(api, admin_token, tenant):
    account = new_account(api, admin_token, tenant)
    policy = _issued(
        api,
        admin_token,
        tenant,
        account,
        region="West",
        jurisdiction="CA",
        producerCode="P-7",
        billingLevel="policy",
        delinquencyPlanName="Standard",
        autoRenewalPlanName="Yearly",
        invoiceFeeAmount=5,
        preferences=MONTHLY,
        static={"agency": "North"},
        contacts=[{"contactLocator": CONTACT, "roles": ["primary"]}],
    )
    base = policy["locator"]
    # the policy as it is now, not as its quote was
    ok(
        call(
            api,
            "PATCH",
            _policy_path(tenant, base, "/delinquencyPlan"),
            admin_token,
            {"delinquencyPlanName": "Lenient"},
        )
    )
    ok(call(api, "PATCH", _policy_path(tenant, base, "/jurisdiction"), admin_token, {"jurisdiction": "NY"}))
    ok(
        call(
            api,
            "POST",
            _policy_path(tenant, base, "/contacts"),
            admin_token,
            {"contactLocator": BROKER, "roles": ["broker"]},
        )
    )
    segment = _segment(api, admin_token, tenant, policy["latestSegmentLocator"])

    response = _from_policy(api, admin_token, tenant, base)
    quote = ok(response)

    assert QUOTE_FIELDS <= set(quote)
    assert {
        name: quote.get(name)
        for name in (
            "quoteState",
            "productName",
            "accountLocator",
            "startTime",
            "endTime",
            "duration",
            "durationBasis",
            "timezone",
            "currency",
            "billingLevel",
            "region",
            "jurisdiction",
            "producerCode",
            "delinquencyPlanName",
            "autoRenewalPlanName",
            "invoiceFeeAmount",
            "preferences",
            "contacts",
            "static",
            "quoteNumber",
            "policyLocator",
            "policyNumber",
            "validationResult",
            "createdAt",
        )
    } == {
        "quoteState": "draft",
        "productName": "PersonalAuto",
        "accountLocator": account,
        "startTime": START,
        "endTime": END,
        "duration": 12,
        "durationBasis": "months",
        "timezone": "America/New_York",
        "currency": "USD",
        "billingLevel": "policy",
        "region": "West",
        "jurisdiction": "NY",
        "producerCode": "P-7",
        "delinquencyPlanName": "Lenient",
        "autoRenewalPlanName": "Yearly",
        "invoiceFeeAmount": 5,
        "preferences": MONTHLY,
        "contacts": [
            {"contactLocator": CONTACT, "roles": ["primary"]},
            {"contactLocator": BROKER, "roles": ["broker"]},
        ],
        "static": {},
        "quoteNumber": "QPA-000002",
        "policyLocator": None,
        "policyNumber": None,
        "validationResult": {"success": True, "validationItems": []},
        "createdAt": "2026-01-15T09:30:00.000Z",
    }
    assert _shape(quote["element"]) == _shape(segment["element"])
    assert of_type(quote, "Vehicle")[0]["data"] == {"vin": "1HGCM82633A004352", "value": D("12000.50")}
    assert event_types(api, admin_token, tenant, response) == ["policy.quote.create"]
    assert events_of(api, admin_token, tenant, response)[0]["data"] == {"quoteLocator": quote["locator"]}
    assert ok(call(api, "GET", quote_path(tenant, quote["locator"]), admin_token)) == quote
    # the same coverage for the same span: the same price as the policy's issuance
    assert _priced(api, admin_token, tenant, quote["locator"]) == [("premium", D("1200.00")), ("tax", D("25"))]


def test_every_element_gets_new_locators_and_new_static_locators(api, admin_token, tenant):
    policy = _issued(
        api,
        admin_token,
        tenant,
        new_account(api, admin_token, tenant),
        vehicle(),
        vehicle(vin="2HGCM82633A004353", value="30000"),
    )
    old = {
        value
        for element in walk(_segment(api, admin_token, tenant, policy["latestSegmentLocator"])["element"])
        for value in (element["locator"], element["staticLocator"])
    }

    quote = ok(_from_policy(api, admin_token, tenant, policy["locator"]))

    elements = walk(quote["element"])
    assert len(elements) == 5
    assert all(element["staticLocator"] == element["locator"] for element in elements)
    assert not old & {element["locator"] for element in elements}
    assert len({element["locator"] for element in elements}) == 5
    assert quote["element"]["parentLocator"] == quote["locator"]
    assert all(child["parentLocator"] == element["locator"] for element in elements for child in element["elements"])
    # the copy is a quote of its own: it issues as a new policy
    issued = ok(call(api, "PATCH", quote_path(tenant, quote["locator"], "/issue"), admin_token))
    assert issued["policyLocator"] != policy["locator"]
    assert issued["policyNumber"] == "PA-000002"


def test_static_data_is_copied_only_when_asked_for(api, admin_token, tenant):
    policy = _issued(api, admin_token, tenant, new_account(api, admin_token, tenant), static={"agency": "North"})[
        "locator"
    ]
    ok(call(api, "POST", _policy_path(tenant, policy, "/static"), admin_token, {"agent": "Ann"}))

    without = ok(_from_policy(api, admin_token, tenant, policy))
    explicitly_without = ok(_from_policy(api, admin_token, tenant, policy, "?includeStaticData=false"))
    with_static = ok(_from_policy(api, admin_token, tenant, policy, "?includeStaticData=true"))

    assert (without["static"], explicitly_without["static"]) == ({}, {})
    assert with_static["static"] == {"agency": "North", "agent": "Ann"}
    assert ok(call(api, "GET", quote_path(tenant, with_static["locator"], "/static"), admin_token)) == {
        "agency": "North",
        "agent": "Ann",
    }


# --- which segment ---------------------------------------------------------------------------------


def test_a_date_picks_the_segment_in_force_then(api, admin_token, tenant, clock):
    policy = _issued(api, admin_token, tenant, new_account(api, admin_token, tenant))
    clock.advance(days=1)
    _issue_change(api, admin_token, tenant, policy, AUGUST, value="25000")

    default = ok(_from_policy(api, admin_token, tenant, policy["locator"]))
    march = ok(_from_policy(api, admin_token, tenant, policy["locator"], "?date=2026-03-01T00:00:00Z"))
    september = ok(_from_policy(api, admin_token, tenant, policy["locator"], f"?date={SEPTEMBER}"))
    at_the_change = ok(_from_policy(api, admin_token, tenant, policy["locator"], f"?date={AUGUST}"))

    def span_and_value(quote):
        return quote["startTime"], quote["endTime"], quote["duration"], of_type(quote, "Vehicle")[0]["data"]["value"]

    assert span_and_value(default) == (START, END, 12, D("12000.50"))
    assert span_and_value(march) == (START, END, 12, D("12000.50"))
    assert span_and_value(september) == (AUGUST, END, 6, D("25000.00"))
    assert span_and_value(at_the_change) == span_and_value(september)
    # six months at 150 and the tax
    assert _priced(api, admin_token, tenant, september["locator"]) == [("premium", D("900.00")), ("tax", D("25"))]


def test_by_issued_time_the_date_picks_the_policy_as_it_was_issued_by_then(api, admin_token, tenant, clock):
    policy = _issued(api, admin_token, tenant, new_account(api, admin_token, tenant))
    clock.advance(days=1)
    _issue_change(api, admin_token, tenant, policy, AUGUST, value="25000")

    before = ok(
        _from_policy(api, admin_token, tenant, policy["locator"], "?date=2026-01-15T12:00:00Z&byIssuedTime=true")
    )
    after = ok(
        _from_policy(api, admin_token, tenant, policy["locator"], "?date=2026-01-16T09:30:00Z&byIssuedTime=true")
    )
    by_effective_time = ok(
        _from_policy(api, admin_token, tenant, policy["locator"], "?date=2026-03-01T00:00:00Z&byIssuedTime=false")
    )

    assert (before["startTime"], of_type(before, "Vehicle")[0]["data"]["value"]) == (START, D("12000.50"))
    assert (after["startTime"], of_type(after, "Vehicle")[0]["data"]["value"]) == (AUGUST, D("25000.00"))
    assert by_effective_time["startTime"] == START
    assert_error(
        _from_policy(api, admin_token, tenant, policy["locator"], "?date=2026-01-15T09:29:59Z&byIssuedTime=true"),
        404,
        "snapshot.not_found",
    )


def test_a_date_in_a_cancellation_gap_copies_the_coverage_it_removed(api, admin_token, tenant):
    policy = _issued(api, admin_token, tenant, new_account(api, admin_token, tenant))
    cancellation = ok(
        call(
            api,
            "PATCH",
            _policy_path(tenant, policy["locator"], "/cancel"),
            admin_token,
            {"action": "params", "effectiveTime": AUGUST},
        )
    )
    ok(call(api, "PATCH", f"/policy/{tenant}/transactions/{cancellation['locator']}/issue", admin_token))

    rewrite = ok(_from_policy(api, admin_token, tenant, policy["locator"], f"?date={SEPTEMBER}"))

    assert (rewrite["startTime"], rewrite["endTime"], rewrite["duration"]) == (AUGUST, END, 6)
    assert of_type(rewrite, "Vehicle")[0]["data"]["value"] == D("12000.50")
    assert rewrite["validationResult"] == {"success": True, "validationItems": []}


# --- bad input ---------------------------------------------------------------------------------------


def test_bad_input_is_a_clear_4xx_and_stores_nothing(api, admin_token, tenant):
    account = new_account(api, admin_token, tenant)
    policy = _issued(api, admin_token, tenant, account)["locator"]

    assert_error(_from_policy(api, admin_token, tenant, UNKNOWN), 404, "policy.not_found")
    assert_error(_from_policy(api, admin_token, tenant, UNKNOWN, f"?date={SEPTEMBER}"), 404, "policy.not_found")
    assert_error(_from_policy(api, admin_token, tenant, policy, "?date=notadate"), 400, "request.invalid")
    assert_error(_from_policy(api, admin_token, tenant, policy, "?byIssuedTime=maybe"), 400, "request.invalid")
    assert_error(_from_policy(api, admin_token, tenant, policy, "?includeStaticData=2"), 400, "request.invalid")
    assert_error(
        _from_policy(api, admin_token, tenant, policy, "?date=2026-01-31T00:00:00Z"), 404, "snapshot.not_found"
    )
    assert_error(_from_policy(api, admin_token, tenant, policy, f"?date={END}"), 404, "snapshot.not_found")

    listed = ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}/quotes/list", admin_token))
    assert len(listed["items"]) == 1  # the quote the policy was issued from


def test_a_product_the_configuration_no_longer_has_is_a_conflict_and_stores_nothing(api, admin_token, tenant):
    account = new_account(api, admin_token, tenant)
    policy = _issued(api, admin_token, tenant, account)["locator"]
    model = _model()
    model["products"]["PrivateAuto"] = model["products"].pop("PersonalAuto")
    response = api.http.post(
        f"/config/{tenant}/deployments/deploy",
        body=package(model),
        headers={
            "Authorization": f"Bearer {admin_token}",
            "Content-Type": "application/zip",
            "Accept": "application/json",
        },
    )
    assert ok(response)["deploymentResult"]["isSuccess"] is True

    assert_error(_from_policy(api, admin_token, tenant, policy), 409, "quote.product_not_configured")
    listed = ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}/quotes/list", admin_token))
    assert len(listed["items"]) == 1  # the quote the policy was issued from


# --- who may call it ---------------------------------------------------------------------------------


@pytest.mark.parametrize("permissions", [["policies.write"], ["policies.create-quote"]])
def test_either_permission_suffices(api, admin_token, tenant, permissions):
    policy = _issued(api, admin_token, tenant, new_account(api, admin_token, tenant))["locator"]
    token = new_user(permissions, [tenant])[1]

    assert ok(_from_policy(api, token, tenant, policy))["quoteState"] == "draft"


def test_other_permissions_and_no_token_are_refused(api, admin_token, tenant):
    policy = _issued(api, admin_token, tenant, new_account(api, admin_token, tenant))["locator"]

    assert_error(_from_policy(api, None, tenant, policy), 401, "auth.token_missing")
    for permissions in (["quotes.write", "quotes.create"], ["policies.read"]):
        token = new_user(permissions, [tenant])[1]
        assert_error(_from_policy(api, token, tenant, policy), 403, "auth.permission_denied")


def test_another_tenants_policy_is_not_found_and_its_tenant_is_forbidden(api, admin_token, tenant):
    policy = _issued(api, admin_token, tenant, new_account(api, admin_token, tenant))["locator"]
    other = quotes_tenant(api, admin_token, _model())
    caller = new_user(["*.*"], [other])[1]

    assert_error(_from_policy(api, caller, other, policy), 404, "policy.not_found")
    assert_error(_from_policy(api, caller, tenant, policy), 403, "auth.tenant_forbidden")
    assert ok(call(api, "GET", quotes(other, "/list"), admin_token))["items"] == []


# --- round trips ---------------------------------------------------------------------------------


def test_one_read_of_the_policy_and_one_write_however_many_elements(api, admin_token, tenant, ddb_calls):
    account = new_account(api, admin_token, tenant)
    small = _issued(api, admin_token, tenant, account)["locator"]
    large = _issued(api, admin_token, tenant, account, *[vehicle(vin=f"1HGCM8263{n:08d}") for n in range(20)])[
        "locator"
    ]
    made = []
    for policy in (small, large, small):
        ddb_calls.clear()
        ok(_from_policy(api, admin_token, tenant, policy, f"?date={SEPTEMBER}"))
        made.append(list(ddb_calls))

    assert made[1] == made[2]
    assert made[1].count("Query") == 1
    assert made[1].count("TransactWriteItems") == 1
    assert "Scan" not in made[1]
