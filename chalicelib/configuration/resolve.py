"""The data model with inheritance applied (`datamodel?resolve=true`).

An entity that `extend`s another gets its parent's fields first (the parent itself resolved), then
its own: a field the child sets replaces the parent's, except that objects such as `data` are
merged key by key, so the child adds fields and replaces same-named ones whole. Lists are replaced
when the child gives one. `abstract` is not inherited: a concrete child of an abstract base is
concrete (SimpleAutoRatingPlugin's coverages omit `abstract` and extend an abstract base).
Entities without `extend`, and everything that is not an entity, are returned as they are.
"""

import copy
from typing import Any

from chalicelib.configuration.schema import extendable_collections

NOT_INHERITED = frozenset({"abstract"})


def resolve(model: dict[str, Any]) -> dict[str, Any]:
    """A copy of a valid model with every extend chain applied. Raises ValueError on a chain that
    names a missing entity or loops, which validation rejects."""
    resolved = copy.deepcopy(model)
    for path, collection in extendable_collections(resolved):
        declared = dict(collection)
        done: dict[str, Any] = {}
        for name in declared:
            collection[name] = _resolved_entity(declared, name, path, done, ())
    return resolved


def _resolved_entity(
    declared: dict[str, Any], name: str, path: str, done: dict[str, Any], descendants: tuple[str, ...]
) -> Any:
    if name in done:
        return done[name]
    entity = declared[name]
    parent = entity.get("extend") if isinstance(entity, dict) else None
    if not isinstance(parent, str):
        result = entity
    elif parent == name or parent in descendants:
        raise ValueError(f"{path}: the extend chain is circular: {' -> '.join((*descendants, name, parent))}")
    elif parent not in declared:
        raise ValueError(f"{path}.{name}: extends '{parent}', which is not defined")
    else:
        base = _resolved_entity(declared, parent, path, done, (*descendants, name))
        result = _inherit(base, entity)
    done[name] = result
    return result


def _inherit(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    merged = {key: copy.deepcopy(value) for key, value in parent.items() if key not in NOT_INHERITED}
    for key, value in child.items():
        inherited = merged.get(key)
        if isinstance(inherited, dict) and isinstance(value, dict):
            merged[key] = {**inherited, **value}
        else:
            merged[key] = value
    return merged
