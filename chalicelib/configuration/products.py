"""A product of a deployed (resolved) model, typed: what quotes, quick quotes and policies read from
it, with the tenant's defaults filled in where the product names none. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

DEFAULT_DURATION_BASIS = "months"


@dataclass(frozen=True)
class Product:
    name: str
    definition: Mapping[str, Any]
    """The product as configured (its data, contents and coverage terms are datamodel.py's)."""
    abstract: bool
    eligible_account_types: tuple[str, ...]
    """Empty: every account type."""
    numbering_plan: str | None
    numbers_on_creation: bool
    """`numberingTrigger: creation`; otherwise records are numbered when first validated."""
    reserved_policy_number_required: bool
    requires_jurisdiction: bool
    static_data: dict[str, Any]
    duration_basis: str
    term_duration: Decimal | None
    """Positive, or None (real packages say 0 for none)."""
    delinquency_plan: str | None
    auto_renewal_plan: str | None
    installment_plan: str | None


def product(model: Mapping[str, Any], name: str) -> Product | None:
    """The product named `name`, or None when the model has none by that name."""
    definition = (model.get("products") or {}).get(name)
    if not isinstance(definition, dict):
        return None
    return Product(
        name=name,
        definition=definition,
        abstract=definition.get("abstract") is True,
        eligible_account_types=tuple(definition.get("eligibleAccountTypes") or ()),
        numbering_plan=definition.get("numberingPlan") or None,
        numbers_on_creation=definition.get("numberingTrigger") == "creation",
        reserved_policy_number_required=definition.get("reservedPolicyNumberRequired") is True,
        requires_jurisdiction=definition.get("requiresJurisdiction") is True,
        static_data=definition.get("staticData") or {},
        duration_basis=definition.get("defaultDurationBasis")
        or model.get("defaultDurationBasis")
        or DEFAULT_DURATION_BASIS,
        term_duration=_positive(definition.get("defaultTermDuration")) or _positive(model.get("defaultTermDuration")),
        delinquency_plan=definition.get("defaultDelinquencyPlan") or model.get("defaultDelinquencyPlan"),
        auto_renewal_plan=definition.get("defaultAutoRenewalPlan") or model.get("defaultAutoRenewalPlan"),
        installment_plan=definition.get("defaultInstallmentPlan") or model.get("defaultInstallmentPlan"),
    )


def _positive(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        return None
    return Decimal(value) if value > 0 else None
