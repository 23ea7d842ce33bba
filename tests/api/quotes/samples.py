"""Minimal valid records for any configuration: the required data of a type, the required elements of a
product, built from the resolved data model (GET .../datamodel?resolve=true). For quoting the real
packages, whose products have dozens of required fields."""

from __future__ import annotations

import re
from typing import Any

QUANTIFIERS = "?*+!"
BUILTIN = {"string", "int", "long", "decimal", "date", "datetime", "boolean", "guid"}
_STRING_CANDIDATES = ("Sample", "a@example.com", "AAA", "12345", "A1", "1", "sample-1", "1HGCM82633A004352")


def data_for(model: dict[str, Any], properties: dict[str, Any]) -> dict[str, Any]:
    """A value for every required field (no quantifier, `+` or `!`), none for the optional ones."""
    data = {}
    for name, prop in properties.items():
        type_text = str(prop.get("type") or "string")
        quantifier = type_text[-1] if type_text[-1] in QUANTIFIERS else ""
        if quantifier in ("?", "*") or prop.get("defaultValue") is not None:
            continue
        value = _value(model, type_text.rstrip(QUANTIFIERS), prop)
        data[name] = [value] if quantifier == "+" else value
    return data


def element_for(model: dict[str, Any], type_name: str, definition: dict[str, Any]) -> dict[str, Any]:
    """An element with its required data, coverage terms and required children (one of each `+`)."""
    children = []
    for entry in definition.get("contents") or []:
        name, quantifier = (entry[:-1], entry[-1]) if entry[-1] in QUANTIFIERS else (entry, "")
        if quantifier in ("?", "*", "!"):
            continue
        child = _element_types(model)[name]
        children.append({"type": name, **_body(model, name, child)})
    return {"type": type_name, **_body(model, type_name, definition, children)}


def _body(
    model: dict[str, Any], type_name: str, definition: dict[str, Any], children: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    if children is None:
        children = element_for(model, type_name, definition)["elements"]
    terms = {}
    for entry in definition.get("coverageTerms") or []:
        name = entry.rstrip(QUANTIFIERS)
        options = list(((model.get("coverageTerms") or {}).get(name) or {}).get("options") or {})
        if entry.endswith("?") or not options or any(key.startswith("*") for key in options):
            continue
        terms[name] = options[0]
    return {"data": data_for(model, definition.get("data") or {}), "coverageTerms": terms, "elements": children}


def _element_types(model: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for collection in ("coverages", "exposures", "exposureGroups", "policyLines"):
        found.update(model.get(collection) or {})
    return found


def _value(model: dict[str, Any], base: str, prop: dict[str, Any]) -> Any:
    options = prop.get("options")
    if options:
        return options[0]
    if base == "string":
        return _string(prop)
    if base in ("int", "long"):
        return int(prop.get("min") or 1)
    if base == "decimal":
        return str(prop.get("min") or "1")
    if base == "date":
        return prop.get("min") or "2020-01-01"
    if base == "datetime":
        return "2020-01-01T00:00:00Z"
    if base == "boolean":
        return False
    if base == "guid":
        return "00000000-0000-4000-8000-000000000001"
    return data_for(model, ((model.get("dataTypes") or {}).get(base) or {}).get("data") or {})


def _string(prop: dict[str, Any]) -> str:
    length = int(prop.get("minLength") or 1)
    pattern = prop.get("regex")
    for candidate in _STRING_CANDIDATES:
        text = candidate.ljust(length, "x") if not pattern else candidate
        if not pattern or re.fullmatch(pattern, text):
            return text
    raise ValueError(f"no sample string matches {pattern!r}")
