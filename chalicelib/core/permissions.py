"""Permission strings `group.action` and their wildcards `group.*` and `*.*`."""

from __future__ import annotations

from collections.abc import Iterable

ANY_TENANT = "any"


def grants(held: Iterable[str], required: str) -> bool:
    """True when one held permission covers `required`."""
    group, _, _action = required.partition(".")
    return any(p == required or p == "*.*" or p == f"{group}.*" for p in held)


def grants_any(held: Iterable[str], required: Iterable[str]) -> bool:
    held = frozenset(held)
    return any(grants(held, r) for r in required)


def is_valid_permission(text: str) -> bool:
    """`group.action`, `group.*` or `*.*`; `*.action` is not allowed."""
    group, dot, action = text.partition(".")
    if not dot or not group or not action or "." in action:
        return False
    if group == "*":
        return action == "*"
    return _is_name(group) and (action == "*" or _is_name(action))


def _is_name(part: str) -> bool:
    return all(c.isalnum() or c in "-_" for c in part)


def restrict(held: Iterable[str], wanted: Iterable[str]) -> frozenset[str]:
    """The part of `wanted` that `held` covers: what a token may do for its owner right now."""
    held = frozenset(held)
    allowed = set()
    for perm in wanted:
        if grants(held, perm):
            allowed.add(perm)
        elif perm.endswith(".*"):
            # a wildcard asked for but held only partly: keep the held permissions it covers
            allowed.update(p for p in held if grants([perm], p) and p != "*.*")
    return frozenset(allowed)


def tenant_allowed(tenants: Iterable[str], tenant_locator: str) -> bool:
    tenants = frozenset(tenants)
    return ANY_TENANT in tenants or tenant_locator in tenants
