"""What a lookup costs: one DynamoDB read at most, none when this process read the row before, and a
new version is seen at once by the process that stored it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.tables import cache, service
from tests.api.tables.support import BANDS, RATES_V1, RATES_V2, create, record, replace, tables_tenant, value_of
from tests.builders import system_ctx
from tests.support.api import ok


@pytest.fixture
def rates(api, admin_token):
    tenant = tables_tenant(api, admin_token)
    ok(create(api, admin_token, tenant, "table", "Rates2026", "Rates", RATES_V1))
    ok(create(api, admin_token, tenant, "rangeTable", "Bands2026", "AgeBands", BANDS))
    return tenant


def test_a_lookup_reads_one_row_once_and_then_never_again(rates, ddb_calls):
    ctx = system_ctx().for_tenant(rates)
    ddb_calls.clear()

    assert service.lookup(ctx, "Rates", ["CA", "18"]) == {"factor": Decimal("1.80"), "note": "young"}
    assert ddb_calls == ["GetItem"]
    ddb_calls.clear()
    assert service.lookup(ctx, "Rates", ["CA", "18"])["factor"] == Decimal("1.80")
    assert service.lookup(ctx, "Rates", ["TX", "18"]) is None
    assert ddb_calls == ["GetItem"]  # the absent key, once
    ddb_calls.clear()
    assert service.lookup(ctx, "Rates", ["TX", "18"]) is None
    assert service.range_lookup(ctx, "AgeBands", ["CA"], 30)["factor"] == Decimal("1.0")
    assert service.range_lookup(ctx, "AgeBands", ["CA"], 70)["factor"] == Decimal("1.3")  # same item
    assert ddb_calls == ["GetItem"]


def test_a_cold_process_reads_the_selection_record_first_and_a_stale_one_refreshes_with_the_row(
    rates, ddb_calls, clock
):
    ctx = system_ctx().for_tenant(rates)
    cache.clear()
    ddb_calls.clear()

    service.lookup(ctx, "Rates", ["CA", "18"])
    assert ddb_calls == ["GetItem", "GetItem"]
    clock.advance(seconds=cache.SELECTION_TTL_SECONDS)
    ddb_calls.clear()
    assert service.lookup(system_ctx().for_tenant(rates), "Rates", ["CA", "30"])["factor"] == Decimal("1.00")
    assert ddb_calls == ["BatchGetItem"]
    clock.advance(seconds=cache.SELECTION_TTL_SECONDS)
    ddb_calls.clear()
    service.lookup(system_ctx().for_tenant(rates), "Rates", ["CA", "30"])
    assert ddb_calls == ["GetItem"]  # the row is known: only the selection record is read again


def test_over_http_a_cached_lookup_costs_only_authentication(api, admin_token, rates, ddb_calls):
    ddb_calls.clear()
    assert value_of(record(api, admin_token, rates, "table", "Rates", key=["CA", "18"]))["factor"] == Decimal("1.80")
    first = list(ddb_calls)
    ddb_calls.clear()
    assert value_of(record(api, admin_token, rates, "table", "Rates", key=["CA", "18"]))["factor"] == Decimal("1.80")
    cached = list(ddb_calls)

    assert first == cached + ["GetItem"]  # what authentication reads, plus the row the first time


def test_the_process_that_stores_a_new_version_answers_from_it_at_once(api, admin_token, rates, ddb_calls, clock):
    ctx = system_ctx().for_tenant(rates)
    service.lookup(ctx, "Rates", ["CA", "18"])
    clock.advance(seconds=1)
    ok(replace(api, admin_token, rates, "table", "Rates2026", RATES_V2))
    ddb_calls.clear()

    assert service.lookup(system_ctx().for_tenant(rates), "Rates", ["CA", "18"])["factor"] == Decimal("1.75")
    assert ddb_calls == ["GetItem"]  # the new version's row; its selection came with the upload
