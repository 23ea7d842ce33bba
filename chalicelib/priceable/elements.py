"""Element trees: built from requests, changed, walked. Pure.

A request may only name element types the configuration has (concrete ones) where the parent's
`contents` allows them: anything else is a 400 `{code}.invalid_element` naming the element's place in
the body, because no tree can hold it. How many of each there are, their data and their coverage
terms are checked by configuration/datamodel.py and land in the validationResult. Children marked
`X!` in `contents` are created when the request has none (recursively). The configured types come in
a Catalog (evaluation.catalog builds it from a model).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from chalicelib.core import codes
from chalicelib.core.errors import DomainError, FieldError
from chalicelib.priceable.models import Element, ElementChanges, ElementInput, Entity

NewLocator = Callable[[], str]


class Content(Protocol):
    """An entry of a type's `contents`: `Vehicle!` is name Vehicle, created automatically."""

    @property
    def name(self) -> str: ...

    @property
    def auto_create(self) -> bool: ...


class ElementKind(Protocol):
    """A configured product or element type (configuration.datamodel.ElementType), read-only."""

    @property
    def category(self) -> str: ...

    @property
    def definition(self) -> Mapping[str, Any]: ...

    @property
    def contents(self) -> Sequence[Content]: ...


@dataclass(frozen=True)
class Catalog:
    """The configured types a tree may hold: products by name, and the element types."""

    product: Callable[[str], ElementKind | None]
    types: Mapping[str, ElementKind]


def build_root(
    catalog: Catalog,
    product: str,
    data: dict[str, Any],
    coverage_terms: dict[str, Any],
    children: Sequence[ElementInput],
    new_locator: NewLocator,
    *,
    entity: Entity,
    field: str = "elements",
) -> Element:
    """The root element of product `product` with `children` below it."""
    definition = catalog.product(product)
    if definition is None:
        raise ValueError(f"{product} is not a product")
    locator = new_locator()
    root = Element(
        locator=locator,
        staticLocator=locator,
        type=product,
        category=definition.category,
        data=data,
        coverageTerms=coverage_terms,
    )
    root.elements = _Builder(catalog, new_locator, entity).children(definition, root, children, field)
    return root


def add_elements(
    catalog: Catalog, root: Element, additions: list[ElementInput], new_locator: NewLocator, *, entity: Entity
) -> Element:
    """A copy of the tree with `additions` under their `parentLocator` (default: the root)."""
    tree = root.model_copy(deep=True)
    index = {element.locator: element for element in walk(tree)}
    builder = _Builder(catalog, new_locator, entity)
    for position, addition in enumerate(additions):
        field = f"body[{position}]"
        parent = index.get(addition.parentLocator or tree.locator)
        if parent is None:
            raise _invalid(
                entity, f"{field}.parentLocator", f"{addition.parentLocator} is not an element of the {entity.noun}"
            )
        parent_type = catalog.product(parent.type) if parent is tree else catalog.types.get(parent.type)
        if parent_type is None:
            raise _invalid(entity, f"{field}.parentLocator", f"{parent.type} is not a configured element type")
        added = builder.element(parent_type, parent, addition, field)
        parent.elements.append(added)
        index.update((element.locator, element) for element in walk(added))
    return tree


def remove_elements(root: Element, locators: list[str], *, entity: Entity) -> Element:
    """A copy of the tree without the named elements (and everything below them)."""
    known = {element.locator for element in walk(root)}
    problems = [
        FieldError(f"body[{i}]", "the root element cannot be removed")
        for i, locator in enumerate(locators)
        if locator == root.locator
    ]
    problems += [
        FieldError(f"body[{i}]", f"{locator} is not an element of the {entity.noun}")
        for i, locator in enumerate(locators)
        if locator not in known
    ]
    if problems:
        raise codes.INVALID_ELEMENT[entity.code]("Cannot remove these elements", field_errors=problems)
    doomed = set(locators)
    tree = root.model_copy(deep=True)
    for element in walk(tree):
        element.elements = [child for child in element.elements if child.locator not in doomed]
    return tree


def change_elements(
    root: Element, changes: list[ElementChanges], *, entity: Entity, field: str = "elements"
) -> Element:
    """A copy of the tree with each change's data and coverage terms removed, then set."""
    tree = root.model_copy(deep=True)
    index = {element.locator: element for element in walk(tree)}
    for position, change in enumerate(changes):
        element = index.get(change.locator)
        if element is None:
            raise _invalid(
                entity, f"{field}[{position}].locator", f"{change.locator} is not an element of the {entity.noun}"
            )
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
    return {
        "locator": element.locator,
        "staticLocator": element.staticLocator,
        "type": element.type,
        "data": element.data,
        "coverageTerms": element.coverageTerms,
        "elements": [as_tree(child) for child in element.elements],
    }


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


@dataclass(frozen=True)
class _Builder:
    catalog: Catalog
    new_locator: NewLocator
    entity: Entity

    def children(
        self, parent_type: ElementKind, parent: Element, given: Sequence[ElementInput], field: str
    ) -> list[Element]:
        children = [
            self.element(parent_type, parent, child, f"{field}[{position}]") for position, child in enumerate(given)
        ]
        for entry in parent_type.contents:
            if (
                entry.auto_create
                and entry.name in self.catalog.types
                and not any(c.type == entry.name for c in children)
            ):
                children.append(self.element(parent_type, parent, ElementInput(type=entry.name), field))
        return children

    def element(self, parent_type: ElementKind, parent: Element, given: ElementInput, field: str) -> Element:
        allowed = {entry.name for entry in parent_type.contents}
        element_type = self.catalog.types.get(given.type)
        if element_type is None or element_type.definition.get("abstract") is True:
            what = "is abstract" if element_type is not None else "is not a configured element type"
            raise _invalid(self.entity, f"{field}.type", f"{given.type} {what}")
        if given.type not in allowed:
            raise _invalid(
                self.entity,
                f"{field}.type",
                f"{given.type} is not allowed in {parent.type} (contents: {', '.join(sorted(allowed)) or 'none'})",
            )
        locator = self.new_locator()
        element = Element(
            locator=locator,
            staticLocator=given.staticLocator or locator,
            type=given.type,
            category=element_type.category,
            parentLocator=parent.locator,
            data=given.data,
            coverageTerms=given.coverageTerms,
        )
        element.elements = self.children(element_type, element, given.elements, f"{field}.elements")
        return element


def _invalid(entity: Entity, field: str, message: str) -> DomainError:
    return codes.INVALID_ELEMENT[entity.code](f"Invalid element: {message}", field_errors=[FieldError(field, message)])
