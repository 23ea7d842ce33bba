"""The precommit answer: element changes on elements of the request, anything else a plugin failure."""

from __future__ import annotations

import pytest

from chalicelib.plugins.contract import precommit_changes
from chalicelib.plugins.models import ElementChange, PluginFailure
from tests.unit.plugins.support import request


def test_changes_name_elements_of_the_request_and_default_their_maps_to_empty():
    answer = {
        "elements": [
            {"locator": "V1", "setData": {"value": 2}},
            {"locator": "C1", "removeCoverageTerms": {"Deductible": None}},
        ]
    }

    assert precommit_changes(answer, request()) == [
        ElementChange("V1", {"value": 2}, {}, {}, {}),
        ElementChange("C1", {}, {}, {}, {"Deductible": None}),
    ]
    assert precommit_changes({"elements": []}, request()) == []


@pytest.mark.parametrize(
    "answer, problem",
    [
        ({}, 'the answer must be {"elements": [...]}'),
        ({"elements": ["V1"]}, "elements[0] must be an object"),
        ({"elements": [{"setData": {}}]}, "elements[0]: locator must be a non-empty string"),
        ({"elements": [{"locator": "X9"}]}, "elements[0]: locator 'X9' is not an element of the request"),
        ({"elements": [{"locator": "V1", "setData": [1]}]}, "elements[0]: setData must be an object"),
    ],
)
def test_an_answer_of_the_wrong_shape_is_a_plugin_failure(answer, problem):
    with pytest.raises(PluginFailure) as failure:
        precommit_changes(answer, request())
    assert (failure.value.function, failure.value.reason) == ("precommit_Auto", "malformed")
    assert problem in failure.value.detail
