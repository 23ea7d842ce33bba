"""An account whose `data` would not fit in one record (core/records.py) answers 413 `account.too_large` on
every write that takes data, a code each of those routes declares, and nothing is stored or changed."""

from __future__ import annotations

from tests.api.accounts.support import accounts, create, person, person_data
from tests.support.api import assert_error, call, ok

HUGE = "x" * 310_000


def test_data_too_large_for_a_record_is_a_413_on_create_update_and_replace(api, admin_token, tenant):
    refused = assert_error(
        call(api, "POST", accounts(tenant), admin_token, person(data=person_data(firstName=HUGE))),
        413,
        "account.too_large",
    )
    assert refused["message"].startswith("The account would take ")
    assert ok(call(api, "GET", accounts(tenant, "/list"), admin_token))["items"] == []

    account = create(api, admin_token, tenant)
    path = accounts(tenant, f"/{account['locator']}")
    before = ok(call(api, "GET", path, admin_token))
    assert_error(call(api, "PATCH", path, admin_token, {"setData": {"firstName": HUGE}}), 413, "account.too_large")
    assert_error(
        call(api, "PUT", path, admin_token, person(data=person_data(firstName=HUGE))), 413, "account.too_large"
    )
    assert ok(call(api, "GET", path, admin_token)) == before
