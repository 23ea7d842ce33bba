"""Validation of a ConfigurationRef as the platform does it, and its normal form.

`validate` first puts property names and enum values in canonical casing (formatting.py), then
walks the model against the schema (schema.py): JSON types, enum values, required fields, names,
property types and references, filling in the platform's defaults as it goes. Then it checks what
spans entities: `extend` chains and the minimum content (an account type, a product, a premium
charge). Every error starts with the path of the value it is about, e.g.
`products.PersonalAuto.contents[0]: 'Vehicle+' is not defined in coverages, exposures, ...`.

Entities that `extend` another get no defaults and no required-field check of their own: they
inherit those fields, and the root of their chain is checked and defaulted instead.
"""

import copy
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from chalicelib.configuration.formatting import format_model
from chalicelib.configuration.schema import (
    BUILTIN_TYPES,
    NO_DEFAULT,
    ROOT,
    SCHEMAS,
    Kind,
    ListOf,
    MapOf,
    Obj,
    OneOf,
    Ref,
    Scalar,
    Schema,
    extendable_collections,
    lookup,
)

MAX_NAME_LENGTH = 128
JAVA_RESERVED_WORDS = frozenset(
    """abstract assert boolean break byte case catch char class const continue default do double else enum
    extends final finally float for goto if implements import instanceof int interface long native new
    package private protected public return short static strictfp super switch synchronized this throw
    throws transient try void volatile while true false null _""".split()
)
LEGACY_ROOT_KEYS = frozenset({"timezone", "currency", "improvedRating", "policyholder"})

_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_PROPERTY_TYPE = re.compile(r"([^\W\d]\w*)([?*+!]?)")
_CURRENCY_CODE = re.compile(r"[A-Z]{3}")
_SCOPE_CODES = frozenset({"QQ", "Q", "P"})
_QUANTIFIERS = "?*+!"
_AVAILABILITY_SETTINGS = ("availableAfter", "retireAfter", "retire", "removeOnRenewalAfter", "removeOnRenewal")


@dataclass(frozen=True)
class ValidationOutcome:
    """`model` is the normal form: canonical casing and platform defaults, also when invalid."""

    is_success: bool
    errors: list[str]
    model: dict[str, Any]

    def as_result(self) -> dict[str, Any]:
        """The `validation-result.json` / ConfigBuilderResult shape."""
        return {"isSuccess": self.is_success, "errors": list(self.errors)}


def validate(model: dict[str, Any]) -> ValidationOutcome:
    if not isinstance(model, dict):
        return ValidationOutcome(False, ["the configuration must be a JSON object"], {})
    if LEGACY_ROOT_KEYS & model.keys():
        message = (
            "this is a legacy (pre-Enterprise Core) Socotra configuration "
            f"(root keys {', '.join(sorted(LEGACY_ROOT_KEYS & model.keys()))}); it is not supported"
        )
        return ValidationOutcome(False, [message], copy.deepcopy(model))
    normalised = format_model(model)
    checker = _Checker(normalised)
    checker.visit(normalised, ROOT, "")
    checker.check_extend_chains()
    checker.check_minimum_content()
    return ValidationOutcome(not checker.errors, checker.errors, normalised)


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _json_type(value: Any) -> str:
    match value:
        case bool():
            return "boolean"
        case int() | float() | Decimal():
            return "number"
        case str():
            return "string"
        case list():
            return "array"
        case dict():
            return "object"
    return "null"


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, Decimal):
        return value.is_finite()
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _is_integer(value: Any) -> bool:
    """Whole numbers only; Decimals are compared without expanding their digits (1E+999999)."""
    if not _is_number(value):
        return False
    if isinstance(value, Decimal):
        return value == value.to_integral_value()
    return isinstance(value, int) or value.is_integer()


def _is_datetime(value: Any) -> bool:
    try:
        datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return False
    return True


def _is_currency(value: Any) -> bool:
    return isinstance(value, str) and bool(_CURRENCY_CODE.fullmatch(value))


def _is_scope(value: Any) -> bool:
    return isinstance(value, str) and all(code.strip() in _SCOPE_CODES for code in value.split(","))


_SCALAR_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "string": (lambda value: isinstance(value, str), "a string"),
    "integer": (_is_integer, "an integer"),
    "number": (_is_number, "a number"),
    "boolean": (lambda value: isinstance(value, bool), "a boolean"),
    "text": (lambda value: isinstance(value, str | bool) or _is_number(value), "a string"),
    "datetime": (_is_datetime, "an ISO-8601 date-time"),
    "currency": (_is_currency, "a currency code"),
    "scope": (_is_scope, "a comma-separated list of QQ, Q and P"),
    "any": (lambda value: True, "anything"),
}


def _name_error(name: str) -> str | None:
    """Why `name` cannot name an entity, a data field or an option (the platform turns them into
    Java identifiers), or None when it can."""
    if not _IDENTIFIER.fullmatch(name):
        return f"'{name}' is not a valid name: a letter or underscore, then letters, digits or underscores"
    if name in JAVA_RESERVED_WORDS:
        return f"'{name}' is a reserved word"
    if len(name) > MAX_NAME_LENGTH:
        return f"'{name[:20]}...' is longer than {MAX_NAME_LENGTH} characters"
    return None


class _Checker:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.errors: list[str] = []

    def fail(self, path: str, message: str) -> None:
        self.errors.append(f"{path}: {message}" if path else message)

    def visit(self, value: Any, kind: Kind, path: str, *, inherits: bool = False) -> None:
        match kind:
            case Obj(schema=name):
                self.visit_object(value, name, path, inherits)
            case MapOf():
                self.visit_map(value, kind, path)
            case ListOf():
                self.visit_list(value, kind, path)
            case OneOf():
                self.check_enum(value, kind, path)
            case Ref():
                self.check_reference(value, kind, path)
            case Scalar(name="propertyType"):
                self.check_property_type(value, path)
            case Scalar(name=scalar):
                accepts, expected = _SCALAR_CHECKS[scalar]
                if not accepts(value):
                    self.fail(path, f"expected {expected}, got {_json_type(value)} {_shown(value)}")

    def visit_object(self, value: Any, schema_name: str, path: str, inherits: bool) -> None:
        if not isinstance(value, dict):
            self.fail(path, f"expected an object, got {_json_type(value)}")
            return
        schema = SCHEMAS[schema_name]
        if not inherits:
            self.apply_defaults(value, schema)
            for field in sorted(schema.required):
                if value.get(field) is None:
                    self.fail(_child(path, field), "is required")
        for field, item in list(value.items()):
            field_kind = schema.fields.get(field)
            if field_kind is not None and item is not None:
                self.visit(item, field_kind, _child(path, field))
        object_check = _OBJECT_CHECKS.get(schema_name)
        if object_check:
            object_check(self, value, path)

    def apply_defaults(self, value: dict[str, Any], schema: Schema) -> None:
        for field, default in schema.defaults.items():
            if value.get(field) is not None:
                continue
            filled = default(value, self.root) if callable(default) else copy.deepcopy(default)
            if filled is not NO_DEFAULT:
                value[field] = filled

    def visit_map(self, value: Any, kind: MapOf, path: str) -> None:
        if not isinstance(value, dict):
            self.fail(path, f"expected an object, got {_json_type(value)}")
            return
        for key, item in value.items():
            item_path = _child(path, key)
            self.check_key(key, kind.keys, item_path)
            self.visit(item, kind.value, item_path, inherits=_extends_another(item, kind.value))

    def check_key(self, key: str, rule: str, path: str) -> None:
        match rule:
            case "name":
                problem = _name_error(key)
            case "option":
                problem = _name_error(key.removeprefix("*"))
            case "currency":
                problem = None if _CURRENCY_CODE.fullmatch(key) else f"'{key}' is not an ISO 4217 currency code"
            case _:
                problem = None
        if problem:
            self.fail(path, problem)

    def visit_list(self, value: Any, kind: ListOf, path: str) -> None:
        if not isinstance(value, list):
            self.fail(path, f"expected an array, got {_json_type(value)}")
            return
        seen: set[str] = set()
        for index, item in enumerate(value):
            item_path = f"{path}[{index}]"
            self.visit(item, kind.item, item_path)
            if isinstance(kind.item, Ref) and isinstance(item, str):
                name = item.rstrip(_QUANTIFIERS)
                if name in seen:
                    self.fail(item_path, f"'{name}' is listed more than once")
                seen.add(name)

    def check_enum(self, value: Any, kind: OneOf, path: str) -> None:
        if value not in kind.values:
            self.fail(path, f"{_shown(value)} is not one of {', '.join(kind.values)}")

    def check_reference(self, value: Any, ref: Ref, path: str) -> None:
        if not isinstance(value, str):
            self.fail(path, f"expected a name, got {_json_type(value)}")
            return
        name = value
        if value[-1:] and value[-1] in _QUANTIFIERS:
            if value[-1] not in ref.quantifiers:
                problem = f"the quantifier '{value[-1]}' is not allowed here ({_allowed(ref)})"
                self.fail(path, f"'{value}': {problem}")
                return
            name = value[:-1]
        target = self.find(ref.targets, name)
        if target is None:
            if name != ref.builtin:
                self.fail(path, f"'{name}' is not defined in {_or_list(ref.targets)}")
        elif ref.concrete and target.get("abstract") is True:
            self.fail(path, f"'{name}' is abstract and cannot be used directly")
        elif ref.category and target.get("category") != ref.category:
            self.fail(path, f"'{name}' is a {target.get('category')} transaction type, not {ref.category}")

    def find(self, targets: tuple[str, ...], name: str) -> dict[str, Any] | None:
        for target in targets:
            collection = lookup(self.root, target)
            if isinstance(collection, dict) and name in collection:
                entity = collection[name]
                return entity if isinstance(entity, dict) else {}
        return None

    def check_property_type(self, value: Any, path: str) -> None:
        match = _PROPERTY_TYPE.fullmatch(value) if isinstance(value, str) else None
        if match is None:
            self.fail(
                path,
                f"{_shown(value)} is not a valid type: a built-in type or a data type, "
                "optionally followed by ?, * or +",
            )
            return
        base, quantifier = match.groups()
        if base in BUILTIN_TYPES:
            if quantifier == "!":
                self.fail(path, f"'{value}': '!' applies to data types only")
        elif self.find(("dataTypes",), base) is None:
            builtins = ", ".join(BUILTIN_TYPES)
            self.fail(path, f"'{base}' is neither a built-in type ({builtins}) nor defined in dataTypes")

    def check_extend_chains(self) -> None:
        for path, collection in extendable_collections(self.root):
            for name, entity in collection.items():
                if isinstance(entity, dict) and isinstance(entity.get("extend"), str):
                    self.check_extend_chain(path, collection, name)

    def check_extend_chain(self, path: str, collection: dict[str, Any], name: str) -> None:
        """Reports a missing parent on the entity that names it, and a cycle on each member."""
        chain = [name]
        entity = collection[name]
        while isinstance(entity, dict) and isinstance(parent := entity.get("extend"), str):
            if parent not in collection:
                if len(chain) == 1:
                    self.fail(f"{path}.{name}.extend", f"'{parent}' is not defined in {path}")
                return
            if parent == name:
                cycle = " -> ".join([*chain, parent])
                self.fail(f"{path}.{name}.extend", f"the extend chain is circular: {cycle}")
                return
            if parent in chain:
                return
            chain.append(parent)
            entity = collection[parent]

    def check_minimum_content(self) -> None:
        for collection, what in (("accounts", "account type"), ("products", "product")):
            if self.root.get(collection) in (None, {}):
                self.fail(collection, f"at least one {what} is required")
        charges = self.root.get("charges")
        if charges is None or isinstance(charges, dict):
            entities = (charges or {}).values()
            categories = {charge.get("category") for charge in entities if isinstance(charge, dict)}
            if "premium" not in categories:
                self.fail("charges", "at least one charge with category 'premium' is required")


def _extends_another(entity: Any, kind: Kind) -> bool:
    return (
        isinstance(kind, Obj)
        and "extend" in SCHEMAS[kind.schema].fields
        and isinstance(entity, dict)
        and isinstance(entity.get("extend"), str)
    )


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, Decimal) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _allowed(ref: Ref) -> str:
    return f"allowed: {', '.join(ref.quantifiers)}" if ref.quantifiers else "a plain name is expected"


def _or_list(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


# Checks that span the fields of one object --------------------------------------------------------


def _check_one_default_option(checker: _Checker, term: dict[str, Any], path: str) -> None:
    options = term.get("options")
    defaults = [key for key in options if key.startswith("*")] if isinstance(options, dict) else []
    if len(defaults) > 1:
        checker.fail(_child(path, "options"), f"more than one default option (marked *): {', '.join(defaults)}")


def _check_constraint_column(checker: _Checker, constraint: dict[str, Any], path: str) -> None:
    table_name, column = constraint.get("table"), constraint.get("column")
    table = checker.find(("constraintTables",), table_name) if isinstance(table_name, str) else None
    columns = table.get("columns") if table else None
    if isinstance(columns, dict) and isinstance(column, str) and column not in columns:
        checker.fail(_child(path, "column"), f"'{column}' is not a column of constraint table '{table_name}'")


def _check_qualification_levels(checker: _Checker, role: dict[str, Any], path: str) -> None:
    """A role's qualification names a qualification and one of its levels; `UW-3+` means level
    UW-3 or higher."""
    required = role.get("qualification")
    if not isinstance(required, dict):
        return
    defined = lookup(checker.root, "workManagement.qualifications") or {}
    for qualification, level in required.items():
        level_path = _child(_child(path, "qualification"), qualification)
        levels = defined.get(qualification) if isinstance(defined, dict) else None
        if not isinstance(levels, list):
            checker.fail(level_path, f"'{qualification}' is not defined in workManagement.qualifications")
        elif isinstance(level, str) and level.removesuffix("+") not in levels:
            checker.fail(level_path, f"'{level}' is not a level of qualification '{qualification}'")


def _check_availability_is_set(checker: _Checker, availability: dict[str, Any], path: str) -> None:
    if not any(availability.get(setting) is not None for setting in _AVAILABILITY_SETTINGS):
        checker.fail(path, f"set at least one of {', '.join(_AVAILABILITY_SETTINGS)}")


_OBJECT_CHECKS: dict[str, Callable[[_Checker, dict[str, Any], str], None]] = {
    "CoverageTermRef": _check_one_default_option,
    "PropertyConstraint": _check_constraint_column,
    "UserAssociationRoleRef": _check_qualification_levels,
    "AvailabilityRef": _check_availability_is_set,
}
