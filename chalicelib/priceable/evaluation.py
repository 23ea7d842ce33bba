"""Checking, rating and underwriting one priceable subject against a deployed configuration.

Validation is the configured data model (configuration/datamodel.py: the element tree, its data,
quantifiers and coverage terms), the constraint tables of constrained fields, the subject's own fields
(an end after the start, a jurisdiction where the product requires one, static data as the product's
`staticData` says) and then, where the user asks for it, the validation plugin. Rating and
underwriting are the plugins' (none: no charges, no flags). A plugin that fails raises PluginFailure;
Evaluation (the runner's Evaluator) turns it into StepFailed with the failure in the validationResult.

The plugin request's `account` is read only when a plugin of the product will actually run.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from chalicelib.configuration import datamodel, products
from chalicelib.configuration import service as configuration
from chalicelib.configuration.datamodel import ValidationItem, ValidationResult
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError, FieldError
from chalicelib.core.ids import new_locator
from chalicelib.plugins import service as plugins
from chalicelib.plugins.contract import (
    MAX_NAME,
    Kind,
    apply_rating,
    build_request,
    function_names,
    underwriting_outcome,
)
from chalicelib.plugins.models import PluginFailure, PluginFlag
from chalicelib.priceable import elements, rating, repository, underwriting
from chalicelib.priceable.host import TablesHost, selection_times
from chalicelib.priceable.models import Charge, Element, ElementChanges, Entity, Flag
from chalicelib.priceable.runner import StepFailed, Underwritten
from chalicelib.priceable.subject import ScheduleOwner, Subject
from chalicelib.tables import service as tables


def catalog(model: dict[str, Any]) -> elements.Catalog:
    """The configured types of a resolved model, as element trees need them."""
    return elements.Catalog(
        product=lambda name: datamodel.product_type(model, name), types=datamodel.element_types(model)
    )


class Evaluation:
    """The runner's Evaluator for one request: `plugin_validation` False checks the schema only."""

    def __init__(self, ctx: CallContext, model: dict[str, Any], *, plugin_validation: bool = True):
        self.ctx, self.model, self.plugin_validation = ctx, model, plugin_validation

    def validate(self, subject: Subject) -> tuple[Element, ValidationResult]:
        tree, result = validate(self.ctx, self.model, subject, plugin=self.plugin_validation)
        if not result.success:
            raise StepFailed(result)
        return tree, result

    def price(self, subject: Subject) -> list[Charge]:
        try:
            return price(self.ctx, self.model, subject)
        except PluginFailure as failure:
            raise StepFailed(failed(subject, failure)) from None

    def underwrite(self, subject: Subject, flags: list[Flag], *, already_rejected: bool) -> Underwritten:
        try:
            raised = underwrite(self.ctx, subject)
        except PluginFailure as failure:
            raise StepFailed(failed(subject, failure)) from None
        after = underwriting.after_run(
            flags, raised, underwriting.Author(self.ctx.user_locator, self.ctx.now, new_locator)
        )
        outcome = underwriting_outcome(underwriting.uncleared_levels(after), already_rejected=already_rejected)
        return Underwritten(after, outcome.result, outcome.status)


def normalised(model: dict[str, Any], subject: Subject) -> tuple[Element, list[datamodel.Error]]:
    """The element tree with its data normalised, and what the data model says is wrong with it."""
    checked, errors = datamodel.validate_element_tree(model, elements.as_tree(subject.element))
    return elements.with_checked(subject.element, checked), errors


def schema_result(ctx: CallContext, model: dict[str, Any], subject: Subject) -> tuple[Element, ValidationResult]:
    """The draft check: data model, constraint tables and the quote's own fields (no plugin)."""
    tree, errors = normalised(model, subject)
    errors += _own_errors(model, subject) + _constraint_errors(ctx, model, subject, tree)
    return tree, datamodel.validation_result(errors, locator=subject.locator, element_type=subject.product)


def validate(
    ctx: CallContext, model: dict[str, Any], subject: Subject, *, plugin: bool
) -> tuple[Element, ValidationResult]:
    """The normalised tree and the full check: the schema check, then (with `plugin`, when the
    schema check passed) the validation plugin, whose failure is a failed result."""
    tree, result = schema_result(ctx, model, subject)
    if not result.success or not plugin or not _has_plugin(ctx, subject, "validate"):
        return tree, result
    try:
        items = plugins.validate(ctx, subject.config_version, _request(ctx, subject), _host(ctx, subject))
    except PluginFailure as failure:
        return tree, failed(subject, failure)
    return tree, ValidationResult(
        success=not items,
        validationItems=[
            ValidationItem(locator=item.locator, elementType=item.element_type, errors=list(item.errors))
            for item in items
        ],
    )


def price(ctx: CallContext, model: dict[str, Any], subject: Subject) -> list[Charge]:
    """The rating plugin's charges (raises PluginFailure)."""
    if not _has_plugin(ctx, subject, "rate"):
        return []
    request = _request(ctx, subject)
    called = plugins.call(ctx, subject.config_version, "rate", request, _host(ctx, subject))
    if called is None:
        return []
    function, answer = called
    charge_types = model.get("charges") or {}
    rated = apply_rating(answer, request, charge_types, function=function)
    return rating.charges(
        rated, _extras(answer, function), charge_types, Decimal(request["segment"]["duration"]), new_locator
    )


def underwrite(ctx: CallContext, subject: Subject) -> list[PluginFlag]:
    """The underwriting plugin's flags (raises PluginFailure)."""
    if not _has_plugin(ctx, subject, "underwrite"):
        return []
    return plugins.underwrite(ctx, subject.config_version, _request(ctx, subject), _host(ctx, subject))


def precommit(ctx: CallContext, subject: Subject) -> Element:
    """The tree after the precommit plugin's changes (raises PluginFailure); unchanged without one."""
    if not _has_plugin(ctx, subject, "precommit"):
        return subject.element
    made = plugins.precommit(ctx, subject.config_version, _request(ctx, subject), _host(ctx, subject))
    return elements.change_elements(
        subject.element,
        [
            ElementChanges(
                locator=change.locator,
                setData=change.set_data,
                removeData=change.remove_data,
                setCoverageTerms=change.set_coverage_terms,
                removeCoverageTerms=change.remove_coverage_terms,
            )
            for change in made
        ],
        entity=Entity("plugin", "plugin answer"),
    )


def failed(subject: Subject, failure: DomainError) -> ValidationResult:
    """A plugin failure as the validationResult of the quote itself."""
    return ValidationResult(
        success=False,
        validationItems=[
            ValidationItem(locator=subject.locator, elementType=subject.product, errors=[failure.message])
        ],
    )


def _has_plugin(ctx: CallContext, subject: Subject, kind: Kind) -> bool:
    functions = plugins.deployed_modules(ctx, subject.config_version).functions
    return any(name in functions for name in function_names(kind, subject.product))


def _request(ctx: CallContext, subject: Subject) -> dict[str, Any]:
    segment_start, segment_end = subject.segment
    request = build_request(
        tenant_locator=ctx.tenant,
        product_name=subject.product,
        kind=subject.kind,
        locator=subject.locator,
        transaction_category=subject.category,
        start_time=subject.start,
        end_time=subject.end or subject.start,
        currency=subject.currency,
        timezone=subject.timezone,
        duration_basis=subject.basis,
        account=subject.account(),
        static=subject.static,
        segment_start=segment_start,
        segment_end=segment_end or segment_start,
        duration=subject.duration,
        element=elements.as_tree(subject.element),
    )
    scheduled = _scheduled(ctx, subject)
    if scheduled:
        owners = subject.schedule_owners or (ScheduleOwner(subject.kind, subject.locator),)
        request["schedules"] = repository.schedule_items(ctx.tenant, owners, scheduled)
    return request


def _scheduled(ctx: CallContext, subject: Subject) -> list[tuple[str, bool]]:
    """(static locator, resetOnRenewal) of each of the subject's elements whose type names a schedule: the
    plugin request's `schedules` gives each one's items."""
    model = configuration.model(ctx, subject.config_version, resolved=True)
    types, schedules = datamodel.element_types(model), model.get("schedules") or {}
    named = [
        (element.staticLocator, types[element.type].definition.get("schedule"))
        for element in elements.walk(subject.element)
        if element.type in types
    ]
    return [
        (static, bool((schedules.get(name) or {}).get("resetOnRenewal")))
        for static, name in named
        if isinstance(name, str) and name in schedules
    ]


def _host(ctx: CallContext, subject: Subject) -> TablesHost:
    return TablesHost(ctx, subject)


def _extras(answer: Mapping[str, Any], function: str) -> rating.Extras:
    """What a rating answer's items may add to their charges (already checked by apply_rating, apart
    from these two optional fields)."""
    found = {}
    for position, item in enumerate(answer.get("items") or []):
        reference, tag = item.get("referenceRate"), item.get("tag")
        if reference is not None and (
            isinstance(reference, bool)
            or not isinstance(reference, (int, Decimal))
            or not Decimal(reference).is_finite()
        ):
            raise PluginFailure(
                function, "malformed", f"items[{position}]: referenceRate must be a number, not {reference!r}"[:200]
            )
        if tag is not None and (not isinstance(tag, str) or len(tag) > MAX_NAME):
            raise PluginFailure(
                function,
                "malformed",
                f"items[{position}]: tag must be a string of at most {MAX_NAME} characters, not {tag!r}"[:200],
            )
        found[(item["elementLocator"], item["chargeType"])] = (
            Decimal(reference) if reference is not None else None,
            tag,
        )
    return found


def _own_errors(model: dict[str, Any], subject: Subject) -> list[datamodel.Error]:
    errors: list[datamodel.Error] = []
    product = products.product(model, subject.product)
    if product is None or product.abstract:
        errors.append({"path": "productName", "message": f"{subject.product} is not a product of the configuration"})
    else:
        if product.requires_jurisdiction and not subject.jurisdiction:
            errors.append({"path": "jurisdiction", "message": f"is required for {subject.product}"})
        if product.static_data:
            errors += datamodel.validate_data(model, product.static_data, dict(subject.static), path="static")[1]
    if subject.end is None:
        errors.append({"path": "endTime", "message": "is required (no term duration is configured)"})
    elif subject.end <= subject.start:
        errors.append({"path": "endTime", "message": "must be after startTime"})
    return errors


def _constraint_errors(
    ctx: CallContext, model: dict[str, Any], subject: Subject, tree: Element
) -> list[datamodel.Error]:
    """Each constrained field against the options its constraint table allows, given the values of
    the element, its ancestors and the root (the element's own first)."""
    errors: list[datamodel.Error] = []
    for element, properties in constrained(model, tree):
        data = context_data(tree, element)
        try:
            allowed = tables.evaluate_constraints(ctx, properties, data, selection_times(subject))
        except DomainError as error:
            errors.append(
                {
                    "path": "data",
                    "locator": element.locator,
                    "elementType": element.type,
                    "message": f"cannot be checked against its constraint tables: {error.message}",
                }
            )
            continue
        errors += [
            {**error, "locator": element.locator, "elementType": element.type}
            for error in datamodel.constraint_errors(properties, element.data, allowed)
        ]
    return errors


def constrained(model: dict[str, Any], tree: Element) -> list[tuple[Element, dict[str, Any]]]:
    """The elements whose type has constrained fields, with their type's data properties."""
    found = []
    for element in elements.walk(tree):
        properties = type_properties(model, tree, element)
        if any(isinstance(prop, dict) and prop.get("constraint") for prop in properties.values()):
            found.append((element, properties))
    return found


def type_properties(model: dict[str, Any], tree: Element, element: Element) -> dict[str, Any]:
    """The data properties of an element's type (the product's for the root)."""
    definition = (
        datamodel.product_type(model, element.type)
        if element is tree
        else datamodel.element_types(model).get(element.type)
    )
    return definition.properties if definition is not None else {}


def context_data(tree: Element, element: Element) -> dict[str, Any]:
    """The values a constraint of `element` may read: the root's, its ancestors' and its own data."""
    data: dict[str, Any] = {}
    for outer in elements.ancestors(tree, element.locator):
        data.update(outer.data)
    data.update(element.data)
    return data


# --- constraint tables of a stored tree ---------------------------------------------------------


def evaluate_constraints(
    ctx: CallContext,
    model: dict[str, Any],
    tree: Element,
    values: Mapping[str, Mapping[str, Mapping[str, Any]]],
    entity: Entity,
) -> dict[str, dict[str, list[str]]]:
    """For each element with constrained fields (or those `values` names: element locator -> groups
    of field values, e.g. {"data": {...}}, merged), the options of its constrained fields given its
    stored values with the given ones over them."""
    found = {element.locator: (element, properties) for element, properties in constrained(model, tree)}
    unknown = [key for key in values if key not in found]
    if unknown:
        raise codes.INVALID_ELEMENT[entity.code](
            "Unknown element",
            field_errors=[
                FieldError(key, f"is not an element of the {entity.noun} with constrained fields") for key in unknown
            ],
        )
    answer = {}
    for locator in list(values) or list(found):
        element, properties = found[locator]
        given = {name: value for group in (values.get(locator) or {}).values() for name, value in group.items()}
        data = {**context_data(tree, element), **given}
        answer[locator] = tables.evaluate_constraints(ctx, properties, data)
    return answer


def constraint_dependencies(
    ctx: CallContext, model: dict[str, Any], tree: Element
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per element with constrained fields: what each of them depends on; a condition's key names a
    field of the element's type, an ancestor's or the product's, and its staticLocator says which
    (the nearest element whose type has the field)."""
    answer = {}
    for element, properties in constrained(model, tree):
        holders = [*elements.ancestors(tree, element.locator), element]
        static_locators = {}
        for prop in properties.values():
            where = ((prop.get("constraint") or {}).get("where") or {}) if isinstance(prop, dict) else {}
            for condition in where.values():
                key = condition.get("key") if isinstance(condition, dict) else None
                if isinstance(key, str):
                    holder = next(
                        (e for e in reversed(holders) if key.split(".")[0] in type_properties(model, tree, e)), element
                    )
                    static_locators[key] = holder.staticLocator
        answer[element.locator] = tables.constraint_dependencies(ctx, properties, static_locators=static_locators)
    return answer
