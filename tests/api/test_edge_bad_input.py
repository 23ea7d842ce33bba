"""Input that used to answer 500 (issue 10): JSON nested too deep, lone surrogates, numbers no store can
hold, configuration JSON nested 100,000 deep, and amounts beyond what money can be. Each is a 400 in our
error body, or the validation result of the flow that met it, and nothing is written."""

from __future__ import annotations

import io
import zipfile
from decimal import Decimal

import pytest

from chalicelib.core.money import MAX_AMOUNT, round_money
from tests.api.quotes.support import START, errors_of, new_account, vehicle
from tests.support.api import assert_error, call, ok
from tests.support.configs import QUOTE_PLUGINS, configured_tenant, package, policy_model, quotes_tenant

DEEP = 1_000
PERSON = {
    "firstName": "Ada",
    "lastName": "Lovelace",
    "email": "ada@example.com",
    "address": {"line1": "1 Main St", "city": "Springfield", "postcode": "12345"},
}


def _post_raw(api, path: str, body: bytes, token: str | None = None, content_type: str = "application/json"):
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return api.http.post(path, body=body, headers=headers)


def _nested(depth: int) -> bytes:
    return b'{"grant_type":"password","username":' + b"[" * depth + b"]" * depth + b',"password":"x"}'


# --- JSON nesting ------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [DEEP, 100_000])
def test_deep_json_is_refused_before_sign_in(api, depth):
    body = assert_error(_post_raw(api, "/auth/token", _nested(depth)), 400, "request.too_deep")

    assert body["message"] == "The request body nests objects and arrays more than 32 deep"


def test_the_depth_limit_counts_every_object_and_array(api):
    within = _post_raw(api, "/auth/token", _nested(31))  # the body's object and 31 arrays
    beyond = _post_raw(api, "/auth/token", _nested(32))

    assert within.status_code == 400 and b"request.too_deep" not in within.body, within.body
    assert_error(beyond, 400, "request.too_deep")


def test_deep_json_is_refused_on_an_authenticated_route(api, admin_token, tenant):
    body = b'{"type":"PersonAccount","data":' + b'{"a":' * DEEP + b"1" + b"}" * DEEP + b"}"

    assert_error(_post_raw(api, f"/policy/{tenant}/accounts", body, admin_token), 400, "request.too_deep")


# --- lone surrogates -------------------------------------------------------------------------------


def test_a_lone_surrogate_in_a_sign_in_username_is_a_400_naming_the_field(api):
    response = _post_raw(api, "/auth/token", b'{"grant_type":"password","username":"ada\\ud800","password":"x"}')

    body = assert_error(response, 400, "request.malformed_text")
    assert body["fieldErrors"] == [{"field": "username", "message": "must be Unicode text"}]


def test_a_lone_surrogate_in_a_user_name_is_a_400_and_creates_no_user(api, admin_token):
    response = _post_raw(
        api, "/auth/users", b'{"userName":"\\udc00ada@example.com","firstName":"A","lastName":"B"}', admin_token
    )

    body = assert_error(response, 400, "request.malformed_text")
    assert body["fieldErrors"] == [{"field": "userName", "message": "must be Unicode text"}]


def test_a_lone_surrogate_in_an_account_name_or_key_is_a_400_and_creates_no_account(api, admin_token):
    tenant = configured_tenant(api, admin_token)
    in_value = b'{"type":"PersonAccount","data":{"firstName":"\\ud83d","lastName":"Lovelace"}}'
    in_key = b'{"type":"PersonAccount","data":{"\\udfff":"Ada"}}'

    value = assert_error(
        _post_raw(api, f"/policy/{tenant}/accounts", in_value, admin_token), 400, "request.malformed_text"
    )
    assert_error(_post_raw(api, f"/policy/{tenant}/accounts", in_key, admin_token), 400, "request.malformed_text")

    assert value["fieldErrors"] == [{"field": "data.firstName", "message": "must be Unicode text"}]
    assert ok(call(api, "GET", f"/policy/{tenant}/accounts/list", admin_token))["items"] == []


def test_a_surrogate_pair_is_ordinary_text(api, admin_token):
    tenant = configured_tenant(api, admin_token)
    body = b'{"type":"PersonAccount","data":{"firstName":"Ada \\ud83d\\ude00","lastName":"Lovelace"}}'

    created = ok(_post_raw(api, f"/policy/{tenant}/accounts", body, admin_token))

    assert created["data"]["firstName"] == "Ada \U0001f600"


# --- numbers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("number", [b"1e400", b"-1E-400", b"1" + b"0" * 38 + b".5", b"1" + b"0" * 40])
def test_a_number_no_store_can_hold_in_account_data_is_refused_not_dropped(api, admin_token, number):
    tenant = configured_tenant(api, admin_token)
    body = b'{"type":"PersonAccount","data":{"firstName":"Ada","lastName":"Lovelace","income":' + number + b"}}"

    refused = assert_error(
        _post_raw(api, f"/policy/{tenant}/accounts", body, admin_token), 400, "request.number_out_of_range"
    )

    assert [error["field"] for error in refused["fieldErrors"]] == ["data.income"]
    assert ok(call(api, "GET", f"/policy/{tenant}/accounts/list", admin_token))["items"] == []


def test_the_largest_storable_numbers_still_reach_the_data_checks(api, admin_token):
    tenant = configured_tenant(api, admin_token)
    data = {**PERSON, "income": Decimal("9" * 36 + ".99")}

    created = ok(call(api, "POST", f"/policy/{tenant}/accounts", admin_token, {"type": "PersonAccount", "data": data}))

    assert created["data"]["income"] == Decimal("9" * 36 + ".99")


# --- configuration JSON ----------------------------------------------------------------------------


def _deep_package(depth: int = 100_000) -> bytes:
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(package(policy_model()))) as source,
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
    ):
        for info in source.infolist():
            archive.writestr(info, source.read(info))
        archive.writestr("products/Deep/config.json", '{"data":' + "[" * depth + "]" * depth + "}")
    return buffer.getvalue()


def _config_routes(tenant: str) -> list[str]:
    return [
        "/config/createTenant",
        "/config/validateConfig",
        "/config/formatConfig",
        f"/config/{tenant}/deployments/deploy",
        f"/config/{tenant}/deployments/validate",
    ]


@pytest.mark.parametrize("depth", [100, 100_000])
def test_configuration_json_nested_too_deep_is_a_400_on_every_package_route(api, admin_token, depth):
    tenant = configured_tenant(api, admin_token)
    body = _deep_package(depth)

    for path in _config_routes(tenant):
        response = api.http.post(
            path, body=body, headers={"Authorization": f"Bearer {admin_token}", "Content-Type": "application/zip"}
        )
        refused = assert_error(response, 400, "config.package_invalid_json")
        assert refused["message"] == "products/Deep/config.json: nests objects and arrays more than 32 deep", path


def test_a_lone_surrogate_in_configuration_json_is_a_400(api, admin_token):
    model = policy_model()
    model["products"]["Homeowners"]["displayName"] = "\ud800"
    body = package(model)

    response = api.http.post(
        "/config/validateConfig",
        body=body,
        headers={"Authorization": f"Bearer {admin_token}", "Content-Type": "application/zip"},
    )

    refused = assert_error(response, 400, "config.package_invalid_json")
    assert "not Unicode text" in refused["message"]


def test_a_diff_against_configuration_json_nested_too_deep_is_a_400(api, admin_token):
    tenant = configured_tenant(api, admin_token)
    config = "[" * 100_000 + "]" * 100_000

    response = call(api, "GET", f"/config/{tenant}/deployments/diff?config={config}", admin_token)

    refused = assert_error(response, 400, "request.invalid")
    assert refused["fieldErrors"] == [
        {"field": "config", "message": "Value error, nests objects and arrays more than 32 deep"}
    ]


# --- money -------------------------------------------------------------------------------------------

RATE_BY_VALUE = QUOTE_PLUGINS.replace('"rate": base * band["factor"]', '"rate": vehicle["data"]["value"]')
HUGE_RATE = QUOTE_PLUGINS.replace('"rate": base * band["factor"]', '"rate": 10 ** 35')


@pytest.mark.parametrize(
    "plugins, value, message",
    [
        (HUGE_RATE, "12000.50", "items[0]: 1.200000E+36 is too large an amount of money (the limit is 1E+30)"),
        (RATE_BY_VALUE, "9" * 38, "elements[0].data.value: is a number outside the supported range"),
    ],
)
def test_a_charge_beyond_any_amount_of_money_is_a_validation_result_not_a_500(
    api, admin_token, plugins, value, message
):
    tenant = quotes_tenant(api, admin_token, plugins=plugins)
    account = new_account(api, admin_token, tenant)
    body = _quote(account, value)

    preview = ok(call(api, "POST", f"/policy/{tenant}/quotes/pricePreview", admin_token, body))
    quote = ok(call(api, "POST", f"/policy/{tenant}/quotes", admin_token, body))
    priced = ok(call(api, "PATCH", f"/policy/{tenant}/quotes/{quote['locator']}/price", admin_token))

    for result in (preview, priced):
        assert (result["quoteState"], result["validationResult"]["success"]) == ("draft", False)
        assert [m.split(" failed: ")[-1] for m in errors_of(result["validationResult"])] == [message]


def test_an_amount_beyond_the_default_decimal_precision_is_priced_to_the_cent(api, admin_token):
    tenant = quotes_tenant(api, admin_token, plugins=RATE_BY_VALUE)
    account = new_account(api, admin_token, tenant)
    value = Decimal(10) ** 25  # 1.2E+26 a year: 29 digits with the cents, more than Decimal's default 28

    priced = ok(call(api, "POST", f"/policy/{tenant}/quotes/pricePreview", admin_token, _quote(account, value)))

    assert priced["quoteState"] == "priced"
    assert [item["amount"] for item in priced["items"]] == [Decimal("120000000000000000000000000.00"), 25]


def _quote(account: str, value: object) -> dict:
    return {
        "productName": "PersonalAuto",
        "accountLocator": account,
        "startTime": START,
        "data": {"channel": "web"},
        "elements": [vehicle(value=Decimal(str(value)))],
    }


def test_round_money_rounds_every_amount_below_the_limit_exactly_and_refuses_the_rest():
    assert round_money(Decimal("9" * 29 + ".994"), "USD") == Decimal("9" * 29 + ".99")
    assert round_money(Decimal("-12345678901234567890123456789.005"), "USD") == Decimal(
        "-12345678901234567890123456789.01"
    )
    assert round_money(Decimal("2.5"), "JPY") == Decimal("3")
    for amount in (MAX_AMOUNT, -MAX_AMOUNT, Decimal("9" * 38), Decimal("1E+40"), Decimal("NaN")):
        with pytest.raises(ValueError):
            round_money(amount, "USD")
