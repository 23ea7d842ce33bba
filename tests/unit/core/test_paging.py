"""Offset/count paging: defaults, limits, and the 400 that names each bad parameter."""
from __future__ import annotations

import pytest

from chalicelib.core.errors import FieldError, InvalidRequest
from chalicelib.core.paging import ListQuery, ListResponse, Page, PageRequest


def test_missing_parameters_take_the_defaults():
    assert PageRequest.of(None, None) == PageRequest(0, 20)
    assert PageRequest() == PageRequest(0, 20)


@pytest.mark.parametrize("offset, count, max_count", [(0, 1, 100), (10_000, 100, 100), (5, 1000, 1000)])
def test_values_at_the_limits_are_accepted(offset, count, max_count):
    page = PageRequest.of(offset, count, max_count)

    assert (page.offset, page.count) == (offset, count)


@pytest.mark.parametrize("offset, count, max_count, problems", [
    (-1, 20, 100, [FieldError("offset", "must be between 0 and 10000")]),
    (10_001, 20, 100, [FieldError("offset", "must be between 0 and 10000")]),
    (0, 0, 100, [FieldError("count", "must be between 1 and 100")]),
    (0, 101, 100, [FieldError("count", "must be between 1 and 100")]),
    (0, 1001, 1000, [FieldError("count", "must be between 1 and 1000")]),
    (-1, 0, 100, [FieldError("offset", "must be between 0 and 10000"),
                  FieldError("count", "must be between 1 and 100")]),
])
def test_values_out_of_range_are_a_400_naming_each_field(offset, count, max_count, problems):
    with pytest.raises(InvalidRequest) as refused:
        PageRequest.of(offset, count, max_count)

    assert (refused.value.code, refused.value.message) == ("request.invalid", "Invalid paging parameters")
    assert refused.value.field_errors == problems


def test_a_page_carries_its_items_and_whether_the_list_is_complete():
    page = Page(items=["a", "b"], list_completed=False)

    assert (page.items, page.list_completed) == (["a", "b"], False)


def test_a_list_response_converts_each_item_and_keeps_whether_the_list_is_complete():
    response = ListResponse[str].of(Page(items=[1, 22], list_completed=True), lambda item: f"#{item}")

    assert response.model_dump() == {"listCompleted": True, "items": ["#1", "#22"]}


def test_a_list_query_pages_with_its_own_offset_and_count_within_the_lists_limit():
    assert ListQuery(offset=40, count=10).page() == PageRequest(40, 10)
    assert ListQuery().page() == PageRequest(0, 20)
    assert ListQuery(count=500).page(max_count=500) == PageRequest(0, 500)
    with pytest.raises(InvalidRequest) as refused:
        ListQuery(count=101).page()
    assert refused.value.field_errors == [FieldError("count", "must be between 1 and 100")]
