"""`deployments/diff`: what deploying a given ConfigurationRef would change in the deployed one.

The answer is `map<string, MapDifference>`, one entry per top-level collection (every key whose
value is an object on either side: `accounts`, `products`, `workManagement`, ...), plus
`ROOT_PROPERTIES` for the configuration's own scalar and list properties (`defaultCurrency`, ...).
In each MapDifference, keyed by entity (or property) name:

- `added`: only in the given configuration, with the given value;
- `removed`: only in the deployed configuration, with the deployed value;
- `modified`: in both with different values, with the given value (what it would become).

The comparison is literal. Compare normal forms (`validator.validate(...).model` of the given
configuration against the deployed model), or casing and platform defaults show up as changes.
"""

from typing import Any

ROOT_PROPERTIES = "configuration"


def diff(given: dict[str, Any], deployed: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    differences: dict[str, dict[str, dict[str, Any]]] = {}
    for key in _keys_of(given, deployed):
        given_value, deployed_value = given.get(key), deployed.get(key)
        if isinstance(given_value, dict) or isinstance(deployed_value, dict):
            differences[key] = map_difference(_as_map(given_value), _as_map(deployed_value))
    given_properties = _properties(given)
    deployed_properties = _properties(deployed)
    if given_properties or deployed_properties:
        differences[ROOT_PROPERTIES] = map_difference(given_properties, deployed_properties)
    return differences


def map_difference(given: dict[str, Any], deployed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        "added": {key: value for key, value in given.items() if key not in deployed},
        "modified": {key: value for key, value in given.items() if key in deployed and deployed[key] != value},
        "removed": {key: value for key, value in deployed.items() if key not in given},
    }


def _keys_of(given: dict[str, Any], deployed: dict[str, Any]) -> list[str]:
    return [*given, *(key for key in deployed if key not in given)]


def _as_map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _properties(model: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in model.items() if not isinstance(value, dict)}
