"""codec.Document: an element tree or a transaction's charges stored as one binary attribute, read back as the
nested maps it replaces read (benchmarks/README.md, "Issue 28 at stop 44")."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest

from chalicelib.core.errors import InvalidRequest
from chalicelib.storage import codec, keys, table

TREE = {
    "locator": "01ABC",
    "data": {"value": Decimal("12500.50"), "count": 3, "big": Decimal("1E+5"), "flag": True, "none": None},
    "names": ["é", "x" * 10],
    "at": datetime(2026, 2, 1, 5, tzinfo=timezone.utc),
    "elements": [{"locator": "01ABD", "data": {}, "elements": []}],
}


@pytest.mark.parametrize("tree", [TREE, {**TREE, "padding": "p" * (codec.COMPRESS_FROM * 2)}])
def test_a_document_reads_back_as_its_maps_read(tree):
    as_maps = codec.deserialize(codec.serialize({"element": tree}))
    as_document = codec.serialize({"element": codec.Document(tree)})

    assert list(as_document["element"]) == ["B"]
    assert codec.deserialize(as_document) == as_maps
    if "padding" in tree:  # compressed
        assert codec.item_size(as_document) < codec.item_size(codec.serialize({"element": tree})) / 10


def test_a_document_stored_and_read_through_the_gateway_and_a_record_stored_as_maps_before(tenant):
    scope = keys.tenant_scope(tenant)
    stored, before = keys.Key(scope + "DOC", "NEW"), keys.Key(scope + "DOC", "OLD")
    table.gateway().transact(
        scope,
        [
            table.put({**stored.as_dict(), "element": codec.Document(TREE)}),
            table.put({**before.as_dict(), "element": TREE}),
        ],
    )

    assert table.gateway().get(scope, stored) == table.gateway().get(scope, before) | stored.as_dict()


def test_a_number_a_document_cannot_store_is_a_client_error():
    with pytest.raises(InvalidRequest) as refused:
        codec.serialize({"element": codec.Document({"amount": Decimal("1" + "0" * 39 + "1")})})
    assert refused.value.code == "request.number_out_of_range"


@pytest.mark.parametrize("padding", [0, codec.COMPRESS_FROM * 2], ids=["as JSON", "compressed"])
def test_a_snapshot_restores_a_document_under_its_fresh_locators(tenant, padding):
    """tests/support/snapshots.py: a document's locators are replaced in its JSON, and it is written again as
    codec writes it (a compressed one cannot be replaced as text)."""
    from chalicelib.core.ids import new_locator
    from tests.support.snapshots import Snapshot

    scope = keys.tenant_scope(tenant)
    with Snapshot.record() as snapshot:
        made = new_locator()
        tree = {**TREE, "locator": made, "elements": [{"locator": made, "padding": "p" * padding}]}
        table.gateway().transact(
            scope, [table.put({**keys.Key(scope + made, "DOC").as_dict(), "element": codec.Document(tree)})]
        )
    fresh = snapshot.restore()[made]
    stored = snapshot.items[0]["element"]["B"][:1]

    copied = table.gateway().get(scope, keys.Key(scope + fresh, "DOC"))
    assert stored == (codec.DOCUMENT_ZLIB if padding else codec.DOCUMENT_JSON)
    assert copied is not None and copied["element"]["locator"] == copied["element"]["elements"][0]["locator"] == fresh
    assert copied["element"]["data"] == TREE["data"] and copied["element"]["names"] == TREE["names"]
    assert table.gateway().get(scope, keys.Key(scope + made, "DOC"))["element"]["locator"] == made
