"""What DynamoDB cannot hold answers a client error, never a 500."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.core.errors import InvalidRequest, PayloadTooLarge
from chalicelib.storage import codec, keys, table
from tests.storage.support import item, key


def test_a_number_beyond_38_significant_digits_is_a_client_error():
    with pytest.raises(InvalidRequest) as refused:
        codec.serialize({"amount": Decimal("1" + "0" * 39 + "1")})
    assert refused.value.code == "request.number_out_of_range"


def test_a_number_with_an_exponent_out_of_range_is_a_client_error():
    with pytest.raises(InvalidRequest) as refused:
        codec.serialize_value(Decimal("1E+999"))
    assert refused.value.code == "request.number_out_of_range"


def test_reading_a_key_longer_than_dynamodb_allows_finds_nothing_without_calling_it(tenant, ddb_calls):
    scope = keys.tenant_scope(tenant)
    oversized = key(tenant, "x", sk="S" * (table.RANGE_KEY_MAX_BYTES + 1))

    assert table.gateway().get(scope, oversized) is None
    assert table.gateway().batch_get(scope, [oversized]) == []
    assert ddb_calls == []


def test_writing_a_key_longer_than_dynamodb_allows_is_a_client_error(tenant):
    scope = keys.tenant_scope(tenant)
    with pytest.raises(InvalidRequest) as refused:
        table.gateway().transact(scope, [table.put_new(item(tenant, "y", sk="S" * (table.RANGE_KEY_MAX_BYTES + 1)))])
    assert refused.value.code == "request.value_too_long"


def test_item_size_counts_as_dynamodb_does():
    """Names and strings by their UTF-8 bytes, a number by a byte per two significant digits and one more, a
    map or list 3 bytes and one more per element, a boolean or null one byte."""
    assert codec.item_size(codec.serialize({"ab": "héllo"})) == 2 + 6
    assert codec.item_size(
        codec.serialize({"n": Decimal("12345"), "z": Decimal("0.00120"), "e": Decimal("1E+40")})
    ) == (1 + 4) + (1 + 2) + (1 + 2)
    assert codec.item_size(codec.serialize({"m": {"k": True, "kk": None}, "l": ["a", "bc"]})) == (
        1 + 3 + (1 + 1 + 1) + (2 + 1 + 1)
    ) + (1 + 3 + (1 + 1) + (1 + 2))


def test_an_item_larger_than_dynamodb_holds_is_refused_before_it_is_sent(tenant, ddb_calls):
    scope = keys.tenant_scope(tenant)
    fits = item(tenant, "fits", text="x" * 400_000)
    table.gateway().transact(scope, [table.put_new(fits)])
    ddb_calls.clear()
    for op in (
        table.put_new(item(tenant, "big", text="x" * 409_600)),
        table.update(key(tenant, "fits"), {"text": "y" * 409_600}),
    ):
        with pytest.raises(PayloadTooLarge) as refused:
            table.gateway().transact(scope, [op])
        assert refused.value.code == "record.too_large" and "400 KB" in refused.value.message
    assert ddb_calls == []
    assert table.gateway().get(scope, key(tenant, "fits"))["text"] == "x" * 400_000


def test_an_update_that_grows_an_item_past_the_limit_is_refused_as_dynamodb_refuses_it(tenant):
    """The estimate sees what an update sets; DynamoDB's refusal of the grown item is answered the same way."""
    scope = keys.tenant_scope(tenant)
    table.gateway().transact(scope, [table.put_new(item(tenant, "grows", first="x" * 300_000))])
    for write in (table.gateway().write, lambda scope, op: table.gateway().transact(scope, [op])):
        with pytest.raises(PayloadTooLarge) as refused:
            write(scope, table.update(key(tenant, "grows"), {"second": "y" * 200_000}))
        assert refused.value.code == "record.too_large"
    assert "second" not in table.gateway().get(scope, key(tenant, "grows"))
