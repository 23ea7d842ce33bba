"""Old versions beyond a kept number leave the tenant function (plugins/tenant_code.py `_prune`): each publish keeps
the code of the PAS_TENANT_FUNCTION_VERSIONS_KEPT most recently published configuration versions and of the current
one; a plugin call or a render that needs a pruned version answers 503 `tenantCode.not_ready` with Retry-After while
its publish job, enqueued once however many calls race, publishes it again; a prune racing that publish leaves it."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

from chalicelib.configuration import repository as configuration_repository
from chalicelib.configuration import service as configuration_service
from chalicelib.configuration.models import TenantCode
from chalicelib.core.context import SYSTEM, CallContext
from chalicelib.core.ids import new_locator
from chalicelib.plugins import repository
from chalicelib.runtime import wiring
from tests.api.quotes.support import auto, create, new_account
from tests.api.transactions.support import (
    AUGUST,
    amounts,
    issued_policy,
    modify,
    params,
    segment_of_policy,
    step,
    vehicle_of,
)
from tests.api.transactions.support import create as create_transaction
from tests.plugins.lambda_mode import lambda_runner
from tests.plugins.tenant_code_support import DOUBLED, deploy, deployment_status, tenant_with_plugins
from tests.support.api import ok

PUBLISH = frozenset({"tenantCode.publish"})
CHANGE_PRICED_BY_THE_FIRST_VERSION = [
    ("premium", Decimal("-600.00"), True),
    ("premium", Decimal("900.00"), False),
    ("tax", Decimal("-12.50"), True),
    ("tax", Decimal("25"), False),
]


def _amount(amount: int) -> str:
    """Plugins that rate a flat premium of `amount` (a code of its own: a function version of its own)."""
    return DOUBLED.replace("'amount': 2}", f"'amount': {amount}}}")


def _code(tenant: str, version: str) -> TenantCode:
    found = configuration_repository.get_version(tenant, version)
    assert found is not None and found.tenantCode is not None
    return found.tenantCode


def _publishes_of(jobs, version: str) -> int:
    return sum(1 for m in jobs.sent if m.job_type == "tenantCode.publish" and m.payload == {"version": version})


def _context(tenant: str) -> CallContext:
    """Another caller's, a second on (so its job's locator is not the request's: only the condition keeps one)."""
    now = wiring.clock().now() + timedelta(seconds=1)
    return CallContext(principal=SYSTEM, request_id=new_locator(), now=now, tenant_locator=tenant)


def _change_draft(api, token, tenant, policy) -> str:
    static = vehicle_of(segment_of_policy(api, token, tenant, policy))["staticLocator"]
    draft = create_transaction(
        api, token, tenant, policy["locator"], "change", [params(AUGUST), modify(static, value="25000")]
    )
    return ok(draft)["locator"]


def _assert_not_ready(response) -> None:
    body = json.loads(response.body)
    assert (response.status_code, body["code"]) == (503, "tenantCode.not_ready"), response.body
    assert response.headers["Retry-After"] == "10"


def test_each_publish_keeps_the_most_recently_published_versions_and_removes_the_others(
    api, admin_token, jobs, monkeypatch, aws
):
    with lambda_runner(monkeypatch, jobs, PAS_TENANT_FUNCTION_VERSIONS_KEPT="2"):
        tenant = tenant_with_plugins(api, admin_token)
        versions = [deployment_status(api, admin_token, tenant)["metadata"]["latestVersion"]]
        versions += [deploy(api, admin_token, tenant, _amount(amount)) for amount in (2, 3, 4)]  # kept + 2
        status = deployment_status(api, admin_token, tenant)

    name = f"pas-tenant-{tenant}"
    assert status["metadata"]["latestVersion"] == versions[-1] and status["tenantCode"]["status"] == "live"
    assert repository.aliases(name) == {versions[2]: "3", versions[3]: "4"}
    assert repository.tenant_functions.versions(name) == ["3", "4"]  # the pruned versions' code is gone
    assert [_code(tenant, version).status for version in versions] == ["pruned", "pruned", "live", "live"]


def test_a_change_on_a_pruned_version_waits_for_one_publish_again_then_is_priced_by_its_own_version(
    api, admin_token, jobs, monkeypatch, aws
):
    with lambda_runner(monkeypatch, jobs, eager_publishing=False, PAS_TENANT_FUNCTION_VERSIONS_KEPT="2") as invoker:
        tenant = tenant_with_plugins(api, admin_token)
        jobs.drain(job_types=PUBLISH)
        first = deployment_status(api, admin_token, tenant)["metadata"]["latestVersion"]
        policy = issued_policy(api, admin_token, tenant, new_account(api, admin_token, tenant))
        draft = _change_draft(api, admin_token, tenant, policy)
        later = []
        for amount in (2, 3):
            later.append(deploy(api, admin_token, tenant, _amount(amount)))
            jobs.drain(job_types=PUBLISH)
        name = f"pas-tenant-{tenant}"
        assert set(repository.aliases(name)) == set(later) and _code(tenant, first).status == "pruned"
        assert _publishes_of(jobs, first) == 1

        # the first call's read of the record races another call, which asks for the publish first
        real, raced = configuration_repository.get_version, []

        def racing(tenant_locator, version):
            found = real(tenant_locator, version)
            if version == first and not raced and found.tenantCode.status == "pruned":
                raced.append(version)
                assert configuration_service.publish_again(_context(tenant), first).status == "publishing"
            return found

        monkeypatch.setattr(configuration_repository, "get_version", racing)
        for _ in range(3):
            _assert_not_ready(step(api, admin_token, tenant, draft, "price"))
        monkeypatch.setattr(configuration_repository, "get_version", real)
        assert raced == [first]
        assert _publishes_of(jobs, first) == 2  # one publish again for every call
        assert _code(tenant, first).status == "publishing"

        jobs.drain(job_types=PUBLISH)
        priced = ok(step(api, admin_token, tenant, draft, "price"))
        # published again, it counts as recent: the middle version goes instead, the current one stays
        assert set(repository.aliases(name)) == {first, later[1]}
        assert (_code(tenant, first).status, _code(tenant, later[0]).status) == ("live", "pruned")
        assert deployment_status(api, admin_token, tenant)["metadata"]["latestVersion"] == later[1]

    assert amounts(priced["charges"]) == CHANGE_PRICED_BY_THE_FIRST_VERSION
    assert (name, first) in invoker.invocations
    numbers = list(repository.aliases(name).values())
    assert len(set(numbers)) == 2 and repository.tenant_functions.versions(name) == sorted(numbers, key=int)


def test_a_render_whose_version_lost_its_code_answers_not_ready_until_its_publish_again_ran(
    api, admin_token, jobs, monkeypatch, aws
):
    with lambda_runner(monkeypatch, jobs, eager_publishing=False):
        tenant = tenant_with_plugins(api, admin_token)
        jobs.drain(job_types=PUBLISH)
        version = deployment_status(api, admin_token, tenant)["metadata"]["latestVersion"]
        quote = create(api, admin_token, tenant, auto(new_account(api, admin_token, tenant)))
        # renders use the current version, which a prune keeps: here its code goes as a prune takes it
        assert configuration_service.prune_tenant_code(_context(tenant), version, _code(tenant, version))
        repository.delete_alias(f"pas-tenant-{tenant}", version)

        def render():
            return api.http.post(
                f"/document/{tenant}/documents/render?referenceType=quote&referenceLocator={quote['locator']}",
                body=json.dumps({"template": "Your {{ productName }} quote"}),
                headers={"Authorization": f"Bearer {admin_token}", "Content-Type": "application/json"},
            )

        for _ in range(2):
            _assert_not_ready(render())
        assert _publishes_of(jobs, version) == 2  # the deployment's, and one publish again
        jobs.drain(job_types=PUBLISH)
        rendered = render()

    assert rendered.status_code == 200, rendered.body
    assert rendered.body.decode() == "Your PersonalAuto quote"
    assert _code(tenant, version).status == "live"


def test_a_prune_racing_a_publish_again_of_its_version_leaves_it(api, admin_token, jobs, monkeypatch, aws):
    with lambda_runner(monkeypatch, jobs, PAS_TENANT_FUNCTION_VERSIONS_KEPT="1"):
        tenant = tenant_with_plugins(api, admin_token)
        first = deployment_status(api, admin_token, tenant)["metadata"]["latestVersion"]
        policy = issued_policy(api, admin_token, tenant, new_account(api, admin_token, tenant))
        draft = _change_draft(api, admin_token, tenant, policy)
        name = f"pas-tenant-{tenant}"
        real, raced = configuration_service.prune_tenant_code, []

        def racing(ctx, version, seen):
            if version == first and not raced:
                raced.append(version)
                # between this prune's read and its write, another prune takes the version and a call has it
                # published again (the publish runs at once here)
                assert real(ctx, version, seen)
                repository.delete_alias(name, version)
                assert configuration_service.publish_again(ctx, version).status == "publishing"
                assert _code(tenant, version).status == "live"
            return real(ctx, version, seen)

        monkeypatch.setattr(configuration_service, "prune_tenant_code", racing)
        second = deploy(api, admin_token, tenant, DOUBLED)
        assert raced == [first]
        assert set(repository.aliases(name)) == {first, second}
        assert _code(tenant, first).status == "live"
        priced = ok(step(api, admin_token, tenant, draft, "price"))

    assert amounts(priced["charges"]) == CHANGE_PRICED_BY_THE_FIRST_VERSION
