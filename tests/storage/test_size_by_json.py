"""codec.fits_by_json, the shortcut of the item size check of every put: an item's JSON is never shorter than
the size DynamoDB counts for it, so what fits by its JSON fits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.storage import codec

names = st.text(min_size=1, max_size=8)
numbers = st.decimals(allow_nan=False, allow_infinity=False, places=4, min_value=-(10**12), max_value=10**12)
scalars = st.one_of(
    st.text(max_size=20).map(lambda text: {"S": text}),
    numbers.map(lambda number: {"N": str(number)}),
    st.booleans().map(lambda flag: {"BOOL": flag}),
    st.just({"NULL": True}),
    st.lists(st.text(max_size=5), max_size=3).map(lambda texts: {"SS": texts}),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda items: {"L": items}),
        st.dictionaries(names, inner, max_size=4).map(lambda fields: {"M": fields}),
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(names, values, min_size=1, max_size=6))
def test_an_items_json_is_never_shorter_than_its_size(item):
    import json

    assert codec.item_size(item) <= len(json.dumps(item))


def test_a_large_item_and_a_binary_take_the_counted_size():
    assert codec.fits_by_json({"PK": {"S": "x" * 1000}})
    assert not codec.fits_by_json({"PK": {"S": "x" * codec.MAX_ITEM_BYTES}})
    assert not codec.fits_by_json({"PK": {"B": b"x"}})  # JSON holds no bytes: item_size counts it
    assert not codec.fits_by_json({"PK": {"S": "é" * (codec.MAX_ITEM_BYTES // 3)}})  # 2 bytes each, 6 in JSON
