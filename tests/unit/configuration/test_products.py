"""The typed product of a deployed model: the product's own settings, else the tenant's defaults."""

from __future__ import annotations

from decimal import Decimal

from chalicelib.configuration.products import product


def test_a_product_reads_its_own_settings_before_the_tenants_defaults():
    model = {
        "defaultDurationBasis": "days",
        "defaultTermDuration": 12,
        "defaultDelinquencyPlan": "Tenant",
        "defaultInstallmentPlan": "Monthly",
        "products": {
            "Auto": {
                "defaultDurationBasis": "months",
                "defaultTermDuration": 6,
                "defaultDelinquencyPlan": "Strict",
                "eligibleAccountTypes": ["Person"],
                "numberingPlan": "AutoPlan",
                "numberingTrigger": "creation",
                "reservedPolicyNumberRequired": True,
                "requiresJurisdiction": True,
                "staticData": {"fleet": {"type": "string"}},
            }
        },
    }
    auto = product(model, "Auto")
    assert auto is not None
    assert (auto.duration_basis, auto.term_duration, auto.delinquency_plan, auto.installment_plan) == (
        "months",
        Decimal(6),
        "Strict",
        "Monthly",
    )
    assert auto.eligible_account_types == ("Person",)
    assert (auto.numbering_plan, auto.numbers_on_creation) == ("AutoPlan", True)
    assert auto.reserved_policy_number_required and auto.requires_jurisdiction and not auto.abstract
    assert auto.static_data == {"fleet": {"type": "string"}}


def test_what_neither_configures_takes_the_platform_default_or_none():
    bare = product({"products": {"Home": {"abstract": True, "defaultTermDuration": 0}}}, "Home")
    assert bare is not None
    assert (bare.duration_basis, bare.term_duration, bare.numbering_plan, bare.numbers_on_creation) == (
        "months",
        None,
        None,
        False,
    )
    assert bare.abstract and bare.eligible_account_types == () and bare.static_data == {}


def test_a_term_duration_is_a_positive_number_or_the_tenants():
    for odd in (0, -1, True, "12", 1.5):
        model = {"defaultTermDuration": 3, "products": {"P": {"defaultTermDuration": odd}}}
        assert product(model, "P").term_duration == Decimal(3)


def test_a_name_the_model_lacks_or_that_is_no_product_definition_is_none():
    assert product({"products": {"P": {}}}, "Q") is None
    assert product({"products": {"P": "not a definition"}}, "P") is None
    assert product({}, "P") is None
