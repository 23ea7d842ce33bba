"""What DynamoDB cannot hold answers a client error, never a 500."""
from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.core.errors import InvalidRequest
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
