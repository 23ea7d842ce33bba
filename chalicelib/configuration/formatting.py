"""formatConfig: property names and enum values in the spec's casing, everything else untouched.

Real packages write `"category": "Premium"` or `"nonfinancial"`, and the docs show `Accounts/`
folders (config-packages.md §5). Property names (ConfigurationRef keys, which are also the folder
names, and the fields of every entity) and enum values are matched case-insensitively against the
schema and rewritten to its spelling. Entity names, data field names, option keys and any other
user-chosen text are left alone: other parts of the package refer to them.
"""

import copy
from typing import Any

from chalicelib.configuration.package import ConfigPackage, deep_merge, read_package, write_package
from chalicelib.configuration.schema import ROOT, SCHEMAS, Kind, ListOf, MapOf, Obj, OneOf, Schema


def format_package(zip_bytes: bytes) -> bytes:
    """The package with its casing fixed, as ZIP bytes in the download layout. Raises
    PackageError as read_package does."""
    package = read_package(zip_bytes)
    return write_package(ConfigPackage(format_model(package.model), package.plugins, package.other_files))


def format_model(model: dict[str, Any]) -> dict[str, Any]:
    """A copy of the model with property names and enum values in canonical casing. When two keys
    differ only in casing, objects are merged and otherwise the canonically spelled key wins."""
    formatted: dict[str, Any] = _format(model, ROOT)
    return formatted


def _format(value: Any, kind: Kind) -> Any:
    match kind:
        case Obj(schema=name) if isinstance(value, dict):
            return _format_object(value, SCHEMAS[name])
        case MapOf(value=item_kind) if isinstance(value, dict):
            return {key: _format(item, item_kind) for key, item in value.items()}
        case ListOf(item=item_kind) if isinstance(value, list):
            return [_format(item, item_kind) for item in value]
        case OneOf() if isinstance(value, str):
            return kind.canonical(value) or value
    return copy.deepcopy(value)


def _format_object(value: dict[str, Any], schema: Schema) -> dict[str, Any]:
    formatted: dict[str, Any] = {}
    for key, item in value.items():
        canonical = schema.canonical_key(key)
        new_value = _format(item, schema.fields[canonical]) if canonical else copy.deepcopy(item)
        target = canonical or key
        existing = formatted.get(target)
        if isinstance(existing, dict) and isinstance(new_value, dict):
            deep_merge(existing, new_value)
        elif target not in formatted or key == canonical:
            formatted[target] = new_value
    return formatted
