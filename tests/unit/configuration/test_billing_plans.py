"""The typed billing settings of a deployed model: every real package's plans, the platform's defaults
for what a plan leaves out, lookups by name as the platform does them."""

from __future__ import annotations

from decimal import Decimal

import pytest

from chalicelib.configuration.billing_plans import (
    DEFAULT_INVOICING_PLAN,
    AnchorMode,
    BackdatedInstallmentsBilling,
    BillingPlans,
    Cadence,
    CancellationConsolidation,
    DelinquencyLevel,
    DisbursementTarget,
    ExcludedDebits,
    GraceOffsetBasis,
    GroupingMatch,
    GroupingWindow,
    InvoiceFeeHandling,
    LapseTarget,
    NegativeInvoiceHandling,
    NegativeInvoiceProcessing,
    NegativeInvoiceSettlement,
    NegativeInvoiceTargets,
    TargetInvoicePriority,
)
from chalicelib.configuration.resolve import resolve
from chalicelib.configuration.validator import validate
from tests.unit.configuration.zips import FIXTURES, PACKAGES, SERVER_DOWNLOAD, fixture_model

D = Decimal
BILLING_COLLECTIONS = {
    "installmentPlans": "installment_plans",
    "invoicingPlans": "invoicing_plans",
    "payments": "payment_types",
    "delinquencyPlans": "delinquency_plans",
    "excessCreditPlans": "excess_credit_plans",
    "shortfallTolerancePlans": "shortfall_tolerance_plans",
    "accounts": "account_types",
}


def _deployed(model):
    """The plans as a deployment holds them: validated (platform defaults in), then resolved."""
    outcome = validate(model)
    assert outcome.is_success, outcome.errors
    return BillingPlans.of(resolve(outcome.model))


@pytest.mark.parametrize("name", PACKAGES)
def test_every_plan_of_every_real_package_is_read(name):
    model = fixture_model(name)
    plans = _deployed(fixture_model(name))

    for collection, attribute in BILLING_COLLECTIONS.items():
        assert set(getattr(plans, attribute)) == set(model.get(collection, {})), collection
    assert plans.installment_plan() is not None
    assert plans.delinquency_plan() is not None
    assert plans.excess_credit_plan() is not None
    assert plans.invoicing_plan() is DEFAULT_INVOICING_PLAN


def test_what_the_real_server_answered_reads_as_the_package_it_came_from():
    download = fixture_model(str(SERVER_DOWNLOAD.relative_to(FIXTURES)))

    assert BillingPlans.of(download) == _deployed(fixture_model("iag-motor-demo"))


def test_iag_plans_weigh_their_first_installment_double_and_take_the_platform_defaults():
    plans = _deployed(fixture_model("iag-motor-demo"))

    monthly = plans.installment_plan("Monthly")
    assert monthly is not None
    assert (monthly.cadence, monthly.max_installments_per_term, monthly.installment_weights) == (
        Cadence.MONTHLY,
        10,
        (D(2),),
    )
    assert [monthly.weight(index) for index in range(4)] == [D(2), D(1), D(1), D(1)]
    assert (monthly.generate_lead_days, monthly.due_lead_days, monthly.autopay_lead_days, monthly.anchor_mode) == (
        0,
        0,
        D(0),
        AnchorMode.TERM_START_DAY,
    )
    assert plans.installment_plan() == plans.installment_plan("FullPay")
    standard = plans.installment_plan("Standard")
    assert standard is not None
    assert (standard.cadence, standard.generate_lead_days, standard.installment_weights, standard.weight(0)) == (
        Cadence.FULL_PAY,
        14,
        (),
        D(1),
    )
    assert plans.backdated_installments_billing is BackdatedInstallmentsBilling.IMMEDIATE
    assert plans.serial_invoice_numbering is False
    delinquency = plans.delinquency_plan()
    assert delinquency is not None
    assert (
        delinquency.name,
        delinquency.grace_period_days,
        delinquency.delinquency_level,
        delinquency.lapse_transaction_type,
        delinquency.advance_lapse_to,
        delinquency.events,
    ) == ("Standard", 7, DelinquencyLevel.POLICY, "cancellation", LapseTarget.ISSUED, {})
    excess = plans.excess_credit_plan()
    assert excess is not None
    assert (
        excess.disburse_excess,
        excess.exclude_debits,
        excess.advance_disbursement_to,
        excess.auto_apply_excess_to_invoices,
        excess.negative_invoice_handling,
    ) == (False, ExcludedDebits.NONE, DisbursementTarget.DRAFT, False, NegativeInvoiceHandling())
    assert plans.shortfall_tolerance_plan() is None
    payment = plans.payment_type("StandardPayment")
    assert payment is not None
    assert (payment.display_name, payment.abstract, payment.numbering_plan, payment.numbers_on_creation) == (
        "Standard Payment",
        False,
        None,
        False,
    )


def test_itemcare_plans_monthly_with_autopay_shortfall_tolerance_and_deferred_backdated_installments():
    plans = _deployed(fixture_model("itemcare"))

    monthly = plans.installment_plan()
    assert monthly is not None
    assert (monthly.name, monthly.cadence, monthly.max_installments_per_term) == ("Monthly12", Cadence.MONTHLY, 12)
    standard = plans.installment_plan("Standard")
    assert standard is not None and standard.autopay_lead_days == D(1)
    full = plans.installment_plan("FullPay")
    assert full is not None and (full.generate_lead_days, full.due_lead_days) == (10, 7)
    assert plans.backdated_installments_billing is BackdatedInstallmentsBilling.DEFER_DUE_DATE
    tolerance = plans.shortfall_tolerance_plan()
    assert tolerance is not None
    assert tolerance.name == "basicPlan"
    assert (tolerance.tolerance("USD"), tolerance.tolerance("cad"), tolerance.tolerance("EUR")) == (
        D(1),
        D("1.35"),
        D(0),
    )
    excess = plans.excess_credit_plan()
    assert excess is not None
    assert (excess.advance_disbursement_to, excess.auto_apply_excess_to_invoices) == (
        DisbursementTarget.EXECUTED,
        False,
    )
    payment = plans.payment_type("StandardPayment")
    assert payment is not None and "paidDate" in payment.data


def test_a_plan_without_max_installments_may_have_as_many_as_the_platform_allows():
    plan = _deployed(fixture_model("mgt-commercial")).installment_plan()

    assert plan is not None
    assert (plan.name, plan.max_installments_per_term) == ("SampleInstallmentPlan", 1000)


HAND_WRITTEN = {
    "defaultInstallmentPlan": "monthly",
    "defaultGenerateLeadDays": 5,
    "defaultAnchorMode": "dueDay",
    "defaultInvoicingPlan": "Fees",
    "defaultInvoiceDocument": "Statement",
    "enableSerialInvoiceNumbering": True,
    "defaultBackdatedInstallmentsBilling": "deferDueDate",
    "installmentPlans": {
        "Monthly": {"cadence": "monthly", "installmentWeights": [3, D("1.5")], "autopayLeadDays": D("0.5")},
        "Weekly": {
            "cadence": "weekly",
            "generateLeadDays": 2,
            "dueLeadDays": 1,
            "anchorMode": "generateDay",
            "maxInstallmentsPerTerm": 52,
        },
    },
    "invoicingPlans": {
        "Fees": {
            "invoiceFeeHandling": "max",
            "invoiceFeeAmounts": {"USD": D("2.50"), "JPY": 300},
            "consolidateInvoicesOnCancellation": "future",
            "installmentGrouping": {"matching": "startTime", "window": "catchUp"},
        },
        "Plain": {"invoiceFeeHandling": "waive", "invoiceFeeAmounts": {}},
    },
    "delinquencyPlans": {
        "Strict": {
            "gracePeriodDays": 10,
            "delinquencyLevel": "invoice",
            "lapseTransactionType": "NonPay",
            "advanceLapseTo": "accepted",
            "events": {
                "reminder": {"offsetBasis": "gracePeriodEnd", "offsetDays": -3},
                "notice": {"offsetBasis": "gracePeriodStart", "offsetDays": D("0.5")},
            },
        },
        "Bare": {"gracePeriodDays": 0},
    },
    "excessCreditPlans": {
        "Refund": {
            "disburseExcess": True,
            "disbursementType": "Cheque",
            "excludeDebits": "pastDueInvoices",
            "disbursementThresholds": {"USD": 5},
            "advanceDisbursementTo": "approved",
            "autoApplyExcessToInvoicesEnabled": True,
            "negativeInvoiceHandling": {
                "automaticallySettleNegativeInvoices": "toOpenInvoices",
                "prioritizeOverlappingCoveragePeriods": True,
                "processingMode": "policyLevel",
                "targetInvoicePriority": "smallestFirst",
                "targetInvoices": "overlappingCoverageAndEarlier",
                "yieldExcessToCreditBalance": False,
            },
        },
    },
    "payments": {
        "Card": {
            "numberingPlan": "Payments",
            "numberingTrigger": "creation",
            "defaultSearchable": True,
            "data": {"last4": {"type": "string"}},
        },
        "Base": {"abstract": True},
    },
    "accounts": {
        "Person": {"invoiceNumberingPlan": "Invoices", "paymentExecutionRetryPlan": "Thrice"},
        "Company": {"defaultInvoiceDocument": "CompanyStatement"},
    },
}


def test_a_plan_reads_what_it_configures_and_the_tenants_deprecated_defaults_for_what_it_leaves_out():
    plans = BillingPlans.of(HAND_WRITTEN)

    monthly = plans.installment_plan()
    assert monthly is not None and monthly.name == "Monthly"  # the default is named in another case
    assert (monthly.installment_weights, monthly.weight(1), monthly.weight(2), monthly.autopay_lead_days) == (
        (D(3), D("1.5")),
        D("1.5"),
        D(1),
        D("0.5"),
    )
    assert (
        monthly.generate_lead_days,
        monthly.due_lead_days,
        monthly.anchor_mode,
        monthly.max_installments_per_term,
    ) == (5, 0, AnchorMode.DUE_DAY, 1000)
    weekly = plans.installment_plan("Weekly")
    assert weekly is not None
    assert (
        weekly.cadence,
        weekly.generate_lead_days,
        weekly.due_lead_days,
        weekly.anchor_mode,
        weekly.max_installments_per_term,
    ) == (Cadence.WEEKLY, 2, 1, AnchorMode.GENERATE_DAY, 52)
    assert plans.backdated_installments_billing is BackdatedInstallmentsBilling.DEFER_DUE_DATE
    assert plans.serial_invoice_numbering is True


def test_an_invoicing_plan_has_its_fees_by_currency_and_its_grouping():
    plans = BillingPlans.of(HAND_WRITTEN)

    fees = plans.invoicing_plan()
    assert fees is not None and fees.name == "Fees"
    assert (fees.invoice_fee_handling, fees.consolidate_invoices_on_cancellation) == (
        InvoiceFeeHandling.MAX,
        CancellationConsolidation.FUTURE,
    )
    assert (fees.installment_grouping.matching, fees.installment_grouping.window) == (
        GroupingMatch.START_TIME,
        GroupingWindow.CATCH_UP,
    )
    assert (fees.invoice_fee_amount("USD"), fees.invoice_fee_amount("jpy"), fees.invoice_fee_amount("EUR")) == (
        D("2.50"),
        D(300),
        D(0),
    )
    plain = plans.invoicing_plan("plain")
    assert plain is not None
    assert (
        plain.installment_grouping.matching,
        plain.installment_grouping.window,
        plain.consolidate_invoices_on_cancellation,
    ) == (GroupingMatch.GENERATE_TIME, GroupingWindow.START_AND_END, CancellationConsolidation.NONE)


def test_without_invoicing_plans_invoices_group_by_generate_time_and_carry_no_fee():
    plan = BillingPlans.of({}).invoicing_plan()

    assert plan is DEFAULT_INVOICING_PLAN
    assert (
        plan.installment_grouping.matching,
        plan.installment_grouping.window,
        plan.invoice_fee_handling,
        plan.invoice_fee_amount("USD"),
        plan.consolidate_invoices_on_cancellation,
    ) == (
        GroupingMatch.GENERATE_TIME,
        GroupingWindow.START_AND_END,
        InvoiceFeeHandling.WAIVE,
        D(0),
        CancellationConsolidation.NONE,
    )
    assert BillingPlans.of({}).invoicing_plan("Fees") is None


def test_a_delinquency_plan_has_its_events_and_defaults_to_a_policy_level_cancellation_issued():
    plans = BillingPlans.of(HAND_WRITTEN)

    strict = plans.delinquency_plan("strict")
    assert strict is not None
    assert (
        strict.grace_period_days,
        strict.delinquency_level,
        strict.lapse_transaction_type,
        strict.advance_lapse_to,
    ) == (10, DelinquencyLevel.INVOICE, "NonPay", LapseTarget.ACCEPTED)
    assert {name: (event.offset_basis, event.offset_days) for name, event in strict.events.items()} == {
        "reminder": (GraceOffsetBasis.GRACE_PERIOD_END, D(-3)),
        "notice": (GraceOffsetBasis.GRACE_PERIOD_START, D("0.5")),
    }
    bare = plans.delinquency_plan("Bare")
    assert bare is not None
    assert (bare.delinquency_level, bare.lapse_transaction_type, bare.advance_lapse_to, bare.events) == (
        DelinquencyLevel.POLICY,
        "cancellation",
        LapseTarget.ISSUED,
        {},
    )
    assert plans.delinquency_plan() is None  # the tenant names no default


def test_an_excess_credit_plan_reads_its_disbursement_and_negative_invoice_handling():
    refund = BillingPlans.of(HAND_WRITTEN).excess_credit_plan("Refund")

    assert refund is not None
    assert (
        refund.disburse_excess,
        refund.disbursement_type,
        refund.exclude_debits,
        refund.disbursement_thresholds,
        refund.advance_disbursement_to,
        refund.auto_apply_excess_to_invoices,
    ) == (True, "Cheque", ExcludedDebits.PAST_DUE_INVOICES, {"USD": D(5)}, DisbursementTarget.APPROVED, True)
    assert refund.negative_invoice_handling == NegativeInvoiceHandling(
        automatically_settle=NegativeInvoiceSettlement.TO_OPEN_INVOICES,
        prioritize_overlapping_coverage_periods=True,
        processing_mode=NegativeInvoiceProcessing.POLICY_LEVEL,
        target_invoice_priority=TargetInvoicePriority.SMALLEST_FIRST,
        target_invoices=NegativeInvoiceTargets.OVERLAPPING_COVERAGE_AND_EARLIER,
        yield_excess_to_credit_balance=False,
    )


def test_payment_types_and_account_types_billing_settings():
    plans = BillingPlans.of(HAND_WRITTEN)

    card = plans.payment_type("card")
    assert card is not None
    assert (
        card.name,
        card.numbering_plan,
        card.numbers_on_creation,
        card.default_searchable,
        card.abstract,
        dict(card.data),
    ) == ("Card", "Payments", True, True, False, {"last4": {"type": "string"}})
    base = plans.payment_type("Base")
    assert base is not None and base.abstract
    person, company = plans.account_type("Person"), plans.account_type("company")
    assert person is not None and company is not None
    assert (person.invoice_numbering_plan, person.invoice_document, person.payment_execution_retry_plan) == (
        "Invoices",
        "Statement",
        "Thrice",
    )
    assert (company.invoice_numbering_plan, company.invoice_document) == (None, "CompanyStatement")


def test_a_name_is_found_exactly_first_then_in_any_case_and_an_unknown_one_is_none():
    plans = BillingPlans.of(
        {"installmentPlans": {"Monthly": {"cadence": "monthly"}, "MONTHLY": {"cadence": "quarterly"}}}
    )

    assert plans.installment_plan("MONTHLY").cadence is Cadence.QUARTERLY
    assert plans.installment_plan("Monthly").cadence is Cadence.MONTHLY
    assert plans.installment_plan("monthly") is not None
    assert plans.installment_plan("Yearly") is None
    assert plans.installment_plan() is None  # no default configured
    assert (
        plans.payment_type("Card"),
        plans.account_type("Person"),
        plans.excess_credit_plan(),
        plans.shortfall_tolerance_plan(),
    ) == (None, None, None, None)


def test_a_model_a_deployment_could_not_hold_is_refused():
    with pytest.raises(ValueError, match="installmentPlans.Odd.cadence: is required"):
        BillingPlans.of({"installmentPlans": {"Odd": {}}})
    with pytest.raises(ValueError, match="'fortnightly' is not a valid Cadence"):
        BillingPlans.of({"installmentPlans": {"Odd": {"cadence": "fortnightly"}}})
    with pytest.raises(ValueError, match="'2' is not a number"):
        BillingPlans.of({"installmentPlans": {"Odd": {"cadence": "monthly", "installmentWeights": ["2"]}}})


def test_entries_that_are_no_definitions_and_odd_integers_are_passed_over():
    plans = BillingPlans.of(
        {
            "installmentPlans": {
                "Note": "not a plan",
                "P": {
                    "cadence": "annually",
                    "generateLeadDays": D("2.5"),
                    "dueLeadDays": D(3),
                    "maxInstallmentsPerTerm": True,
                },
            },
            "delinquencyPlans": "none",
        }
    )

    assert set(plans.installment_plans) == {"P"} and plans.delinquency_plans == {}
    plan = plans.installment_plan("P")
    assert (plan.generate_lead_days, plan.due_lead_days, plan.max_installments_per_term) == (0, 3, 1000)
