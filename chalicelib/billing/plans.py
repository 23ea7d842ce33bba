"""The installment schedule of a policy: its installment plan (by name, else the configuration's
`defaultInstallmentPlan`, else one full-pay frame) with the installment preferences of the policy or
transaction applied. Pure: reads the resolved configuration model it is given."""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from chalicelib.billing.installments.lattice import Schedule
from chalicelib.core.clock import parse_datetime

FULL_PAY = Schedule()


def _named(collection: dict[str, Any], name: str | None) -> dict[str, Any] | None:
    if not name:
        return None
    return next((body for key, body in collection.items() if key.lower() == name.lower()), None)


def installment_plan(model: dict[str, Any], name: str | None) -> tuple[str | None, dict[str, Any]]:
    """The plan's name and body: the named one, else the default, else none ({})."""
    plans = model.get("installmentPlans") or {}
    for candidate in (name, model.get("defaultInstallmentPlan")):
        body = _named(plans, candidate)
        if body is not None:
            return candidate, body
    return None, {}


def schedule(model: dict[str, Any], plan_name: str | None, preferences: dict[str, Any] | None) -> tuple[str | None,
                                                                                                        Schedule]:
    chosen = dict((preferences or {}).get("installmentPreferences") or {})
    name, plan = installment_plan(model, chosen.get("installmentPlanName") or plan_name)
    weights = tuple(Decimal(str(w)) for w in plan.get("installmentWeights") or ())
    anchor_time = chosen.get("anchorTime")
    return name, Schedule(
        cadence=chosen.get("cadence") or plan.get("cadence") or "fullPay",
        max_installments=_int(chosen.get("maxInstallmentsPerTerm", plan.get("maxInstallmentsPerTerm"))),
        weights=weights,
        generate_lead_days=_int(chosen.get("generateLeadDays", plan.get("generateLeadDays"))) or 0,
        due_lead_days=_int(chosen.get("dueLeadDays", plan.get("dueLeadDays"))) or 0,
        autopay_lead_days=_int(chosen.get("autopayLeadDays", plan.get("autopayLeadDays"))) or 0,
        anchor_mode=chosen.get("anchorMode") or plan.get("anchorMode") or "termStartDay",
        anchor_type=chosen.get("anchorType") or "none",
        day_of_month=_int(chosen.get("dayOfMonth")),
        day_of_week=chosen.get("dayOfWeek"),
        week_of_month=chosen.get("weekOfMonth"),
        anchor_time=_moment(anchor_time),
        every_n_days=_int(chosen.get("installmentDays", plan.get("installmentDays"))),
    )


def defer_due_date(model: dict[str, Any]) -> bool:
    return model.get("defaultBackdatedInstallmentsBilling") == "deferDueDate"


def invoice_numbering_plan(model: dict[str, Any], account_type: str) -> str | None:
    accounts = model.get("accounts") or {}
    seen = set()
    body = _named(accounts, account_type)
    while body is not None and account_type not in seen:
        seen.add(account_type)
        if body.get("invoiceNumberingPlan"):
            return str(body["invoiceNumberingPlan"])
        account_type = body.get("extend") or ""
        body = _named(accounts, account_type)
    return None


def payment_type(model: dict[str, Any], name: str) -> str | None:
    """The configured payment type's name as configured, or None."""
    return next((key for key in (model.get("payments") or {}) if key.lower() == name.lower()), None)


def _int(value: Any) -> int | None:
    return int(value) if value is not None else None


def _moment(value: Any) -> datetime | None:
    return parse_datetime(value) if isinstance(value, str) else value
