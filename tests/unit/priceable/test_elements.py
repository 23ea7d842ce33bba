"""Element trees: built from requests under the `contents` rules, changed, walked."""

from __future__ import annotations

from itertools import count
from typing import get_args

import pytest

from chalicelib.configuration.datamodel import ELEMENT_CATEGORIES, PRODUCT_CATEGORY
from chalicelib.configuration.resolve import resolve
from chalicelib.core.errors import InvalidRequest
from chalicelib.priceable import elements
from chalicelib.priceable.evaluation import catalog
from chalicelib.priceable.models import ElementCategory, ElementChanges, ElementInput, Entity
from tests.support.configs import policy_model

MODEL = catalog(resolve(policy_model()))
QUOTE = Entity("quote", "quote")


def L(number: int) -> str:
    """The `number`-th locator the tests' locator source gives (ULID-shaped)."""
    return f"01J{number:023d}"


def locators():
    numbers = count(1)
    return lambda: L(next(numbers))


def auto_tree():
    return elements.build_root(
        MODEL,
        "PersonalAuto",
        {"channel": "web"},
        {},
        [ElementInput(type="Vehicle", data={"vin": "x"}, elements=[ElementInput(type="Collision")])],
        locators(),
        entity=QUOTE,
    )


def test_a_tree_gets_locators_parents_and_categories():
    root = auto_tree()
    vehicle = root.elements[0]

    assert (root.locator, root.staticLocator, root.category, root.parentLocator) == (L(1), L(1), "product", None)
    assert (vehicle.locator, vehicle.category, vehicle.parentLocator, vehicle.data) == (
        L(2),
        "exposure",
        L(1),
        {"vin": "x"},
    )
    assert (vehicle.elements[0].type, vehicle.elements[0].parentLocator) == ("Collision", L(2))
    assert [e.locator for e in elements.walk(root)] == [L(1), L(2), L(3)]


def test_children_marked_with_an_exclamation_mark_are_created_and_a_given_static_locator_kept():
    root = elements.build_root(MODEL, "Homeowners", {}, {}, [], locators(), entity=QUOTE)
    given = elements.build_root(
        MODEL,
        "PersonalAuto",
        {},
        {},
        [ElementInput(type="Vehicle", staticLocator="01J0000000000000000000000S")],
        locators(),
        entity=QUOTE,
    )

    assert [e.type for e in elements.walk(root)] == ["Homeowners", "Dwelling"]
    assert given.elements[0].staticLocator == "01J0000000000000000000000S"


@pytest.mark.parametrize(
    "children, field",
    [
        ([ElementInput(type="Dwelling")], "elements[0].type"),
        ([ElementInput(type="Nope")], "elements[0].type"),
        ([ElementInput(type="BaseVehicle")], "elements[0].type"),
        (
            [ElementInput(type="Vehicle", elements=[ElementInput(type="Glass"), ElementInput(type="Fire")])],
            "elements[0].elements[1].type",
        ),
    ],
)
def test_a_type_the_parent_does_not_allow_is_a_400_naming_its_place(children, field):
    with pytest.raises(InvalidRequest) as raised:
        elements.build_root(MODEL, "PersonalAuto", {}, {}, children, locators(), entity=QUOTE)
    assert [error.field for error in raised.value.field_errors] == [field]


def test_elements_are_added_under_their_parent_and_removed_with_their_children():
    root = auto_tree()
    added = elements.add_elements(
        MODEL,
        root,
        [ElementInput(type="Glass", parentLocator=L(2)), ElementInput(type="Vehicle")],
        lambda: "NEW",
        entity=QUOTE,
    )
    removed = elements.remove_elements(root, [L(2)], entity=QUOTE)

    assert [(e.type, e.parentLocator) for e in elements.walk(added)] == [
        ("PersonalAuto", None),
        ("Vehicle", L(1)),
        ("Collision", L(2)),
        ("Glass", L(2)),
        ("Vehicle", L(1)),
    ]
    assert [e.type for e in elements.walk(root)] == ["PersonalAuto", "Vehicle", "Collision"]
    assert [e.locator for e in elements.walk(removed)] == [L(1)]
    with pytest.raises(InvalidRequest):
        elements.add_elements(
            MODEL, root, [ElementInput(type="Glass", parentLocator=L(9))], lambda: "NEW", entity=QUOTE
        )
    with pytest.raises(InvalidRequest):
        elements.remove_elements(root, [L(1)], entity=QUOTE)
    with pytest.raises(InvalidRequest):
        elements.remove_elements(root, [L(9)], entity=QUOTE)


def test_changes_remove_then_set_data_and_terms():
    root = auto_tree()
    changed = elements.change_elements(
        root,
        [
            ElementChanges(locator=L(2), setData={"value": 5}, removeData={"vin": ""}),
            ElementChanges(locator=L(3), setCoverageTerms={"Limit": "l50k"}),
        ],
        entity=QUOTE,
    )

    assert (changed.elements[0].data, changed.elements[0].elements[0].coverageTerms) == (
        {"value": 5},
        {"Limit": "l50k"},
    )
    assert root.elements[0].data == {"vin": "x"}
    with pytest.raises(InvalidRequest) as raised:
        elements.change_elements(root, [ElementChanges(locator=L(9))], entity=QUOTE)
    assert raised.value.field_errors[0].field == "elements[0].locator"


def test_ancestors_and_the_tree_as_plugins_read_it():
    root = auto_tree()

    assert [e.locator for e in elements.ancestors(root, L(3))] == [L(1), L(2)]
    assert elements.as_tree(root)["elements"][0] == {
        "locator": L(2),
        "staticLocator": L(2),
        "type": "Vehicle",
        "data": {"vin": "x"},
        "coverageTerms": {},
        "elements": [
            {
                "locator": L(3),
                "staticLocator": L(3),
                "type": "Collision",
                "data": {},
                "coverageTerms": {},
                "elements": [],
            }
        ],
    }


def test_merged_removes_then_sets_and_drops_nulls():
    assert elements.merged({"a": 1, "b": 2, "c": 3}, {"a": None}, {"b": None, "d": 4}) == {"c": 3, "d": 4}


def test_an_element_answers_exactly_the_categories_a_configuration_gives_its_types():
    assert set(get_args(ElementCategory)) == {*ELEMENT_CATEGORIES.values(), PRODUCT_CATEGORY}
