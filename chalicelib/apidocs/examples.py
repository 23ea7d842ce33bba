"""An example value for a JSON schema of the generated description: every required field (every field of
an object that requires none, nested two levels; arrays three levels deep), the first choice of an enum or
`anyOf`, a value of the field's format or pattern, and names that read as what they hold (a `...Locator`
is a locator). The example
is valid against its schema, so a reader can send it as it is shown."""

from __future__ import annotations

from typing import Any

LOCATOR = "01JD8Z3X5Y7Q2W4E6R8T0Y2V4K"
EMAIL = "ada@example.com"
FORMATS = {
    "date-time": "2026-01-15T09:30:00Z",
    "date": "2026-01-15",
    "uuid": "6f1c2a4e-8b3d-4f5a-9c7e-1d2b3a4c5e6f",
    "duration": "P1D",
    "time": "09:30:00",
}
ARRAY_DEPTH = 3
"""Arrays deeper than this are shown empty (an element tree holds elements holding elements...)."""


def example_of(schema: dict[str, Any], components: dict[str, Any], name: str = "", depth: int = 0) -> Any:
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[1]]
    if "example" in schema:
        return schema["example"]
    if schema.get("examples"):
        return schema["examples"][0]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    for combiner in ("anyOf", "oneOf"):
        options = [option for option in schema.get(combiner, []) if option.get("type") != "null"]
        if options:
            return example_of(options[0], components, name, depth)
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = example_of(part, components, name, depth)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or "properties" in schema:
        return _object(schema, components, depth)
    if kind == "array":
        if depth >= ARRAY_DEPTH and not schema.get("minItems") or "items" not in schema:
            return []
        return [example_of(schema["items"], components, name, depth + 1)]
    if kind == "string":
        return _string(schema, name)
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return max(100, schema.get("minimum", 100))
    if kind == "boolean":
        return False
    return {}


def _object(schema: dict[str, Any], components: dict[str, Any], depth: int) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties", {})
    chosen = schema.get("required") or (list(properties) if depth < 2 else [])
    return {
        field: example_of(properties[field], components, field, depth + 1) for field in chosen if field in properties
    }


def _string(schema: dict[str, Any], name: str) -> str:
    if schema.get("format") in FORMATS:
        return FORMATS[schema["format"]]
    pattern = schema.get("pattern", "")
    if "@" in pattern or schema.get("format") == "email":
        return EMAIL
    if "{26}" in pattern:
        return LOCATOR
    if pattern == "^[A-Z]{3}$":
        return "USD"
    if name.endswith("Locator") or name == "locator":
        return LOCATOR
    if name.endswith("Time") or name.endswith("At"):
        return FORMATS["date-time"]
    length = max(int(schema.get("minLength", 0)), 1)
    text = name or "text"
    return (text * length)[: max(length, len(text))]
