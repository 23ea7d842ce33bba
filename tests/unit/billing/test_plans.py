"""A policy's installment schedule (installments/plans.py): its plan by name, else the tenant's default, else
one full-pay frame; the installment preferences override the plan field by field, an empty preference does
not, and lead days and caps are brought into range."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest

from chalicelib.billing.installments.lattice import Schedule
from chalicelib.billing.installments.plans import MAX_LEAD_DAYS, schedule
from chalicelib.configuration.billing_plans import AnchorMode, BillingPlans, Cadence, InstallmentPlan

QUARTERLY = InstallmentPlan(
    name="quarterly",
    display_name="Quarterly",
    cadence=Cadence.QUARTERLY,
    installment_weights=(Decimal(2), Decimal(1)),
    max_installments_per_term=4,
    generate_lead_days=20,
    due_lead_days=10,
    autopay_lead_days=Decimal(3),
    anchor_mode=AnchorMode.DUE_DAY,
    autopay=True,
)
MONTHLY = InstallmentPlan(
    name="monthly",
    display_name=None,
    cadence=Cadence.MONTHLY,
    installment_weights=(),
    max_installments_per_term=12,
    generate_lead_days=7,
    due_lead_days=0,
    autopay_lead_days=Decimal(0),
    anchor_mode=AnchorMode.TERM_START_DAY,
)


def plans(default: str | None = None) -> BillingPlans:
    return BillingPlans(
        installment_plans={"quarterly": QUARTERLY, "monthly": MONTHLY},
        invoicing_plans={},
        payment_types={},
        delinquency_plans={},
        excess_credit_plans={},
        shortfall_tolerance_plans={},
        account_types={},
        default_installment_plan=default,
    )


def preferences(**chosen) -> dict:
    return {"installmentPreferences": chosen}


def test_the_named_plan_makes_the_schedule():
    assert schedule(plans(), "quarterly", None) == (
        "quarterly",
        Schedule(
            cadence="quarterly",
            max_installments=4,
            weights=(Decimal(2), Decimal(1)),
            generate_lead_days=20,
            due_lead_days=10,
            autopay_lead_days=3,
            anchor_mode="dueDay",
            anchor_type="none",
            autopay=True,
        ),
    )


def test_without_a_plan_the_tenants_default_is_used_and_without_one_a_single_full_pay_frame():
    assert schedule(plans(default="monthly"), None, {}) == (
        "monthly",
        Schedule(cadence="monthly", max_installments=12, generate_lead_days=7, anchor_mode="termStartDay"),
    )
    assert schedule(plans(), None, None) == (None, Schedule())
    assert schedule(plans(), "unknown", None) == (None, Schedule())


def test_the_preferences_name_the_plan_before_the_policy_does():
    name, chosen = schedule(plans(default="monthly"), "monthly", preferences(installmentPlanName="quarterly"))
    assert (name, chosen.cadence, chosen.max_installments) == ("quarterly", "quarterly", 4)


def test_each_preference_overrides_its_field_of_the_plan():
    name, chosen = schedule(
        plans(),
        "quarterly",
        preferences(
            cadence="everyNDays",
            maxInstallmentsPerTerm="6",
            installmentWeights=[0.5, "1.25"],
            generateLeadDays="15",
            dueLeadDays=4,
            autopayLeadDays=1,
            anchorMode="generateDay",
            anchorType="dayOfMonth",
            dayOfMonth="28",
            dayOfWeek="friday",
            weekOfMonth="last",
            anchorTime="2026-03-05T10:00:00Z",
            installmentDays="45",
        ),
    )
    assert name == "quarterly"
    assert chosen == Schedule(
        cadence="everyNDays",
        max_installments=6,
        weights=(Decimal("0.5"), Decimal("1.25")),
        generate_lead_days=15,
        due_lead_days=4,
        autopay_lead_days=1,
        anchor_mode="generateDay",
        anchor_type="dayOfMonth",
        day_of_month=28,
        day_of_week="friday",
        week_of_month="last",
        anchor_time=datetime(2026, 3, 5, 10, tzinfo=timezone.utc),
        every_n_days=45,
        autopay=True,
    )


def test_an_empty_preference_keeps_the_plans_value():
    _, chosen = schedule(
        plans(),
        "quarterly",
        preferences(cadence=None, installmentWeights=[], dueLeadDays=None, autopayLeadDays=None, anchorType=None),
    )
    assert (chosen.cadence, chosen.weights, chosen.due_lead_days, chosen.autopay_lead_days, chosen.anchor_type) == (
        "quarterly",
        (Decimal(2), Decimal(1)),
        10,
        3,
        "none",
    )
    _, monthly = schedule(plans(), "monthly", {"installmentPreferences": None})
    assert monthly.autopay is False


def test_setting_autopay_lead_days_turns_autopay_on():
    _, chosen = schedule(plans(), "monthly", preferences(autopayLeadDays=0))
    assert (chosen.autopay, chosen.autopay_lead_days) == (True, 0)
    assert schedule(plans(), "monthly", None)[1].autopay is False


def test_an_anchor_time_may_be_given_as_a_datetime():
    moment = datetime(2026, 4, 1, 4, tzinfo=timezone.utc)
    assert schedule(plans(), None, preferences(anchorTime=moment))[1].anchor_time == moment


@pytest.mark.parametrize("given, days", [(-5, 0), (0, 0), (3660, 3660), (3661, MAX_LEAD_DAYS), (10**9, 3660)])
def test_lead_days_are_kept_between_none_and_ten_years(given, days):
    _, chosen = schedule(plans(), None, preferences(generateLeadDays=given, dueLeadDays=given, autopayLeadDays=given))
    assert (chosen.generate_lead_days, chosen.due_lead_days, chosen.autopay_lead_days) == (days, days, days)


@pytest.mark.parametrize("given, cap", [(0, None), (-2, None), (1, 1), ("24", 24)])
def test_a_cap_or_a_number_of_days_below_one_is_none(given, cap):
    _, chosen = schedule(plans(), "monthly", preferences(maxInstallmentsPerTerm=given, installmentDays=given))
    assert (chosen.max_installments, chosen.every_n_days) == (cap, cap)
