"""What a request to create or change a priceable thing names must exist in the configuration; and
the tenant's defaults for what it leaves out. Pure (reads a resolved model).

Errors carry the user's code prefix: `{code}.unknown_product`, `{code}.abstract_product` and
`{code}.invalid_reference` (400), `{code}.product_not_configured` (409, for a stored record whose
product the configuration no longer has), `{code}.account_not_eligible` (400).
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from chalicelib.configuration import products
from chalicelib.configuration.products import Product
from chalicelib.core import codes
from chalicelib.core import contacts as contact_list
from chalicelib.core.contacts import Contact
from chalicelib.core.errors import FieldError
from chalicelib.core.records import check_size as check_record_size
from chalicelib.priceable.models import Entity

DEFAULT_CURRENCY = "USD"
DEFAULT_TIME_ZONE = "UTC"
PLAN_REFERENCES = {
    "delinquencyPlanName": "delinquencyPlans",
    "autoRenewalPlanName": "autoRenewalPlans",
    "region": "regions",
}


def configured_product(model: dict[str, Any], name: str, entity: Entity, *, in_request: bool = False) -> Product:
    """The resolved product. A request naming an unknown or abstract product is a 400; a stored
    record whose product the configuration no longer has is a 409."""
    found = products.product(model, name)
    if found is not None and not found.abstract:
        return found
    what = "is not a configured product" if found is None else "is abstract"
    if not in_request:
        raise codes.PRODUCT_NOT_CONFIGURED[entity.code](f"Product {name} {what} in this configuration")
    code = codes.UNKNOWN_PRODUCT if found is None else codes.ABSTRACT_PRODUCT
    raise code[entity.code](f"Product {name} {what}", field_errors=[FieldError("productName", what)])


def check_eligible(product: Product, name: str, account_type: str, entity: Entity) -> None:
    eligible = product.eligible_account_types
    if eligible and account_type not in eligible:
        raise codes.ACCOUNT_NOT_ELIGIBLE[entity.code](
            f"Product {name} is not available to {account_type} accounts",
            field_errors=[FieldError("accountLocator", f"its type {account_type} is not among {', '.join(eligible)}")],
        )


def check_references(model: dict[str, Any], fields: Any, contacts: Iterable[Contact], entity: Entity) -> None:
    """What the request names must exist: plans, the region, the time zone, contact roles."""
    problems = []
    for name, collection in PLAN_REFERENCES.items():
        value = getattr(fields, name, None)
        if value is not None and value not in (model.get(collection) or {}):
            problems.append(FieldError(name, f"'{value}' is not defined in the configuration's {collection}"))
    preferences = getattr(fields, "preferences", None)
    plan = (
        preferences.installmentPreferences.installmentPlanName
        if preferences is not None and preferences.installmentPreferences is not None
        else None
    )
    if plan is not None and plan not in (model.get("installmentPlans") or {}):
        problems.append(
            FieldError(
                "preferences.installmentPreferences.installmentPlanName",
                f"'{plan}' is not defined in the configuration's installmentPlans",
            )
        )
    zone = getattr(fields, "timezone", None)
    if zone is not None and not is_time_zone(zone):
        problems.append(FieldError("timezone", f"'{zone}' is not an IANA time zone"))
    problems += contact_list.problems(contacts, model.get("contactRoles") or [])
    if problems:
        raise codes.INVALID_REFERENCE[entity.code](
            f"The {entity.noun} names something the configuration does not have", field_errors=problems
        )


def default_time_zone(model: dict[str, Any]) -> str:
    zone = model.get("defaultTimeZone")
    return zone if isinstance(zone, str) and is_time_zone(zone) else DEFAULT_TIME_ZONE


def default_currency(model: dict[str, Any]) -> str:
    return model.get("defaultCurrency") or DEFAULT_CURRENCY


def is_time_zone(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def check_size(record: BaseModel, entity: Entity) -> None:
    check_record_size(record, code=entity.code, noun=entity.noun)
