"""Element trees on a small catalog of its own (no configuration): what is stored where, the exact
400s of a tree no configuration allows, and copies that leave the original alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count
from typing import Any

import pytest

from chalicelib.core.errors import InvalidRequest
from chalicelib.priceable import elements
from chalicelib.priceable.models import Element, ElementChanges, ElementInput, Entity

WIDGET = Entity("quote", "widget")


@dataclass(frozen=True)
class Entry:
    name: str
    auto_create: bool = False


@dataclass(frozen=True)
class Kind:
    category: str
    contents: tuple[Entry, ...] = ()
    definition: dict[str, Any] = field(default_factory=dict)


BOX = Kind("product", (Entry("Item"), Entry("Lid", auto_create=True), Entry("Shape")))
TYPES = {
    "Item": Kind("exposure", (Entry("Part"), Entry("Bolt"))),
    "Lid": Kind("exposure", definition={"abstract": False}),
    "Part": Kind("coverage"),
    "Bolt": Kind("coverage"),
    "Shape": Kind("exposure", definition={"abstract": True}),
}
CATALOG = elements.Catalog(
    product={"Box": BOX, "Crate": Kind("product", (Entry("Shape", auto_create=True),))}.get, types=TYPES
)


def L(number: int) -> str:
    return f"01J{number:023d}"


def locators():
    numbers = count(1)
    return lambda: L(next(numbers))


def box(*children: ElementInput) -> Element:
    return elements.build_root(
        CATALOG, "Box", {"colour": "red"}, {"Limit": "high"}, list(children), locators(), entity=WIDGET
    )


def invalid(call, *args, **kwargs) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as raised:
        call(*args, **kwargs)
    return raised.value


def test_the_root_and_its_children_keep_their_data_and_coverage_terms():
    root = box(ElementInput(type="Item", data={"size": 2}, coverageTerms={"Deductible": "low"}))

    assert (root.type, root.category, root.data, root.coverageTerms) == (
        "Box",
        "product",
        {"colour": "red"},
        {"Limit": "high"},
    )
    item = root.elements[0]
    assert (item.type, item.data, item.coverageTerms, item.parentLocator) == (
        "Item",
        {"size": 2},
        {"Deductible": "low"},
        L(1),
    )


def test_a_marked_child_is_created_beside_other_children_and_not_twice():
    assert [e.type for e in box(ElementInput(type="Item")).elements] == ["Item", "Lid"]
    assert [e.type for e in box(ElementInput(type="Lid")).elements] == ["Lid"]


def test_a_name_that_is_not_a_product_is_a_programming_error():
    with pytest.raises(ValueError, match="^Nope is not a product$"):
        elements.build_root(CATALOG, "Nope", {}, {}, [], locators(), entity=WIDGET)


@pytest.mark.parametrize(
    "child, where, message",
    [
        (ElementInput(type="Nope"), "elements[0].type", "Nope is not a configured element type"),
        (ElementInput(type="Shape"), "elements[0].type", "Shape is abstract"),
        (ElementInput(type="Part"), "elements[0].type", "Part is not allowed in Box (contents: Item, Lid, Shape)"),
        (
            ElementInput(type="Item", elements=[ElementInput(type="Bolt"), ElementInput(type="Lid")]),
            "elements[0].elements[1].type",
            "Lid is not allowed in Item (contents: Bolt, Part)",
        ),
        (
            ElementInput(type="Lid", elements=[ElementInput(type="Part")]),
            "elements[0].elements[0].type",
            "Part is not allowed in Lid (contents: none)",
        ),
    ],
)
def test_a_tree_no_configuration_allows_is_a_400_naming_the_place_and_the_reason(child, where, message):
    error = invalid(box, child)
    assert (error.code, error.message) == ("quote.invalid_element", f"Invalid element: {message}")
    assert [(e.field, e.message) for e in error.field_errors] == [(where, message)]


def test_a_marked_child_of_an_abstract_type_is_refused_at_its_parents_place():
    error = invalid(elements.build_root, CATALOG, "Crate", {}, {}, [], locators(), entity=WIDGET)
    assert [(e.field, e.message) for e in error.field_errors] == [("elements.type", "Shape is abstract")]


def test_added_elements_are_refused_with_the_users_code_and_their_place_in_the_body():
    root = box(ElementInput(type="Item"))

    unknown_parent = invalid(
        elements.add_elements, CATALOG, root, [ElementInput(type="Part", parentLocator=L(9))], locators(), entity=WIDGET
    )
    not_allowed = invalid(
        elements.add_elements,
        CATALOG,
        root,
        [ElementInput(type="Part", parentLocator=L(2)), ElementInput(type="Part")],
        lambda: L(7),
        entity=WIDGET,
    )

    assert (unknown_parent.code, [(e.field, e.message) for e in unknown_parent.field_errors]) == (
        "quote.invalid_element",
        [("body[0].parentLocator", f"{L(9)} is not an element of the widget")],
    )
    assert (not_allowed.code, [(e.field, e.message) for e in not_allowed.field_errors]) == (
        "quote.invalid_element",
        [("body[1].type", "Part is not allowed in Box (contents: Item, Lid, Shape)")],
    )


def test_an_element_under_a_type_the_configuration_no_longer_has_takes_no_children():
    root = box()
    root.elements.append(
        Element(locator=L(5), staticLocator=L(5), type="Gone", category="exposure", parentLocator=root.locator)
    )

    error = invalid(
        elements.add_elements, CATALOG, root, [ElementInput(type="Part", parentLocator=L(5))], locators(), entity=WIDGET
    )

    assert (error.code, error.message) == (
        "quote.invalid_element",
        "Invalid element: Gone is not a configured element type",
    )
    assert [(e.field, e.message) for e in error.field_errors] == [
        ("body[0].parentLocator", "Gone is not a configured element type")
    ]


def test_removing_says_which_locators_cannot_go_and_leaves_the_original_tree():
    root = box(ElementInput(type="Item", elements=[ElementInput(type="Part")]))  # Box, Item, Part, Lid

    error = invalid(elements.remove_elements, root, [L(1), L(2), L(9)], entity=WIDGET)
    pruned = elements.remove_elements(root, [L(3)], entity=WIDGET)

    assert (error.code, error.message) == ("quote.invalid_element", "Cannot remove these elements")
    assert [(e.field, e.message) for e in error.field_errors] == [
        ("body[0]", "the root element cannot be removed"),
        ("body[2]", f"{L(9)} is not an element of the widget"),
    ]
    assert [e.type for e in elements.walk(pruned)] == ["Box", "Item", "Lid"]
    assert [e.type for e in elements.walk(root)] == ["Box", "Item", "Part", "Lid"]


def test_changes_remove_coverage_terms_and_an_unknown_locator_is_named():
    root = box(ElementInput(type="Item", coverageTerms={"Deductible": "low", "Limit": "l1"}))

    changed = elements.change_elements(
        root, [ElementChanges(locator=L(2), removeCoverageTerms={"Limit": ""})], entity=WIDGET
    )
    error = invalid(elements.change_elements, root, [ElementChanges(locator=L(9))], entity=WIDGET, field="changes")

    assert changed.elements[0].coverageTerms == {"Deductible": "low"}
    assert (error.message, [(e.field, e.message) for e in error.field_errors]) == (
        f"Invalid element: {L(9)} is not an element of the widget",
        [("changes[0].locator", f"{L(9)} is not an element of the widget")],
    )


def test_find_and_ancestors_search_every_branch():
    root = box(ElementInput(type="Item", elements=[ElementInput(type="Part")]), ElementInput(type="Item"))

    assert elements.find(root, L(4)).type == "Item"
    assert elements.find(root, L(3)).type == "Part"
    assert elements.find(root, L(9)) is None
    assert [e.locator for e in elements.ancestors(root, L(4))] == [L(1)]
    assert [e.locator for e in elements.ancestors(root, L(3))] == [L(1), L(2)]
    assert elements.ancestors(root, L(9)) == []


def test_checked_data_and_terms_replace_the_trees_at_every_level_on_a_copy():
    root = box(ElementInput(type="Item", data={"size": "2"}, elements=[ElementInput(type="Part")]))
    checked = {
        "data": {"colour": "RED"},
        "elements": [
            {
                "data": {"size": 2},
                "coverageTerms": {"Deductible": "low"},
                "elements": [{"coverageTerms": {"Limit": "l1"}}],
            },
            {},
        ],
    }

    normalised = elements.with_checked(root, checked)

    assert [(e.type, e.data, e.coverageTerms) for e in elements.walk(normalised)] == [
        ("Box", {"colour": "RED"}, {"Limit": "high"}),
        ("Item", {"size": 2}, {"Deductible": "low"}),
        ("Part", {}, {"Limit": "l1"}),
        ("Lid", {}, {}),
    ]
    assert [(e.data, e.coverageTerms) for e in elements.walk(root)] == [
        ({"colour": "red"}, {"Limit": "high"}),
        ({"size": "2"}, {}),
        ({}, {}),
        ({}, {}),
    ]
