"""Checking, rating and underwriting one quote (or quick quote) against a deployed configuration.

Validation is the configured data model (configuration/datamodel.py: the element tree, its data,
quantifiers and coverage terms), the constraint tables of constrained fields, the quote's own fields
(an end after the start, a jurisdiction where the product requires one, static data as the product's
`staticData` says) and then, for quotes, the validation plugin. Rating and underwriting are the
plugins' (none: no charges, no flags). A plugin that fails raises PluginFailure; the caller reports it
in the validationResult and stores nothing.

The plugin request's `account` is read only when a plugin of the product will actually run.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from chalicelib.configuration import datamodel
from chalicelib.configuration.datamodel import ValidationItem, ValidationResult
from chalicelib.core import durations
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError
from chalicelib.core.ids import new_locator
from chalicelib.plugins import service as plugins
from chalicelib.plugins.contract import Kind, apply_rating, build_request, function_names
from chalicelib.plugins.models import PluginFailure, PluginFlag
from chalicelib.priceable.models import Charge, Element
from chalicelib.quotes import elements, pricing
from chalicelib.quotes.host import TablesHost
from chalicelib.tables import service as tables
from chalicelib.tables.models import SelectionTimes

AccountLoader = Callable[[], Mapping[str, Any]]
NO_ACCOUNT: Mapping[str, Any] = {"locator": "", "type": "", "data": {}}


@dataclass(frozen=True)
class Subject:
    """What the checks and plugins look at: a quote or quick quote as it is or would be."""

    locator: str
    product: str
    start: datetime
    end: datetime | None
    currency: str
    timezone: str
    basis: str
    element: Element
    static: Mapping[str, Any]
    jurisdiction: str | None
    config_version: str
    account: AccountLoader

    @property
    def duration(self) -> Decimal:
        return durations.duration(self.start, self.end, self.basis, self.timezone) if self.end else Decimal(0)


def normalised(model: dict[str, Any], subject: Subject) -> tuple[Element, list[datamodel.Error]]:
    """The element tree with its data normalised, and what the data model says is wrong with it."""
    checked, errors = datamodel.validate_element_tree(model, elements.as_tree(subject.element))
    return elements.with_checked(subject.element, checked), errors


def schema_result(ctx: CallContext, model: dict[str, Any], subject: Subject) -> tuple[Element, ValidationResult]:
    """The draft check: data model, constraint tables and the quote's own fields (no plugin)."""
    tree, errors = normalised(model, subject)
    errors += _own_errors(model, subject) + _constraint_errors(ctx, model, subject, tree)
    return tree, datamodel.validation_result(errors, locator=subject.locator, element_type=subject.product)


def validate(ctx: CallContext, model: dict[str, Any], subject: Subject, *,
             plugin: bool) -> tuple[Element, ValidationResult]:
    """The normalised tree and the full check: the schema check, then (with `plugin`, when the
    schema check passed) the validation plugin, whose failure is a failed result."""
    tree, result = schema_result(ctx, model, subject)
    if not result.success or not plugin or not _has_plugin(ctx, subject, "validate"):
        return tree, result
    try:
        items = plugins.validate(ctx, subject.config_version, _request(ctx, subject), _host(ctx, subject))
    except PluginFailure as failure:
        return tree, failed(subject, failure)
    return tree, ValidationResult(success=not items, validationItems=[
        ValidationItem(locator=item.locator, elementType=item.element_type, errors=list(item.errors))
        for item in items])


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
    return pricing.charges(rated, answer, charge_types, Decimal(request["segment"]["duration"]), new_locator,
                           function=function)


def underwrite(ctx: CallContext, subject: Subject) -> list[PluginFlag]:
    """The underwriting plugin's flags (raises PluginFailure)."""
    if not _has_plugin(ctx, subject, "underwrite"):
        return []
    return plugins.underwrite(ctx, subject.config_version, _request(ctx, subject), _host(ctx, subject))


def failed(subject: Subject, failure: DomainError) -> ValidationResult:
    """A plugin failure as the validationResult of the quote itself."""
    return ValidationResult(success=False, validationItems=[
        ValidationItem(locator=subject.locator, elementType=subject.product, errors=[failure.message])])


def _has_plugin(ctx: CallContext, subject: Subject, kind: Kind) -> bool:
    functions = plugins.deployed_modules(ctx, subject.config_version).functions
    return any(name in functions for name in function_names(kind, subject.product))


def _request(ctx: CallContext, subject: Subject) -> dict[str, Any]:
    end = subject.end or subject.start
    return build_request(
        tenant_locator=ctx.tenant, product_name=subject.product, kind="quote", locator=subject.locator,
        transaction_category=None, start_time=subject.start, end_time=end, currency=subject.currency,
        timezone=subject.timezone, duration_basis=subject.basis, account=subject.account(),
        static=subject.static, segment_start=subject.start, segment_end=end, duration=subject.duration,
        element=elements.as_tree(subject.element))


def _host(ctx: CallContext, subject: Subject) -> TablesHost:
    return TablesHost(ctx, subject.start)


def _own_errors(model: dict[str, Any], subject: Subject) -> list[datamodel.Error]:
    errors: list[datamodel.Error] = []
    product = (model.get("products") or {}).get(subject.product)
    if not isinstance(product, dict) or product.get("abstract") is True:
        errors.append({"path": "productName", "message": f"{subject.product} is not a product of the configuration"})
    else:
        if product.get("requiresJurisdiction") is True and not subject.jurisdiction:
            errors.append({"path": "jurisdiction", "message": f"is required for {subject.product}"})
        if product.get("staticData"):
            errors += datamodel.validate_data(model, product["staticData"], dict(subject.static), path="static")[1]
    if subject.end is None:
        errors.append({"path": "endTime", "message": "is required (no term duration is configured)"})
    elif subject.end <= subject.start:
        errors.append({"path": "endTime", "message": "must be after startTime"})
    return errors


def _constraint_errors(ctx: CallContext, model: dict[str, Any], subject: Subject,
                       tree: Element) -> list[datamodel.Error]:
    """Each constrained field against the options its constraint table allows, given the values of
    the element, its ancestors and the root (the element's own first)."""
    errors: list[datamodel.Error] = []
    for element, properties in constrained(model, tree):
        data = context_data(tree, element)
        try:
            allowed = tables.evaluate_constraints(ctx, properties, data, SelectionTimes(
                policyStartTime=subject.start, termStartTime=subject.start, transactionEffectiveTime=subject.start))
        except DomainError as error:
            errors.append({"path": "data", "locator": element.locator, "elementType": element.type,
                           "message": f"cannot be checked against its constraint tables: {error.message}"})
            continue
        errors += [{**error, "locator": element.locator, "elementType": element.type}
                   for error in datamodel.constraint_errors(properties, element.data, allowed)]
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
    definition = datamodel.product_type(model, element.type) if element is tree \
        else datamodel.element_types(model).get(element.type)
    return definition.properties if definition is not None else {}


def context_data(tree: Element, element: Element) -> dict[str, Any]:
    """The values a constraint of `element` may read: the root's, its ancestors' and its own data."""
    data: dict[str, Any] = {}
    for outer in elements.ancestors(tree, element.locator):
        data.update(outer.data)
    data.update(element.data)
    return data
