"""Element trees of quotes: built from requests, changed, walked. Pure.

A request may only name element types the configuration has (concrete ones) where the parent's
`contents` allows them: anything else is a 400 naming the element's place in the body, because no
tree can hold it. How many of each there are, their data and their coverage terms are checked by
configuration/datamodel.py and land in the quote's validationResult. Children marked `X!` in
`contents` are created when the request has none (recursively).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from chalicelib.configuration.datamodel import ElementType, element_types, product_type
from chalicelib.core.errors import FieldError, InvalidRequest
from chalicelib.quotes.models import Element, ElementChanges, ElementInput

NewLocator = Callable[[], str]


def build_root(model: dict[str, Any], product: str, data: dict[str, Any], coverage_terms: dict[str, Any],
               children: list[ElementInput], new_locator: NewLocator, *, field: str = "elements") -> Element:
    """The root element of product `product` with `children` below it."""
    definition = product_type(model, product)
    if definition is None:
        raise ValueError(f"{product} is not a product")
    locator = new_locator()
    root = Element(locator=locator, staticLocator=locator, type=product, category=definition.category,
                   data=data, coverageTerms=coverage_terms)
    root.elements = _children(model, definition, root, children, new_locator, field)
    return root


def add_elements(model: dict[str, Any], root: Element, additions: list[ElementInput],
                 new_locator: NewLocator) -> Element:
    """A copy of the tree with `additions` under their `parentLocator` (default: the root)."""
    tree = root.model_copy(deep=True)
    index = {element.locator: element for element in walk(tree)}
    types = element_types(model)
    for position, addition in enumerate(additions):
        field = f"body[{position}]"
        parent = index.get(addition.parentLocator or tree.locator)
        if parent is None:
            raise _invalid(f"{field}.parentLocator", f"{addition.parentLocator} is not an element of the quote")
        parent_type = product_type(model, parent.type) if parent is tree else types.get(parent.type)
        if parent_type is None:
            raise _invalid(f"{field}.parentLocator", f"{parent.type} is not a configured element type")
        added = _element(model, parent_type, parent, addition, new_locator, field)
        parent.elements.append(added)
        index.update((element.locator, element) for element in walk(added))
    return tree


def remove_elements(root: Element, locators: list[str]) -> Element:
    """A copy of the tree without the named elements (and everything below them)."""
    known = {element.locator for element in walk(root)}
    problems = [FieldError(f"body[{i}]", "the root element cannot be removed") for i, locator in enumerate(locators)
                if locator == root.locator]
    problems += [FieldError(f"body[{i}]", f"{locator} is not an element of the quote")
                 for i, locator in enumerate(locators) if locator not in known]
    if problems:
        raise InvalidRequest("Cannot remove these elements", code="quote.invalid_element", field_errors=problems)
    doomed = set(locators)
    tree = root.model_copy(deep=True)
    for element in walk(tree):
        element.elements = [child for child in element.elements if child.locator not in doomed]
    return tree


def change_elements(root: Element, changes: list[ElementChanges], *, field: str = "elements") -> Element:
    """A copy of the tree with each change's data and coverage terms removed, then set."""
    tree = root.model_copy(deep=True)
    index = {element.locator: element for element in walk(tree)}
    for position, change in enumerate(changes):
        element = index.get(change.locator)
        if element is None:
            raise _invalid(f"{field}[{position}].locator", f"{change.locator} is not an element of the quote")
        element.data = merged(element.data, change.removeData, change.setData)
        element.coverageTerms = merged(element.coverageTerms, change.removeCoverageTerms, change.setCoverageTerms)
    return tree


def merged(current: dict[str, Any], remove: dict[str, Any], set_: dict[str, Any]) -> dict[str, Any]:
    """`current` without the keys of `remove`, then with `set_` over it (a null value removes)."""
    result = {key: value for key, value in current.items() if key not in remove}
    result.update(set_)
    return {key: value for key, value in result.items() if value is not None}


def walk(root: Element) -> Iterator[Element]:
    """Every element of the tree, parents before children."""
    pending = [root]
    while pending:
        element = pending.pop()
        yield element
        pending.extend(reversed(element.elements))


def find(root: Element, locator: str) -> Element | None:
    return next((element for element in walk(root) if element.locator == locator), None)


def ancestors(root: Element, locator: str) -> list[Element]:
    """The elements from the root down to (not including) the element `locator`."""
    path: list[Element] = []

    def search(element: Element) -> bool:
        if element.locator == locator:
            return True
        path.append(element)
        if any(search(child) for child in element.elements):
            return True
        path.pop()
        return False

    search(root)
    return path


def as_tree(element: Element) -> dict[str, Any]:
    """The tree as configuration/datamodel.py and plugins read it."""
    return {"locator": element.locator, "staticLocator": element.staticLocator, "type": element.type,
            "data": element.data, "coverageTerms": element.coverageTerms,
            "elements": [as_tree(child) for child in element.elements]}


def with_checked(root: Element, checked: dict[str, Any]) -> Element:
    """The tree with the data and coverage terms datamodel.validate_element_tree normalised."""
    tree = root.model_copy(deep=True)
    pending = [(tree, checked)]
    while pending:
        element, normalised = pending.pop()
        element.data = normalised.get("data", element.data)
        element.coverageTerms = normalised.get("coverageTerms", element.coverageTerms)
        pending.extend(zip(element.elements, normalised.get("elements") or []))
    return tree


def _children(model: dict[str, Any], parent_type: ElementType, parent: Element, given: list[ElementInput],
              new_locator: NewLocator, field: str) -> list[Element]:
    children = [_element(model, parent_type, parent, child, new_locator, f"{field}[{position}]")
                for position, child in enumerate(given)]
    types = element_types(model)
    for entry in parent_type.contents:
        if entry.auto_create and entry.name in types and not any(c.type == entry.name for c in children):
            children.append(_element(model, parent_type, parent, ElementInput(type=entry.name), new_locator, field))
    return children


def _element(model: dict[str, Any], parent_type: ElementType, parent: Element, given: ElementInput,
             new_locator: NewLocator, field: str) -> Element:
    allowed = {entry.name for entry in parent_type.contents}
    element_type = element_types(model).get(given.type)
    if element_type is None or element_type.definition.get("abstract") is True:
        what = "is abstract" if element_type is not None else "is not a configured element type"
        raise _invalid(f"{field}.type", f"{given.type} {what}")
    if given.type not in allowed:
        raise _invalid(f"{field}.type", f"{given.type} is not allowed in {parent.type} "
                                        f"(contents: {', '.join(sorted(allowed)) or 'none'})")
    locator = new_locator()
    element = Element(locator=locator, staticLocator=given.staticLocator or locator, type=given.type,
                      category=element_type.category, parentLocator=parent.locator, data=given.data,
                      coverageTerms=given.coverageTerms)
    element.elements = _children(model, element_type, element, given.elements, new_locator, f"{field}.elements")
    return element


def _invalid(field: str, message: str) -> InvalidRequest:
    return InvalidRequest(f"Invalid element: {message}", code="quote.invalid_element",
                          field_errors=[FieldError(field, message)])
