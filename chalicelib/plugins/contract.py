"""The plugin contract of design/DECISIONS.md, "Plugins": what a plugin is asked and what its answers
mean. Pure: every shape problem in an answer raises PluginFailure("malformed") naming what is wrong
(and `function`, the plugin function that answered: by default the product-specific name), and so
does an answer beyond the limits below, which are those of what a client may send for the same record
(a flag's note and tag) or keep a response within reach of any client (errors and flags per answer).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from chalicelib.core.clock import isoformat
from chalicelib.core.money import round_money
from chalicelib.plugins.models import (
    Charge,
    ElementChange,
    FlagLevel,
    PluginFailure,
    PluginFlag,
    UnderwritingOutcome,
    ValidationItem,
)

Kind = Literal["validate", "rate", "underwrite", "precommit"]
KINDS: tuple[Kind, ...] = ("validate", "rate", "underwrite", "precommit")
FLAG_LEVELS: tuple[FlagLevel, ...] = ("approve", "block", "decline", "reject", "info")
MAX_ENTRIES = 1000
"""Validation errors or underwriting flags one answer may hold."""
MAX_TEXT = 2000
"""Characters of a validation message or a flag's note (a manual flag's note has the same limit)."""
MAX_NAME = 200
"""Characters of a tag, an elementType or a locator (a manual flag's tag has the same limit)."""


def function_names(kind: Kind, product_name: str) -> tuple[str, str]:
    """The functions that implement `kind` for a product, in the order they are looked for."""
    return f"{kind}_{product_name}", kind


# --- the request ---------------------------------------------------------------------------------


def build_request(
    *,
    tenant_locator: str,
    product_name: str,
    kind: Literal["quote", "transaction"],
    locator: str,
    transaction_category: str | None,
    start_time: datetime | str,
    end_time: datetime | str,
    currency: str,
    timezone: str,
    duration_basis: str,
    account: Mapping[str, Any],
    static: Mapping[str, Any],
    segment_start: datetime | str,
    segment_end: datetime | str,
    duration: Decimal,
    element: Mapping[str, Any],
) -> dict[str, Any]:
    """The request every plugin function gets. `account` has `locator`, `type`, `data`; `element` is
    the segment's root element with `locator`, `staticLocator`, `type`, `data`, `coverageTerms`
    and child `elements` (missing collections become empty ones). `duration` is in
    `duration_basis` units."""
    return {
        "tenantLocator": tenant_locator,
        "productName": product_name,
        "kind": kind,
        "locator": locator,
        "transactionCategory": transaction_category,
        "startTime": _time(start_time),
        "endTime": _time(end_time),
        "currency": currency,
        "timezone": timezone,
        "durationBasis": duration_basis,
        "account": {"locator": account["locator"], "type": account["type"], "data": dict(account.get("data") or {})},
        "static": dict(static),
        "segment": {
            "startTime": _time(segment_start),
            "endTime": _time(segment_end),
            "duration": duration,
            "element": _element(element),
        },
    }


def _time(value: datetime | str) -> str:
    return isoformat(value) if isinstance(value, datetime) else value


def _element(element: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "locator": element["locator"],
        "staticLocator": element.get("staticLocator"),
        "type": element["type"],
        "data": dict(element.get("data") or {}),
        "coverageTerms": dict(element.get("coverageTerms") or {}),
        "elements": [_element(child) for child in element.get("elements") or ()],
    }


@dataclass(frozen=True)
class IndexedElement:
    static_locator: str | None
    type: str


def element_index(request: Mapping[str, Any]) -> dict[str, IndexedElement]:
    """Every element of the request's segment by locator."""
    index: dict[str, IndexedElement] = {}
    pending = [request["segment"]["element"]]
    while pending:
        element = pending.pop()
        index[element["locator"]] = IndexedElement(element.get("staticLocator"), element["type"])
        pending.extend(element.get("elements") or ())
    return index


# --- the answers ---------------------------------------------------------------------------------


def apply_rating(
    result: Mapping[str, Any],
    request: Mapping[str, Any],
    charge_types: Mapping[str, Mapping[str, Any]],
    *,
    function: str | None = None,
) -> list[Charge]:
    """The charges a `rate` answer gives for the request's segment. `charge_types`: the configured
    charges (the model's `charges`, by name). A `rate` is multiplied by the segment's duration, an
    `amount` is taken as is; both are rounded half-up to the currency's minor unit; zero charges are
    dropped. An unknown element or charge type, a non-numeric value, or two charges of one type on
    one element make the whole answer a plugin failure."""
    function = function or f"rate_{request['productName']}"
    items = _list_of(result, "items", function)
    elements = element_index(request)
    duration: Decimal = Decimal(request["segment"]["duration"])
    currency: str = request["currency"]
    charges: list[Charge] = []
    seen: set[tuple[str, str]] = set()
    for position, item in enumerate(items):
        where = f"items[{position}]"
        _require_object(item, where, function)
        locator = _string(item, "elementLocator", where, function)
        charge_type = _string(item, "chargeType", where, function)
        if locator not in elements:
            raise _malformed(function, f"{where}: elementLocator {locator!r} is not an element of the request")
        if charge_type not in charge_types:
            raise _malformed(function, f"{where}: chargeType {charge_type!r} is not a configured charge")
        if (locator, charge_type) in seen:
            raise _malformed(function, f"{where}: a second {charge_type!r} charge for element {locator}")
        seen.add((locator, charge_type))
        rate, amount = _rate_and_amount(item, where, function)
        exact = rate * duration if rate is not None else amount
        try:
            rounded = round_money(exact, currency)
        except ValueError as error:
            raise _malformed(function, f"{where}: {error}") from None
        if rounded == 0:
            continue
        category = charge_types[charge_type].get("category")
        charges.append(
            Charge(
                locator,
                elements[locator].static_locator,
                charge_type,
                category if isinstance(category, str) else None,
                rounded,
                rate,
            )
        )
    return charges


def _rate_and_amount(item: Mapping[str, Any], where: str, function: str) -> tuple[Decimal | None, Decimal]:
    has_rate, has_amount = "rate" in item, "amount" in item
    if has_rate == has_amount:
        raise _malformed(function, f"{where}: give either a rate or an amount")
    field = "rate" if has_rate else "amount"
    value = _number(item[field])
    if value is None:
        raise _malformed(function, f"{where}: {field} must be a number, not {_shown(item[field])}")
    return (value, value) if has_rate else (None, value)


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        return None
    number = Decimal(value)
    return number if number.is_finite() else None


def underwriting_flags(
    result: Mapping[str, Any], request: Mapping[str, Any], *, function: str | None = None
) -> list[PluginFlag]:
    """The flags an `underwrite` answer raises; `note` and `tag` default to empty, an
    `elementLocator` must name an element of the request."""
    function = function or f"underwrite_{request['productName']}"
    elements = element_index(request)
    flags = []
    for position, item in enumerate(_list_of(result, "flags", function, MAX_ENTRIES)):
        where = f"flags[{position}]"
        _require_object(item, where, function)
        level = item.get("level")
        if level not in FLAG_LEVELS:
            raise _malformed(function, f"{where}: level must be one of {', '.join(FLAG_LEVELS)}, not {_shown(level)}")
        locator = item.get("elementLocator")
        if locator is not None and (not isinstance(locator, str) or locator not in elements):
            raise _malformed(function, f"{where}: elementLocator {_shown(locator)} is not an element of the request")
        flags.append(
            PluginFlag(
                level,
                _optional_string(item, "note", where, function, MAX_TEXT),
                _optional_string(item, "tag", where, function, MAX_NAME),
                locator,
            )
        )
    return flags


def underwriting_outcome(levels: Iterable[str], *, already_rejected: bool = False) -> UnderwritingOutcome:
    """DECISIONS.md's rule over the levels of the *uncleared* flags (manual and plugin alike): an
    approve passes unless the quote or transaction was already rejected; else any reject rejects,
    any decline declines, any block blocks; else it passes."""
    present = set(levels)
    if "approve" in present and not already_rejected:
        return UnderwritingOutcome("passed", "approve")
    for level, result in (("reject", "rejected"), ("decline", "declined"), ("block", "underwrittenBlocked")):
        if level in present:
            return UnderwritingOutcome(result, level)  # type: ignore[arg-type]
    return UnderwritingOutcome("passed", "info")


def validation_errors(
    result: Mapping[str, Any], request: Mapping[str, Any], *, function: str | None = None
) -> list[ValidationItem]:
    """A `validate` answer as validation items, one per (locator, elementType) in the order first
    named. An error without a locator is about the quote or transaction itself; without an
    elementType, the type of the element it names (the product's name for the request itself)."""
    function = function or f"validate_{request['productName']}"
    elements = element_index(request)
    grouped: dict[tuple[str, str], list[str]] = {}
    for position, item in enumerate(_list_of(result, "errors", function, MAX_ENTRIES)):
        where = f"errors[{position}]"
        _require_object(item, where, function)
        message = _string(item, "message", where, function, MAX_TEXT)
        locator = _or_default(item.get("locator"), request["locator"])
        if not isinstance(locator, str) or len(locator) > MAX_NAME:
            raise _malformed(
                function, f"{where}: locator must be a string of at most {MAX_NAME} characters, not {_shown(locator)}"
            )
        known = elements.get(locator)
        default_type = known.type if known else request["productName"]
        element_type = _or_default(item.get("elementType"), default_type)
        if not isinstance(element_type, str) or len(element_type) > MAX_NAME:
            raise _malformed(
                function,
                f"{where}: elementType must be a string of at most {MAX_NAME} characters, not {_shown(element_type)}",
            )
        grouped.setdefault((locator, element_type), []).append(message)
    return [
        ValidationItem(locator, element_type, tuple(messages)) for (locator, element_type), messages in grouped.items()
    ]


def precommit_changes(
    result: Mapping[str, Any], request: Mapping[str, Any], *, function: str | None = None
) -> list[ElementChange]:
    """The element changes a `precommit` answer makes (`{"elements": [{"locator", "setData",
    "removeData", "setCoverageTerms", "removeCoverageTerms"}]}`, maps optional), each on an element of
    the request's segment."""
    function = function or f"precommit_{request['productName']}"
    elements = element_index(request)
    found = []
    for position, item in enumerate(_list_of(result, "elements", function)):
        where = f"elements[{position}]"
        _require_object(item, where, function)
        locator = _string(item, "locator", where, function)
        if locator not in elements:
            raise _malformed(function, f"{where}: locator {locator!r} is not an element of the request")
        maps = {}
        for field in ("setData", "removeData", "setCoverageTerms", "removeCoverageTerms"):
            value = item.get(field) or {}
            if not isinstance(value, Mapping):
                raise _malformed(function, f"{where}: {field} must be an object, not {_shown(value)}")
            maps[field] = dict(value)
        found.append(
            ElementChange(
                locator, maps["setData"], maps["removeData"], maps["setCoverageTerms"], maps["removeCoverageTerms"]
            )
        )
    return found


# --- shape checks --------------------------------------------------------------------------------


def _list_of(result: Mapping[str, Any], field: str, function: str, limit: int | None = None) -> list[Any]:
    value = result.get(field) if isinstance(result, Mapping) else None
    if not isinstance(value, list):
        raise _malformed(function, f'the answer must be {{"{field}": [...]}}, not {_shown(result, 120)}')
    if limit is not None and len(value) > limit:
        raise _malformed(function, f"the answer holds {len(value)} {field}; at most {limit} are allowed")
    return value


def _require_object(item: Any, where: str, function: str) -> None:
    if not isinstance(item, Mapping):
        raise _malformed(function, f"{where} must be an object, not {_shown(item)}")


def _string(item: Mapping[str, Any], field: str, where: str, function: str, limit: int = MAX_NAME) -> str:
    value = item.get(field)
    if not isinstance(value, str) or not value:
        raise _malformed(function, f"{where}: {field} must be a non-empty string, not {_shown(value)}")
    _check_length(value, field, where, function, limit)
    return value


def _optional_string(item: Mapping[str, Any], field: str, where: str, function: str, limit: int) -> str:
    value = item.get(field, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _malformed(function, f"{where}: {field} must be a string, not {_shown(value)}")
    _check_length(value, field, where, function, limit)
    return value


def _or_default(value: Any, default: str) -> Any:
    """`value`, or `default` when it is absent, null or the empty string (any other type stays, to be refused)."""
    return default if value is None or value == "" else value


def _check_length(value: str, field: str, where: str, function: str, limit: int) -> None:
    if len(value) > limit:
        raise _malformed(function, f"{where}: {field} has {len(value)} characters; at most {limit} are allowed")


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _malformed(function: str, detail: str) -> PluginFailure:
    return PluginFailure(function, "malformed", detail)
