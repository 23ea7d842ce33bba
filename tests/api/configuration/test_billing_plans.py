"""configuration.service.billing_plans: the typed billing settings of the deployed version, or of an
earlier one, read once per version and process."""

from __future__ import annotations

import pytest

from chalicelib.configuration import cache
from chalicelib.configuration import service as configuration
from chalicelib.configuration.billing_plans import Cadence
from chalicelib.core.errors import NotFound
from tests.api.configuration.support import deploy, minimal_model, new_configured_tenant, package
from tests.builders import system_ctx
from tests.support.api import ok
from tests.unit.configuration.zips import fixture_zip


def _with_plan(cadence: str) -> bytes:
    return package(
        {**minimal_model(), "defaultInstallmentPlan": "Regular", "installmentPlans": {"Regular": {"cadence": cadence}}}
    )


def test_the_current_versions_plans_are_typed_once_and_an_earlier_versions_on_request(api, admin_token, s3_calls):
    tenant, created = new_configured_tenant(api, admin_token, _with_plan("monthly"))
    first = created["deploymentResult"]["metadata"]["latestVersion"]
    ok(deploy(api, admin_token, tenant, _with_plan("quarterly")))
    ctx = system_ctx().for_tenant(tenant)

    plans = configuration.billing_plans(ctx)
    assert plans.installment_plan().cadence is Cadence.QUARTERLY
    assert configuration.billing_plans(ctx) is plans
    assert configuration.billing_plans(ctx, first).installment_plan().cadence is Cadence.MONTHLY

    cache.clear()
    s3_calls.clear()
    assert configuration.billing_plans(ctx) == plans  # a cold process reads the model once
    assert configuration.billing_plans(ctx).installment_plan("regular").cadence is Cadence.QUARTERLY
    assert s3_calls == ["GetObject"]


def test_a_real_package_deployed_has_its_billing_plans(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token, fixture_zip("itemcare"))

    plans = configuration.billing_plans(system_ctx().for_tenant(tenant))

    assert plans.installment_plan().name == "Monthly12"
    assert plans.shortfall_tolerance_plan().name == "basicPlan"


def test_an_unknown_version_is_not_found(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)

    with pytest.raises(NotFound):
        configuration.billing_plans(system_ctx().for_tenant(tenant), "01J0000000000000000000000X")
