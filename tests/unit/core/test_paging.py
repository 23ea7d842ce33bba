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


@pytest.mark.parametrize(
    "offset, count, max_count, problems",
    [
        (-1, 20, 100, [FieldError("offset", "must be between 0 and 10000")]),
        (10_001, 20, 100, [FieldError("offset", "must be between 0 and 10000")]),
        (0, 0, 100, [FieldError("count", "must be between 1 and 100")]),
        (0, 101, 100, [FieldError("count", "must be between 1 and 100")]),
        (0, 1001, 1000, [FieldError("count", "must be between 1 and 1000")]),
        (
            -1,
            0,
            100,
            [FieldError("offset", "must be between 0 and 10000"), FieldError("count", "must be between 1 and 100")],
        ),
    ],
)
def test_values_out_of_range_are_a_400_naming_each_field(offset, count, max_count, problems):
    with pytest.raises(InvalidRequest) as refused:
        PageRequest.of(offset, count, max_count)

    assert (refused.value.code, refused.value.message) == ("request.invalid", "Invalid paging parameters")
    assert refused.value.field_errors == problems


def test_a_page_carries_its_items_and_whether_the_list_is_complete():
    page = Page(items=["a", "b"], list_completed=False)

    assert (page.items, page.list_completed) == (["a", "b"], False)


@pytest.mark.parametrize(
    "offset, count, items, completed",
    [
        (0, 2, ["a", "b"], False),  # more follow
        (1, 2, ["b", "c"], True),  # the page ends where the list does
        (2, 5, ["c"], True),  # the page goes beyond the end
        (3, 1, [], True),  # past the end
    ],
)
def test_a_window_is_the_requested_slice_complete_when_nothing_follows(offset, count, items, completed):
    page = Page.window(("a", "b", "c"), PageRequest(offset, count))

    assert (page.items, page.list_completed) == (items, completed)


def test_a_window_of_a_read_one_item_deeper_than_the_page_is_incomplete_by_that_item():
    read = ["a", "b", "c"]  # offset 1 + count 1 + 1

    assert Page.window(read, PageRequest(1, 1)) == Page(["b"], False)
    assert Page.window(read[:2], PageRequest(1, 1)) == Page(["b"], True)


def test_a_list_response_answers_the_fields_a_list_has_besides_its_items():
    class Named(ListResponse[str]):
        name: str

    response = Named.of(Page(items=[1], list_completed=False), str, name="n")

    assert response.model_dump() == {"listCompleted": False, "items": ["1"], "name": "n"}


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
