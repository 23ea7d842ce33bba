"""What a request to create or change a priceable thing names must exist in the configuration; and
the tenant's defaults for what it leaves out. Pure (reads a resolved model).

Errors carry the user's code prefix: `{code}.unknown_product`, `{code}.abstract_product` and
`{code}.invalid_reference` (400), `{code}.product_not_configured` (409, for a stored record whose
product the configuration no longer has), `{code}.account_not_eligible` (400).
"""
from __future__ import annotations

import zoneinfo
from collections.abc import Iterable
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from chalicelib.core.errors import FieldError, InvalidRequest, InvalidState, PayloadTooLarge
from chalicelib.priceable.models import DurationBasis, Entity

DEFAULT_CURRENCY = "USD"
DEFAULT_TIME_ZONE = "UTC"
DEFAULT_DURATION_BASIS = DurationBasis.MONTHS
MAX_RECORD_BYTES = 300_000
PLAN_REFERENCES = {"delinquencyPlanName": "delinquencyPlans", "autoRenewalPlanName": "autoRenewalPlans",
                   "region": "regions"}


class Contact(Protocol):
    contactLocator: str
    roles: list[str]


C = TypeVar("C", bound=Contact)


def product(model: dict[str, Any], name: str, entity: Entity, *, in_request: bool = False) -> dict[str, Any]:
    """The resolved product. A request naming an unknown or abstract product is a 400; a stored
    record whose product the configuration no longer has is a 409."""
    definition = (model.get("products") or {}).get(name)
    if isinstance(definition, dict) and definition.get("abstract") is not True:
        return definition
    what = "is not a configured product" if not isinstance(definition, dict) else "is abstract"
    if not in_request:
        raise InvalidState(f"Product {name} {what} in this configuration", code=f"{entity.code}.product_not_configured")
    code = f"{entity.code}.unknown_product" if not isinstance(definition, dict) else f"{entity.code}.abstract_product"
    raise InvalidRequest(f"Product {name} {what}", code=code, field_errors=[FieldError("productName", what)])


def check_eligible(definition: dict[str, Any], name: str, account_type: str, entity: Entity) -> None:
    eligible = definition.get("eligibleAccountTypes") or []
    if eligible and account_type not in eligible:
        raise InvalidRequest(f"Product {name} is not available to {account_type} accounts",
                             code=f"{entity.code}.account_not_eligible", field_errors=[FieldError(
                                 "accountLocator", f"its type {account_type} is not among {', '.join(eligible)}")])


def check_references(model: dict[str, Any], fields: Any, contacts: Iterable[Contact], entity: Entity) -> None:
    """What the request names must exist: plans, the region, the time zone, contact roles."""
    problems = []
    for name, collection in PLAN_REFERENCES.items():
        value = getattr(fields, name, None)
        if value is not None and value not in (model.get(collection) or {}):
            problems.append(FieldError(name, f"'{value}' is not defined in the configuration's {collection}"))
    preferences = getattr(fields, "preferences", None)
    plan = preferences.installmentPreferences.installmentPlanName \
        if preferences is not None and preferences.installmentPreferences is not None else None
    if plan is not None and plan not in (model.get("installmentPlans") or {}):
        problems.append(FieldError("preferences.installmentPreferences.installmentPlanName",
                                   f"'{plan}' is not defined in the configuration's installmentPlans"))
    zone = getattr(fields, "timezone", None)
    if zone is not None and not is_time_zone(zone):
        problems.append(FieldError("timezone", f"'{zone}' is not an IANA time zone"))
    configured = model.get("contactRoles") or []
    seen: set[str] = set()
    for index, contact in enumerate(contacts):
        if contact.contactLocator in seen:
            problems.append(FieldError(f"contacts.{index}.contactLocator", "is listed more than once"))
        seen.add(contact.contactLocator)
        unknown = [role for role in contact.roles if configured and role not in configured]
        if unknown:
            problems.append(FieldError(f"contacts.{index}.roles", f"{', '.join(unknown)} not in the configured "
                                                                  f"contactRoles: {', '.join(configured)}"))
    if problems:
        raise InvalidRequest(f"The {entity.noun} names something the configuration does not have",
                             code=f"{entity.code}.invalid_reference", field_errors=problems)


def default_time_zone(model: dict[str, Any]) -> str:
    zone = model.get("defaultTimeZone")
    return zone if isinstance(zone, str) and is_time_zone(zone) else DEFAULT_TIME_ZONE


def default_basis(model: dict[str, Any], definition: dict[str, Any]) -> str:
    return definition.get("defaultDurationBasis") or model.get("defaultDurationBasis") or DEFAULT_DURATION_BASIS


def default_currency(model: dict[str, Any]) -> str:
    return model.get("defaultCurrency") or DEFAULT_CURRENCY


def is_time_zone(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def merged_contacts(current: list[C], setting: list[C], removing: list[str]) -> list[C]:
    """`setting` replaces the roles of contacts it names and adds the others; `removing` drops."""
    given = {contact.contactLocator: contact for contact in setting}
    known = {contact.contactLocator for contact in current}
    merged = [given.get(contact.contactLocator, contact) for contact in current]
    merged += [contact for contact in setting if contact.contactLocator not in known]
    return [contact for contact in merged if contact.contactLocator not in removing]


def check_size(record: BaseModel, entity: Entity) -> None:
    """A record is one table item, which DynamoDB caps at 400 KB."""
    size = len(record.model_dump_json())
    if size > MAX_RECORD_BYTES:
        raise PayloadTooLarge(f"The {entity.noun} would take {size} bytes; at most {MAX_RECORD_BYTES} are allowed",
                              code=f"{entity.code}.too_large")
