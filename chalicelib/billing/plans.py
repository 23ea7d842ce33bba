"""The installment schedule of a policy: its installment plan (configuration/billing_plans.py: by
name, else the tenant's default, else one full-pay frame) with the installment preferences of the
transaction or policy applied (`preferences.installmentPreferences`: a plan name, an anchor). Pure."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib.billing.installments.lattice import Schedule
from chalicelib.configuration.billing_plans import BillingPlans
from chalicelib.core.clock import parse_datetime


def schedule(plans: BillingPlans, plan_name: str | None,
             preferences: dict[str, Any] | None) -> tuple[str | None, Schedule]:
    """(the plan's name, the schedule it and the preferences make)."""
    chosen = dict((preferences or {}).get("installmentPreferences") or {})
    plan = plans.installment_plan(chosen.get("installmentPlanName") or plan_name)
    if plan is None:
        return None, Schedule()
    return plan.name, Schedule(
        cadence=plan.cadence.value,
        max_installments=plan.max_installments_per_term,
        weights=plan.installment_weights,
        generate_lead_days=plan.generate_lead_days,
        due_lead_days=plan.due_lead_days,
        autopay_lead_days=int(plan.autopay_lead_days),
        anchor_mode=plan.anchor_mode.value,
        anchor_type=chosen.get("anchorType") or "none",
        day_of_month=_int(chosen.get("dayOfMonth")),
        day_of_week=chosen.get("dayOfWeek"),
        week_of_month=chosen.get("weekOfMonth"),
        anchor_time=_moment(chosen.get("anchorTime")),
        every_n_days=_int(chosen.get("installmentDays")),
    )


def _int(value: Any) -> int | None:
    return int(value) if value is not None else None


def _moment(value: Any) -> datetime | None:
    return parse_datetime(value) if isinstance(value, str) else value
