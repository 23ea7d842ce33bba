"""A tenant the tests copy (tests/support/configs.py fresh_tenant, tests/support/snapshots.py TenantSnapshot)
must be the tenant a build would have made: its records and objects its template's under fresh locators, the
process remembering of it what the build left remembered (the same DynamoDB calls for the same request), a
life of its own, and a build that cannot be copied built each time."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.configuration import cache as models
from chalicelib.settings import settings
from chalicelib.storage import clients
from tests.api.quotes.support import advance, auto, create, new_account, vehicle
from tests.support import configs
from tests.support.api import call, ok
from tests.support.snapshots import TenantSnapshot, _read


def _issued(api, token: str, tenant: str, ddb_calls: list[str]) -> tuple[list[str], list[tuple[str, Decimal]]]:
    """The DynamoDB calls of each step of issuing a quote, and what the price answered."""
    steps: list[list[str]] = []
    ddb_calls.clear()
    account = new_account(api, token, tenant)
    steps.append(list(ddb_calls))
    ddb_calls.clear()
    quote = create(api, token, tenant, auto(account, vehicle(value="30000")))
    steps.append(list(ddb_calls))
    prices: list[tuple[str, Decimal]] = []
    for step in ("validate", "price", "underwrite", "accept", "issue"):
        ddb_calls.clear()
        answer = ok(advance(api, token, tenant, quote["locator"], step))
        steps.append(list(ddb_calls))
        if step == "price":
            prices = [(item["chargeType"], item["amount"]) for item in answer["items"]]
    return [",".join(step) for step in steps], prices


@pytest.mark.parametrize("test_clock", [False, True], ids=["real time", "test clock"])
def test_a_copied_tenant_is_its_template_under_fresh_locators(api, admin_token, ddb_calls, monkeypatch, test_clock):
    monkeypatch.setattr(configs, "TENANT_SNAPSHOTS", {})
    built = configs.quotes_tenant(api, admin_token, test_clock=test_clock)
    (snapshot,) = configs.TENANT_SNAPSHOTS.values()
    assert isinstance(snapshot, TenantSnapshot), "the quotes tenant's build is one the tests can copy"
    assert snapshot.tenant == built and len(snapshot.items) >= 15 and len(snapshot.objects) == 4
    copy = configs.quotes_tenant(api, admin_token, test_clock=test_clock)
    assert copy == snapshot.restore_map[built] and copy != built

    back = {new: old for old, new in snapshot.restore_map.items()}
    restored_keys = [(item["PK"]["S"], item["SK"]["S"]) for item in snapshot._renamed(snapshot.restore_map)[0]]
    template_items = _read([(item["PK"]["S"], item["SK"]["S"]) for item in snapshot.items])
    assert template_items == snapshot.items, "restoring leaves the template as it was"
    copied = {(item["PK"]["S"], item["SK"]["S"]): item for item in _read(restored_keys)}
    assert len(copied) == len(snapshot.items)
    as_template = TenantSnapshot(copy, set(back), list(copied.values()), [], [])._renamed(back)[0]
    assert sorted(as_template, key=lambda item: (item["PK"]["S"], item["SK"]["S"])) == sorted(
        snapshot.items, key=lambda item: (item["PK"]["S"], item["SK"]["S"])
    )
    assert all(built not in str(item) for item in copied.values())

    s3, bucket = clients.s3(), settings().bucket_name
    for found in snapshot.objects:
        key = found.key.replace(built, copy)
        for old, new in snapshot.restore_map.items():
            key = key.replace(old, new)
        answer = s3.get_object(Bucket=bucket, Key=key)
        body = answer["Body"].read()
        expected = found.body.encode() if isinstance(found.body, str) else found.body
        for old, new in snapshot.restore_map.items():
            expected = expected.replace(old.encode(), new.encode())
        assert (body, answer["ContentType"]) == (expected, found.content_type)

    version = ok(call(api, "GET", f"/config/{copy}/deployments", admin_token))["metadata"]["latestVersion"]
    assert (
        version
        == snapshot.restore_map[
            ok(call(api, "GET", f"/config/{built}/deployments", admin_token))["metadata"]["latestVersion"]
        ]
    )
    assert models.get(copy, version) is not None, "the process holds the copy's model, as the build left it"

    on_built, on_copy = _issued(api, admin_token, built, ddb_calls), _issued(api, admin_token, copy, ddb_calls)
    assert on_copy == on_built, "the same requests cost the same DynamoDB calls and price the same"
    assert on_built[1] == [("premium", Decimal("1800.00")), ("tax", Decimal("25.00"))], (
        "rated from the tables: 100 x 1.5 x 12"
    )


def test_a_build_that_writes_outside_its_tenant_is_built_each_time(api, admin_token, monkeypatch):
    """A user without access to every tenant gets the new one in their own record, which is no record of the
    tenant's: the build is not copied, and each ask builds a tenant through the API again."""
    from tests.builders import new_user

    monkeypatch.setattr(configs, "TENANT_SNAPSHOTS", {})
    monkeypatch.setattr(configs, "NOT_COPIED", {})
    _, token = new_user(["tenants.create-tenant"], [])
    first = configs.configured_tenant(api, token)
    assert list(configs.TENANT_SNAPSHOTS.values()) == [None]
    ((problem,),) = configs.NOT_COPIED.values()
    assert problem.startswith("wrote outside the tenant") and "('SYS#USER#" in problem, problem
    second = configs.configured_tenant(api, token)
    assert second != first
    for tenant in (first, second):
        assert ok(call(api, "GET", f"/config/{tenant}/deployments", admin_token))["metadata"]["latestVersion"]
