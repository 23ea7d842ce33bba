"""The codec through a real write and read: numbers stay exact Decimals, datetimes become ISO strings."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from enum import StrEnum

import pytest
from pydantic import BaseModel

from chalicelib.storage import codec, keys, table
from tests.storage.support import item, key


class Colour(StrEnum):
    RED = "red"


class Money(BaseModel):
    amount: Decimal
    currency: str


def stored(tenant, **attributes):
    """`attributes` written to DynamoDB and read back."""
    scope = keys.tenant_scope(tenant)
    table.gateway().write(scope, table.put(item(tenant, "codec", **attributes)))
    return codec.without_keys(table.gateway().get(scope, key(tenant, "codec")))


def test_decimals_stay_exact(tenant):
    back = stored(tenant, total=Decimal("0.1") + Decimal("0.2"), big=Decimal("12345678901234567890.123456789"))

    assert back["total"] == Decimal("0.3") and str(back["total"]) == "0.3"
    assert back["big"] == Decimal("12345678901234567890.123456789")


def test_integers_stay_integral_and_booleans_stay_booleans(tenant):
    back = stored(tenant, count=7, zero=0, flag=True, nothing=None)

    assert back["count"] == 7 and str(back["count"]) == "7"
    assert back["zero"] == 0
    assert back["flag"] is True
    assert back["nothing"] is None


def test_floats_are_converted_through_their_text(tenant):
    back = stored(tenant, rate=0.1, ratio=1.5)

    assert back["rate"] == Decimal("0.1")  # not 0.1000000000000000055511151231257827...
    assert back["ratio"] == Decimal("1.5")


def test_datetimes_are_stored_as_utc_iso_strings_with_z(tenant):
    at = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))

    back = stored(tenant, at=at, day=date(2026, 3, 1))

    assert back["at"] == "2026-03-01T10:00:00.123Z"
    assert back["day"] == "2026-03-01"


def test_nested_values_enums_and_models_are_stored_plainly(tenant):
    back = stored(
        tenant,
        data={"items": [1, Decimal("2.5"), {"c": Colour.RED}], "tags": ("a", "b")},
        price=Money(amount=Decimal("9.99"), currency="USD"),
    )

    assert back["data"] == {"items": [Decimal(1), Decimal("2.5"), {"c": "red"}], "tags": ["a", "b"]}
    assert back["price"] == {"amount": Decimal("9.99"), "currency": "USD"}


def test_a_value_the_codec_does_not_know_is_refused():
    with pytest.raises(TypeError):
        codec.plain({"x": object()})
