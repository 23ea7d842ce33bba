"""Change instructions applied to the element tree of the segment a transaction is based on: the tree
of the new segment. Pure.

- `add` puts new elements under their parent, named by its static locator or locator in the tree
  (default: the root); an added element's locator is its static locator, fixed when the instruction
  was stored (`with_static_locators`), so the tree a draft would make names the same elements every
  time it is worked out; the children a type creates by itself (`X!`) get new ones.
- `modify` sets and removes data and coverage terms of one element, named by its static locator.
- `delete` removes elements (and everything below them) by static locator; not the root.
- Unchanged elements keep their locators; added ones take the transaction's effective time as their
  `originalEffectiveTime`.

A static locator the tree does not have, a parent it does not have or a type its parent may not hold
is a 400 `transaction.invalid_element` naming the instruction (`changeInstructions[2].staticLocator`):
no tree can follow from it. `params`, `producers` and `migrate` do not touch the tree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from chalicelib.core import codes
from chalicelib.core.errors import DomainError, FieldError, InvalidRequest
from chalicelib.priceable import elements
from chalicelib.priceable.elements import Catalog
from chalicelib.priceable.models import Element, ElementChanges, ElementInput
from chalicelib.transactions.models import (
    ERRORS,
    AddInstruction,
    DeleteInstruction,
    Instruction,
    ModifyInstruction,
    ParamsInstruction,
)

FIELD = "changeInstructions"


def applied(
    catalog: Catalog,
    base: Element,
    instructions: Sequence[Instruction],
    effective: datetime,
    new_locator: Callable[[], str],
) -> Element:
    """The tree `instructions` make of `base` (which stays as it was)."""
    tree = base.model_copy(deep=True)
    for position, instruction in enumerate(instructions):
        where = f"{FIELD}[{position}]"
        if isinstance(instruction, AddInstruction):
            tree = _added(catalog, tree, instruction, effective, new_locator, where)
        elif isinstance(instruction, ModifyInstruction):
            tree = _modified(tree, instruction, where)
        elif isinstance(instruction, DeleteInstruction):
            tree = _deleted(tree, instruction, where)
    return tree


def params_of(instructions: Sequence[Instruction]) -> ParamsInstruction | None:
    """The one `params` instruction (400 for a second one)."""
    found = [(i, item) for i, item in enumerate(instructions) if isinstance(item, ParamsInstruction)]
    if len(found) > 1:
        raise codes.TRANSACTION_INVALID_INSTRUCTION(
            "A transaction takes one params instruction",
            field_errors=[FieldError(f"{FIELD}[{found[1][0]}]", "a second params instruction")],
        )
    return found[0][1] if found else None


def with_static_locators(instruction: Instruction, new_locator: Callable[[], str]) -> Instruction:
    """An `add` instruction whose elements (and their children) all name their static locator."""
    if not isinstance(instruction, AddInstruction):
        return instruction

    def named(element: ElementInput) -> ElementInput:
        return element.model_copy(
            update={
                "staticLocator": element.staticLocator or new_locator(),
                "elements": [named(child) for child in element.elements],
            }
        )

    return instruction.model_copy(update={"elements": [named(element) for element in instruction.elements]})


def static_locator_of(tree: Element, locator: str) -> str | None:
    """The static locator of the element named by its locator or static locator (None: not in the tree)."""
    found = next((e for e in elements.walk(tree) if locator in (e.locator, e.staticLocator)), None)
    return found.staticLocator if found is not None else None


def _by_static(tree: Element) -> dict[str, Element]:
    return {element.staticLocator: element for element in elements.walk(tree)}


def _added(
    catalog: Catalog,
    tree: Element,
    instruction: AddInstruction,
    effective: datetime,
    new_locator: Callable[[], str],
    where: str,
) -> Element:
    parents = {element.locator: element.locator for element in elements.walk(tree)}
    parents.update((element.staticLocator, element.locator) for element in elements.walk(tree))
    additions = []
    for position, addition in enumerate(instruction.elements):
        parent = addition.parentLocator or tree.locator
        if parent not in parents:
            raise _invalid(
                f"{where}.elements[{position}].parentLocator",
                f"{addition.parentLocator} is not an element of the policy",
            )
        additions.append(addition.model_copy(update={"parentLocator": parents[parent]}))
    before = {element.locator for element in elements.walk(tree)}
    try:
        grown = elements.add_elements(catalog, tree, additions, new_locator, entity=ERRORS)
    except InvalidRequest as error:
        error.field_errors = [
            FieldError(f"{where}.elements" + problem.field.removeprefix("body"), problem.message)
            for problem in error.field_errors
        ]
        raise
    taken = set(_by_static(tree))
    for node in elements.walk(grown):
        if node.locator in before:
            continue
        if node.staticLocator in taken:
            raise _invalid(f"{where}.elements", f"{node.staticLocator} names an element the policy has already")
        taken.add(node.staticLocator)
        node.locator = node.staticLocator
        node.originalEffectiveTime = effective
        for child in node.elements:
            child.parentLocator = node.locator
    return grown


def _modified(tree: Element, instruction: ModifyInstruction, where: str) -> Element:
    element = _by_static(tree).get(instruction.staticLocator)
    if element is None:
        raise _invalid(f"{where}.staticLocator", f"{instruction.staticLocator} is not an element of the policy")
    change = ElementChanges(
        locator=element.locator,
        setData=instruction.setData,
        removeData=instruction.removeData,
        setCoverageTerms=instruction.setCoverageTerms,
        removeCoverageTerms=instruction.removeCoverageTerms,
    )
    return elements.change_elements(tree, [change], entity=ERRORS)


def _deleted(tree: Element, instruction: DeleteInstruction, where: str) -> Element:
    index = _by_static(tree)
    problems = [
        FieldError(f"{where}.staticElementLocators[{i}]", f"{static} is not an element of the policy")
        for i, static in enumerate(instruction.staticElementLocators)
        if static not in index
    ]
    problems += [
        FieldError(f"{where}.staticElementLocators[{i}]", "the root element cannot be deleted")
        for i, static in enumerate(instruction.staticElementLocators)
        if static == tree.staticLocator
    ]
    if problems:
        raise codes.INVALID_ELEMENT["transaction"]("Cannot delete these elements", field_errors=problems)
    doomed = {index[static].locator for static in instruction.staticElementLocators}
    pruned = tree.model_copy(deep=True)
    for element in elements.walk(pruned):
        element.elements = [child for child in element.elements if child.locator not in doomed]
    return pruned


def _invalid(field: str, message: str) -> DomainError:
    return codes.INVALID_ELEMENT["transaction"](
        f"Invalid change instruction: {message}", field_errors=[FieldError(field, message)]
    )
