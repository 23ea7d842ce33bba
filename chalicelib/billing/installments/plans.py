"""The installment schedule of a policy: its installment plan (configuration/billing_plans.py: by
name, else the tenant's default, else one full-pay frame) with the installment preferences of the
transaction or policy applied (`preferences.installmentPreferences`: a plan name, an anchor). Pure."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from chalicelib.billing.installments.lattice import Schedule
from chalicelib.configuration.billing_plans import BillingPlans
from chalicelib.core.clock import parse_datetime


def schedule(
    plans: BillingPlans, plan_name: str | None, preferences: dict[str, Any] | None
) -> tuple[str | None, Schedule]:
    """(the plan's name, the schedule it and the preferences make): a preference overrides the plan."""
    chosen = {
        key: value
        for key, value in ((preferences or {}).get("installmentPreferences") or {}).items()
        if value not in (None, [])
    }
    plan = plans.installment_plan(chosen.get("installmentPlanName") or plan_name)
    base = (
        Schedule()
        if plan is None
        else Schedule(
            cadence=plan.cadence.value,
            max_installments=plan.max_installments_per_term,
            weights=plan.installment_weights,
            generate_lead_days=plan.generate_lead_days,
            due_lead_days=plan.due_lead_days,
            autopay_lead_days=int(plan.autopay_lead_days),
            anchor_mode=plan.anchor_mode.value,
            autopay=plan.autopay,
        )
    )
    return (plan.name if plan else None), Schedule(
        cadence=chosen.get("cadence", base.cadence),
        max_installments=_cap(chosen.get("maxInstallmentsPerTerm", base.max_installments)),
        weights=tuple(Decimal(str(w)) for w in chosen.get("installmentWeights", base.weights)),
        generate_lead_days=_days(chosen.get("generateLeadDays", base.generate_lead_days)),
        due_lead_days=_days(chosen.get("dueLeadDays", base.due_lead_days)),
        autopay_lead_days=_days(chosen.get("autopayLeadDays", base.autopay_lead_days)),
        anchor_mode=chosen.get("anchorMode", base.anchor_mode),
        anchor_type=chosen.get("anchorType") or "none",
        day_of_month=_int(chosen.get("dayOfMonth")),
        day_of_week=chosen.get("dayOfWeek"),
        week_of_month=chosen.get("weekOfMonth"),
        anchor_time=_moment(chosen.get("anchorTime")),
        every_n_days=_cap(chosen.get("installmentDays")),
        autopay=base.autopay or "autopayLeadDays" in chosen,
    )


MAX_LEAD_DAYS = 3660
"""Lead days beyond ten years are taken as ten years: no plan bills a term that far ahead."""


def _int(value: Any) -> int | None:
    return int(value) if value is not None else None


def _cap(value: Any) -> int | None:
    """A cap of installments per term: at least one, or none."""
    count = _int(value)
    return count if count and count > 0 else None


def _days(value: Any) -> int:
    return min(max(_int(value) or 0, 0), MAX_LEAD_DAYS)


def _moment(value: Any) -> datetime | None:
    return parse_datetime(value) if isinstance(value, str) else value
