"""The configured data model applied to records: `data` validation and normalisation, element trees.

Every domain that stores configured data (accounts, quotes, policies, transactions) checks it here,
against the *resolved* normal-form model (`configuration.service.current_model(ctx, resolved=True)`):
data types and elements there already carry what their `extend` chains give them.

`validate_data(model, properties, data)` answers `(normalised, errors)`. Each error is
`{"path": "data.vehicle.vin", "message": "..."}`; `validation_result` turns errors into the API's
ValidationResult. Normalising means: decimals rounded to `precision` places with `roundingMode`
(default halfUp), integers as ints, datetimes as UTC `...Z` with milliseconds, guids in canonical
form, absent fields filled from `defaultValue` (a string in real packages: "true", "0"), absent
`Type!` objects created empty (then validated, so their own required fields are reported).
Values that fail keep their given form, and so do unknown fields (reported, not dropped), so a
draft shows what was sent; numbers that no store could hold are the exception (reported, dropped).

Types (`PropertyRef.type`): a built-in (string, int, long, decimal, date, datetime, boolean, guid) or
a data type name (an object checked against `dataTypes.<name>.data`), with an optional suffix:
none = required, `?` optional, `*` a list of 0..n, `+` a list of 1..n, `!` (data types only)
required and created when absent. Checks: `min`/`max` (numbers, dates, datetimes; a bound that does
not parse as the field's type is ignored), `minLength`/`maxLength` (strings), `regex` (the whole
value must match), `options` (the value, or each list item, must be one of them). Constraint tables
need the tables domain: it answers the allowed values, `constraint_errors` compares.

Element trees (`validate_element_tree`) follow `contents` quantifiers (`Vehicle+`; none or `!` =
exactly one, `!` meaning the system creates it; `?` 0..1; `*` 0..n; `+` 1..n), validate each
element's data, and check `coverageTerms` values against the configured option keys (a `*`-prefixed
key marks the default, which fills a missing required term).
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import date
from decimal import (
    ROUND_CEILING,
    ROUND_DOWN,
    ROUND_FLOOR,
    ROUND_HALF_DOWN,
    ROUND_HALF_EVEN,
    ROUND_HALF_UP,
    ROUND_UP,
    Decimal,
    InvalidOperation,
)
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from chalicelib.configuration.schema import BUILTIN_TYPES, ELEMENT_COLLECTIONS
from chalicelib.core.clock import isoformat, parse_datetime

QUANTIFIERS = "?*+!"
INT_RANGE = (-(2**31), 2**31 - 1)
LONG_RANGE = (-(2**63), 2**63 - 1)
MAX_DEPTH = 32
"""Nesting of objects and lists in one record's data; deeper values are refused."""
ROUNDING_MODES = {
    "ceiling": ROUND_CEILING,
    "down": ROUND_DOWN,
    "floor": ROUND_FLOOR,
    "halfDown": ROUND_HALF_DOWN,
    "halfEven": ROUND_HALF_EVEN,
    "halfUp": ROUND_HALF_UP,
    "up": ROUND_UP,
}
DEFAULT_ROUNDING = "halfUp"
ELEMENT_CATEGORIES = {
    "coverages": "coverage",
    "exposures": "exposure",
    "exposureGroups": "exposureGroup",
    "policyLines": "policyLine",
}
PRODUCT_CATEGORY = "product"
DEFAULT_OPTION_MARK = "*"

Error = dict[str, str]

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_MAX_STORED_DIGITS = 38  # what DynamoDB holds: 38 significant digits, magnitudes 1E-130 .. <1E+126
_ABSENT = object()


# --- types and quantifiers -----------------------------------------------------------------------


@dataclass(frozen=True)
class TypeSpec:
    """A PropertyRef `type`: `base` (built-in or data type name) and `quantifier` ("" or one of ?*+!)."""

    base: str
    quantifier: str = ""

    @property
    def is_list(self) -> bool:
        return self.quantifier in ("*", "+")

    @property
    def is_builtin(self) -> bool:
        return self.base in BUILTIN_TYPES


def parse_type(text: str) -> TypeSpec:
    """`"Driver*"` -> TypeSpec("Driver", "*"). Raises ValueError for an empty name."""
    base, quantifier = _split_quantifier(text)
    return TypeSpec(base, quantifier)


@dataclass(frozen=True)
class Quantified:
    """A `contents` or `coverageTerms` entry: `Vehicle+` -> name Vehicle, 1..n."""

    name: str
    quantifier: str = ""

    @property
    def minimum(self) -> int:
        return 0 if self.quantifier in ("?", "*") else 1

    @property
    def maximum(self) -> int | None:
        return None if self.quantifier in ("*", "+") else 1

    @property
    def auto_create(self) -> bool:
        """`X!`: exactly one, which the system creates when the request has none."""
        return self.quantifier == "!"


def parse_quantified(entry: str) -> Quantified:
    name, quantifier = _split_quantifier(entry)
    return Quantified(name, quantifier)


def _split_quantifier(text: str) -> tuple[str, str]:
    quantifier = text[-1] if text[-1:] and text[-1] in QUANTIFIERS else ""
    name = text[:-1] if quantifier else text
    if not name:
        raise ValueError(f"{text!r} names no type")
    return name, quantifier


@dataclass(frozen=True)
class ElementType:
    """A product or an element type of the resolved model."""

    name: str
    category: str  # product | coverage | exposure | exposureGroup | policyLine
    definition: dict[str, Any]

    @property
    def properties(self) -> dict[str, Any]:
        return self.definition.get("data") or {}

    @property
    def contents(self) -> list[Quantified]:
        return [parse_quantified(entry) for entry in self.definition.get("contents") or []]

    @property
    def coverage_terms(self) -> list[Quantified]:
        return [parse_quantified(entry) for entry in self.definition.get("coverageTerms") or []]


def element_types(model: dict[str, Any]) -> dict[str, ElementType]:
    """Every element type (coverages, exposures, exposureGroups, policyLines) by name."""
    found: dict[str, ElementType] = {}
    for collection in ELEMENT_COLLECTIONS:
        for name, definition in (model.get(collection) or {}).items():
            found.setdefault(name, ElementType(name, ELEMENT_CATEGORIES[collection], definition))
    return found


def product_type(model: dict[str, Any], name: str) -> ElementType | None:
    definition = (model.get("products") or {}).get(name)
    return ElementType(name, PRODUCT_CATEGORY, definition) if isinstance(definition, dict) else None


def option_keys(term: dict[str, Any]) -> tuple[list[str], str | None]:
    """A coverage term's option keys without the default mark, and its default option (or None)."""
    keys = list((term.get("options") or {}).keys())
    default = next((key[1:] for key in keys if key.startswith(DEFAULT_OPTION_MARK)), None)
    return [key.removeprefix(DEFAULT_OPTION_MARK) for key in keys], default


# --- the API -------------------------------------------------------------------------------------


def validate_data(
    model: dict[str, Any], properties: dict[str, Any], data: Any, *, path: str = "data"
) -> tuple[dict[str, Any], list[Error]]:
    """`data` checked against `properties` (name -> PropertyRef): (normalised data, errors)."""
    checker = _Checker(model)
    normalised = checker.object(properties, {} if data is None else data, path, 0)
    return (normalised if isinstance(normalised, dict) else {}), checker.errors


def validate_element_tree(model: dict[str, Any], element: Any, *, path: str = "") -> tuple[dict[str, Any], list[Error]]:
    """A tree rooted at a product (or an element type): `{"type", "locator"?, "data", "coverageTerms",
    "elements": [...]}`. Errors also carry `locator` (the element's, "" when it has none) and
    `elementType`, for `validation_result`; paths are relative to the root (`elements[0].data.vin`)."""
    checker = _Checker(model)
    name = element.get("type") if isinstance(element, dict) else None
    root = (product_type(model, name) or element_types(model).get(name)) if isinstance(name, str) else None
    if root is None:
        checker.fail(
            _join(path, "type"),
            f"{name!r} is not a configured product or element type",
            locator=_locator_of(element),
            element_type=str(name),
        )
        return (element if isinstance(element, dict) else {}), checker.errors
    return checker.element(root, element, path, 0), checker.errors


def constraint_errors(
    properties: dict[str, Any], data: dict[str, Any], allowed: dict[str, list[str]], *, path: str = "data"
) -> list[Error]:
    """A value of a constrained field that is not among the values its constraint table allows
    (`allowed`: field name -> allowed values as text, as the tables domain evaluates them for `data`;
    numbers compare by value, so 1.50 is allowed by "1.5")."""
    errors = []
    for name, prop in properties.items():
        values = allowed.get(name)
        if not isinstance(prop, dict) or not prop.get("constraint") or values is None or data.get(name) is None:
            continue
        given = data[name] if isinstance(data[name], list) else [data[name]]
        texts = set(values)
        numbers = {number for number in map(_number, values) if number is not None}
        for value in given:
            number = _number(value)
            if _text(value) not in texts and (number is None or number not in numbers):
                shown = ", ".join(values[:20]) + (", ..." if len(values) > 20 else "")
                errors.append(
                    {
                        "path": _join(path, name),
                        "message": f"{_shown(value)} is not allowed by constraint table "
                        f"{prop['constraint'].get('table')} (allowed: {shown or 'none'})",
                    }
                )
    return errors


class ValidationItem(BaseModel):
    locator: str
    elementType: str
    errors: list[str]


class ValidationResult(BaseModel):
    success: bool
    validationItems: list[ValidationItem] = []


def error_text(error: Error) -> str:
    return f"{error['path']}: {error['message']}" if error.get("path") else error["message"]


def validation_result(errors: list[Error], *, locator: str = "", element_type: str = "") -> ValidationResult:
    """The ValidationResult of `errors`, one item per (locator, elementType) in order of appearance;
    errors without their own locator/elementType belong to `locator`/`element_type`."""
    items: dict[tuple[str, str], list[str]] = {}
    for error in errors:
        key = (error.get("locator") or locator, error.get("elementType") or element_type)
        items.setdefault(key, []).append(error_text(error))
    return ValidationResult(
        success=not errors,
        validationItems=[
            ValidationItem(locator=key[0], elementType=key[1], errors=messages) for key, messages in items.items()
        ],
    )


# --- the checker ---------------------------------------------------------------------------------


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _locator_of(element: Any) -> str:
    locator = element.get("locator") if isinstance(element, dict) else None
    return locator if isinstance(locator, str) else ""


class _Checker:
    def __init__(self, model: dict[str, Any]) -> None:
        self.model = model
        self.errors: list[Error] = []
        self._element: tuple[str, str] | None = None  # (locator, elementType) of the element being checked

    def fail(self, path: str, message: str, *, locator: str | None = None, element_type: str | None = None) -> None:
        error = {"path": path, "message": message}
        if locator is not None or self._element is not None:
            current = self._element or ("", "")
            error["locator"] = current[0] if locator is None else locator
            error["elementType"] = current[1] if element_type is None else element_type
        self.errors.append(error)

    # objects and fields

    def object(self, properties: dict[str, Any], data: Any, path: str, depth: int) -> Any:
        if not isinstance(data, dict):
            self.fail(path, "must be an object")
            return self.raw(data, path, depth, quiet=True)
        if depth >= MAX_DEPTH:
            self.fail(path, f"is nested more than {MAX_DEPTH} levels deep")
            return _ABSENT
        result: dict[str, Any] = {}
        for name, prop in properties.items():
            field_path = _join(path, name)
            value = data.get(name)
            if value is None:
                checked = self.absent(prop, field_path, depth)
            else:
                checked = self.field(prop, value, field_path, depth)
            if checked is not _ABSENT:
                result[name] = checked
        for name, value in data.items():
            if name not in properties and value is not None:
                self.fail(_join(path, name), "is not a configured field")
                kept = self.raw(value, _join(path, name), depth + 1, quiet=True)
                if kept is not _ABSENT:
                    result[name] = kept
        return result

    def spec(self, prop: dict[str, Any], path: str) -> TypeSpec | None:
        try:
            return parse_type(prop.get("type") or "string")
        except ValueError as error:
            self.fail(path, f"cannot be checked: {error}")
            return None

    def absent(self, prop: dict[str, Any], path: str, depth: int) -> Any:
        spec = self.spec(prop, path)
        if spec is None:
            return _ABSENT
        default = prop.get("defaultValue")
        if default is not None and spec.is_builtin and not spec.is_list:
            return self.builtin(prop, spec.base, default, path, from_default=True)
        if spec.quantifier == "!" and not spec.is_builtin:
            return self.typed(prop, spec.base, {}, path, depth)
        if spec.quantifier == "+":
            self.fail(path, "needs at least one value")
        elif spec.quantifier in ("", "!"):
            self.fail(path, "is required")
        return _ABSENT

    def field(self, prop: dict[str, Any], value: Any, path: str, depth: int) -> Any:
        spec = self.spec(prop, path)
        if spec is None:
            return self.raw(value, path, depth, quiet=True)
        if not spec.is_list:
            if isinstance(value, list):
                self.fail(path, "must be a single value, not a list")
                return self.raw(value, path, depth, quiet=True)
            return self.typed(prop, spec.base, value, path, depth)
        if not isinstance(value, list):
            self.fail(path, "must be a list")
            return self.raw(value, path, depth, quiet=True)
        if spec.quantifier == "+" and not value:
            self.fail(path, "needs at least one value")
        items = [self.typed(prop, spec.base, item, f"{path}[{index}]", depth + 1) for index, item in enumerate(value)]
        return [item for item in items if item is not _ABSENT]

    def typed(self, prop: dict[str, Any], base: str, value: Any, path: str, depth: int) -> Any:
        if value is None:
            self.fail(path, "must not be null")
            return _ABSENT
        if base in BUILTIN_TYPES:
            return self.builtin(prop, base, value, path)
        data_type = (self.model.get("dataTypes") or {}).get(base)
        if not isinstance(data_type, dict):
            self.fail(path, f"cannot be checked: data type {base!r} is not defined")
            return self.raw(value, path, depth, quiet=True)
        return self.object(data_type.get("data") or {}, value, path, depth + 1)

    def raw(self, value: Any, path: str, depth: int, *, quiet: bool = False) -> Any:
        """A value kept as given, unless a store could not hold it (too deep, numbers out of range):
        that is dropped and reported (`quiet`: not reported, the caller has reported the value)."""
        problem = None
        if depth >= MAX_DEPTH:
            problem = f"is nested more than {MAX_DEPTH} levels deep"
        elif isinstance(value, dict):
            kept = {key: self.raw(item, _join(path, key), depth + 1, quiet=quiet) for key, item in value.items()}
            return {key: item for key, item in kept.items() if item is not _ABSENT}
        elif isinstance(value, list):
            items = [self.raw(item, f"{path}[{index}]", depth + 1, quiet=quiet) for index, item in enumerate(value)]
            return [item for item in items if item is not _ABSENT]
        elif isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            number = _number(value)
            if number is None:
                problem = "is not a finite number"
            elif not _storable(number):
                problem = "is a number outside the supported range"
        if problem is None:
            return value
        if not quiet:
            self.fail(path, problem)
        return _ABSENT

    # built-in types

    def builtin(self, prop: dict[str, Any], base: str, value: Any, path: str, *, from_default: bool = False) -> Any:
        if base == "string":
            checked = self.string(prop, value, path)
        elif base in ("int", "long"):
            checked = self.integer(prop, base, value, path)
        elif base == "decimal":
            checked = self.decimal(prop, value, path)
        elif base == "date":
            checked = self.date(prop, value, path)
        elif base == "datetime":
            checked = self.datetime(prop, value, path)
        elif base == "boolean":
            checked = self.boolean(value, path, from_default)
        else:
            checked = self.guid(value, path)
        if checked is _ABSENT:
            return self.raw(value, path, 0, quiet=True)
        self.check_options(prop, checked, path)
        return checked

    def string(self, prop: dict[str, Any], value: Any, path: str) -> Any:
        if not isinstance(value, str):
            self.fail(path, "must be a string")
            return _ABSENT
        min_length, max_length = _integer(prop.get("minLength")), _integer(prop.get("maxLength"))
        if min_length is not None and len(value) < min_length:
            self.fail(path, f"must be at least {min_length} characters long")
        if max_length is not None and len(value) > max_length:
            self.fail(path, f"must be at most {max_length} characters long")
        pattern = prop.get("regex")
        if isinstance(pattern, str) and pattern:
            compiled = _compiled(pattern)
            if compiled is None:
                self.fail(path, f"cannot be checked: the configured regex {pattern!r} is not valid")
            elif compiled.fullmatch(value) is None:
                self.fail(path, f"must match the pattern {pattern}")
        return value

    def integer(self, prop: dict[str, Any], base: str, value: Any, path: str) -> Any:
        number = _number(value)
        if number is None or number != number.to_integral_value():
            self.fail(path, "must be a whole number")
            return _ABSENT
        low, high = INT_RANGE if base == "int" else LONG_RANGE
        if not low <= number <= high:
            self.fail(path, f"must be between {low} and {high} ({'an int' if base == 'int' else 'a long'})")
            return _ABSENT
        self.check_bounds(prop, number, _number, path)
        return int(number)

    def decimal(self, prop: dict[str, Any], value: Any, path: str) -> Any:
        number = _number(value)
        if number is None:
            self.fail(path, "must be a number")
            return _ABSENT
        precision = _integer(prop.get("precision"))
        if precision is not None and precision >= 0:
            mode = ROUNDING_MODES.get(prop.get("roundingMode") or DEFAULT_ROUNDING, ROUND_HALF_UP)
            try:
                number = number.quantize(Decimal(1).scaleb(-precision), rounding=mode)
            except InvalidOperation:
                self.fail(path, "is a number outside the supported range")
                return _ABSENT
        if not _storable(number):
            self.fail(path, "is a number outside the supported range")
            return _ABSENT
        self.check_bounds(prop, number, _number, path)
        return number

    def date(self, prop: dict[str, Any], value: Any, path: str) -> Any:
        parsed = _date(value)
        if parsed is None:
            self.fail(path, "must be a date (YYYY-MM-DD)")
            return _ABSENT
        self.check_bounds(prop, parsed, _date, path)
        return parsed.isoformat()

    def datetime(self, prop: dict[str, Any], value: Any, path: str) -> Any:
        parsed = _datetime(value)
        if parsed is None:
            self.fail(path, "must be an ISO-8601 date-time")
            return _ABSENT
        self.check_bounds(prop, parsed, _datetime, path)
        return isoformat(parsed)

    def boolean(self, value: Any, path: str, from_default: bool) -> Any:
        if isinstance(value, bool):
            return value
        if from_default and isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        self.fail(path, "must be true or false")
        return _ABSENT

    def guid(self, value: Any, path: str) -> Any:
        try:
            return str(uuid.UUID(value))
        except (TypeError, ValueError, AttributeError):
            self.fail(path, "must be a GUID")
            return _ABSENT

    def check_bounds(self, prop: dict[str, Any], value: Any, parse: Any, path: str) -> None:
        low = parse(prop["min"]) if prop.get("min") is not None else None
        high = parse(prop["max"]) if prop.get("max") is not None else None
        if low is not None and value < low:
            self.fail(path, f"must be at least {prop['min']}")
        if high is not None and value > high:
            self.fail(path, f"must be at most {prop['max']}")

    def check_options(self, prop: dict[str, Any], value: Any, path: str) -> None:
        options = prop.get("options")
        if not options:
            return
        number = _number(value) if not isinstance(value, bool) else None
        for option in options:
            if _text(option) == _text(value) or (number is not None and _number(option) == number):
                return
        shown = ", ".join(_text(option) for option in options[:20]) + (", ..." if len(options) > 20 else "")
        self.fail(path, f"must be one of: {shown}")

    # element trees

    def element(self, element_type: ElementType, element: Any, path: str, depth: int) -> dict[str, Any]:
        outer = self._element
        self._element = (_locator_of(element), element_type.name)
        try:
            return self._checked_element(element_type, element, path, depth)
        finally:
            self._element = outer

    def _checked_element(self, element_type: ElementType, element: Any, path: str, depth: int) -> dict[str, Any]:
        if not isinstance(element, dict):
            self.fail(path, "must be an object")
            return {}
        if depth >= MAX_DEPTH:
            self.fail(path, f"is nested more than {MAX_DEPTH} levels deep")
            return {}
        result = dict(element)
        data = self.object(element_type.properties, element.get("data") or {}, _join(path, "data"), 0)
        result["data"] = data if isinstance(data, dict) else {}
        result["coverageTerms"] = self.coverage_terms(
            element_type, element.get("coverageTerms"), _join(path, "coverageTerms")
        )
        children = element.get("elements") or []
        if not isinstance(children, list):
            self.fail(_join(path, "elements"), "must be a list")
            children = []
        result["elements"] = self.children(element_type, children, path, depth)
        return result

    def children(self, parent: ElementType, children: list[Any], path: str, depth: int) -> list[Any]:
        allowed = {entry.name: entry for entry in parent.contents}
        types = element_types(self.model)
        counts: Counter[str] = Counter()
        result = []
        for index, child in enumerate(children):
            child_path = _join(path, f"elements[{index}]")
            name = child.get("type") if isinstance(child, dict) else None
            if name not in allowed or name not in types:
                contents = ", ".join(f"{e.name}{e.quantifier}" for e in allowed.values()) or "none"
                self.fail(_join(child_path, "type"), f"{name!r} is not allowed in {parent.name} (contents: {contents})")
                result.append(child)
                continue
            counts[name] += 1
            result.append(self.element(types[name], child, child_path, depth + 1))
        for entry in allowed.values():
            count = counts[entry.name]
            if count < entry.minimum:
                self.fail(
                    _join(path, "elements"),
                    f"needs at least {entry.minimum} {entry.name} ({entry.name}{entry.quantifier}), has {count}",
                )
            elif entry.maximum is not None and count > entry.maximum:
                self.fail(
                    _join(path, "elements"),
                    f"allows at most {entry.maximum} {entry.name} ({entry.name}{entry.quantifier}), has {count}",
                )
        return result

    def coverage_terms(self, element_type: ElementType, terms: Any, path: str) -> dict[str, Any]:
        if terms is None:
            terms = {}
        if not isinstance(terms, dict):
            self.fail(path, "must be an object")
            return {}
        allowed = {entry.name: entry for entry in element_type.coverage_terms}
        definitions = self.model.get("coverageTerms") or {}
        result: dict[str, Any] = {}
        for name, value in terms.items():
            term_path = _join(path, name)
            if value is None:
                continue
            if name not in allowed or not isinstance(definitions.get(name), dict):
                self.fail(term_path, f"is not a coverage term of {element_type.name}")
                kept = self.raw(value, term_path, 1, quiet=True)
                if kept is not _ABSENT:
                    result[name] = kept
                continue
            checked = self.term_value(definitions[name], value, term_path)
            if checked is not _ABSENT:
                result[name] = checked
        for name, entry in allowed.items():
            if terms.get(name) is not None or entry.quantifier == "?":
                continue
            _, default = option_keys(definitions.get(name) or {})
            if default is not None:
                result[name] = default
            else:
                self.fail(_join(path, name), "is required (the term has no default option)")
        return result

    def term_value(self, term: dict[str, Any], value: Any, path: str) -> Any:
        keys, _ = option_keys(term)
        if keys:
            if isinstance(value, str) and value in keys:
                return value
            self.fail(path, f"must be one of the options: {', '.join(keys)}")
            return self.raw(value, path, 1, quiet=True)
        prop = term.get("value")
        if isinstance(prop, dict):
            spec = self.spec(prop, path)
            if spec is not None and spec.is_builtin and not spec.is_list:
                return self.builtin(prop, spec.base, value, path)
        return self.raw(value, path, 1)


# --- value parsing -------------------------------------------------------------------------------


def _number(value: Any) -> Decimal | None:
    """A finite number given as a JSON number or a numeric string; None otherwise (booleans too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value)) if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        return Decimal(value.strip())
    return None


def _storable(number: Decimal) -> bool:
    if number.is_zero():
        return True
    digits = len(number.normalize().as_tuple().digits)
    return digits <= _MAX_STORED_DIGITS and -130 <= number.adjusted() < 126


def _integer(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number == number.to_integral_value() else None


def _date(value: Any) -> date | None:
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def _datetime(value: Any) -> Any:
    if not isinstance(value, str) or not _DATE.match(value):
        return None
    try:
        return parse_datetime(value)
    except ValueError:
        return None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else _text(value)
    return text if len(text) <= 60 else text[:57] + "..."


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None
