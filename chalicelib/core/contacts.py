"""The contacts of an account, quote or policy: who they are and in which roles. Pure.

Each function answers a new list (the records are not changed in place). Errors name the record's
kind: 409 `{code}.contact_exists`, 404 `contact.not_found`, 400 `{code}.invalid_reference` for a role
outside the tenant's `contactRoles` (when the configuration lists any).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, Self, TypeVar

from chalicelib.core import codes
from chalicelib.core.errors import FieldError


class Contact(Protocol):
    contactLocator: str
    roles: list[str]

    # pragma: no mutate block (a signature, never run: mutants of its defaults change nothing)
    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self: ...


C = TypeVar("C", bound=Contact)


def added(contacts: Sequence[C], contact: C, *, code: str, noun: str) -> list[C]:
    """`contact` added; 409 when it is there already (its roles change with `with_roles`)."""
    if _find(contacts, contact.contactLocator) is not None:
        raise codes.CONTACT_EXISTS[code](f"Contact {contact.contactLocator} is on the {noun} already")
    return [*contacts, contact]


def with_roles(
    contacts: Sequence[C], contact_locator: str, *, add_roles: Iterable[str], remove_roles: Iterable[str]
) -> list[C]:
    """The contact's roles less `remove_roles`, then plus `add_roles` it lacks."""
    current = _existing(contacts, contact_locator)
    removing = set(remove_roles)
    roles = [role for role in current.roles if role not in removing]
    roles += [role for role in dict.fromkeys(add_roles) if role not in roles]
    return [contact.model_copy(update={"roles": roles}) if contact is current else contact for contact in contacts]


def removed(contacts: Sequence[C], contact_locator: str) -> list[C]:
    current = _existing(contacts, contact_locator)
    return [contact for contact in contacts if contact is not current]


def merged(current: Sequence[C], setting: Sequence[C], removing: Iterable[str]) -> list[C]:
    """`setting` replaces the roles of contacts it names and adds the others; `removing` drops."""
    given = {contact.contactLocator: contact for contact in setting}
    known = {contact.contactLocator for contact in current}
    dropped = set(removing)
    result = [given.get(contact.contactLocator, contact) for contact in current]
    result += [contact for contact in setting if contact.contactLocator not in known]
    return [contact for contact in result if contact.contactLocator not in dropped]


def problems(contacts: Iterable[Contact], configured_roles: Sequence[str] | None = None) -> list[FieldError]:
    """What is wrong with the contacts a request lists: a contact twice, and (given the configured
    roles) a role the configuration lacks."""
    found = []
    seen: set[str] = set()
    for index, contact in enumerate(contacts):
        if contact.contactLocator in seen:
            found.append(FieldError(f"contacts.{index}.contactLocator", "is listed more than once"))
        seen.add(contact.contactLocator)
        unknown = _unknown_roles(configured_roles or [], contact.roles)
        if unknown:
            found.append(FieldError(f"contacts.{index}.roles", _roles_problem(unknown, configured_roles or [])))
    return found


def check_roles(configured_roles: Sequence[str], roles: Iterable[str], field: str, *, code: str) -> None:
    unknown = _unknown_roles(configured_roles, roles)
    if unknown:
        raise codes.INVALID_REFERENCE[code](
            "Unknown contact role", field_errors=[FieldError(field, _roles_problem(unknown, configured_roles))]
        )


def _unknown_roles(configured: Sequence[str], roles: Iterable[str]) -> list[str]:
    return [role for role in roles if configured and role not in configured]


def _roles_problem(unknown: Sequence[str], configured: Sequence[str]) -> str:
    return f"{', '.join(unknown)} not in the configured contactRoles: {', '.join(configured)}"


def _find(contacts: Sequence[C], contact_locator: str) -> C | None:
    return next((contact for contact in contacts if contact.contactLocator == contact_locator), None)


def _existing(contacts: Sequence[C], contact_locator: str) -> C:
    found = _find(contacts, contact_locator)
    if found is None:
        raise codes.not_found("contact", contact_locator)
    return found
