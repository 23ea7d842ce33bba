"""Tenant code on AWS (plugins/tenant_code.py, storage/tenant_functions.py): a configuration deployment on the
`lambda` runner answers at once and publishes the tenant's function as a job (moto's Lambda and IAM), with
one version and one alias per configuration version; calls before that answer 503 `tenantCode.not_ready`;
the calls after run the published code (the local invoker runs it in the sandbox); every version stays callable."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from decimal import Decimal

import pytest

from chalicelib.configuration import repository as configuration_repository
from chalicelib.plugins import repository, tenant_code
from chalicelib.plugins.lambda_runner import LambdaRunner
from chalicelib.plugins.local import Limits as PluginLimits
from chalicelib.runtime.jobs import get_job
from chalicelib.sandbox.runtimes import RendererLimits
from chalicelib.settings import settings
from chalicelib.storage import clients
from tests.api.quotes.support import advance, auto, create, new_account
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
from tests.plugins.conftest import FakeHost
from tests.plugins.lambda_mode import lambda_client, lambda_runner
from tests.plugins.tenant_code_support import DOUBLED, deploy, deployment_status, tenant_with_plugins
from tests.support.api import ok
from tests.support.configs import (
    QUOTE_PLUGINS,
)


def _priced(api, token, tenant):
    account = new_account(api, token, tenant)
    quote = create(api, token, tenant, auto(account))
    return advance(api, token, tenant, quote["locator"], "price")


def test_a_deployment_answers_at_once_and_its_code_is_live_once_the_job_published_it(
    api, admin_token, jobs, monkeypatch, aws
):
    with lambda_runner(
        monkeypatch,
        jobs,
        eager_publishing=False,
        PAS_TENANT_FUNCTION_SUBNET_IDS="subnet-a,subnet-b",
        PAS_TENANT_FUNCTION_SECURITY_GROUP_IDS="sg-1",
        PAS_TENANT_FUNCTION_CONCURRENCY="3",
    ) as invoker:
        tenant = tenant_with_plugins(api, admin_token)
        status = deployment_status(api, admin_token, tenant)
        version = status["metadata"]["latestVersion"]
        assert status["tenantCode"] == {"status": "publishing"}
        assert set(status["pluginStatus"].values()) == {"deploying"}
        [publish] = [m for m in jobs.sent if m.job_type == "tenantCode.publish"]
        assert publish.payload == {"version": version}

        early = _priced(api, admin_token, tenant)
        assert early.status_code == 503
        body = json.loads(early.body)
        assert (body["httpStatus"], body["code"]) == (503, "tenantCode.not_ready")
        assert f"pas-tenant-{tenant}" in body["message"] and version in body["message"] and body["requestId"]
        assert invoker.invocations == []  # there is no function yet: nothing ran

        jobs.drain(job_types=frozenset({"tenantCode.publish"}))

        assert get_job(tenant, publish.job_locator)["status"] == "finished"
        status = deployment_status(api, admin_token, tenant)
        assert status["tenantCode"] == {"status": "live", "functionVersion": "1"}
        assert set(status["pluginStatus"].values()) == {"deployed"}
        function = lambda_client().get_function_configuration(FunctionName=f"pas-tenant-{tenant}", Qualifier=version)
        assert (function["Version"], function["Handler"], function["Runtime"]) == (
            "1",
            "tenant_handler.handler",
            "python3.11",
        )
        assert function["MemorySize"] == RendererLimits().memory_bytes // 2**20 == 768
        assert function["Timeout"] == RendererLimits().timeout_seconds == 20 > PluginLimits().timeout_seconds
        assert function["VpcConfig"]["SubnetIds"] == ["subnet-a", "subnet-b"]
        assert function["VpcConfig"]["SecurityGroupIds"] == ["sg-1"]
        concurrency = lambda_client().get_function_concurrency(FunctionName=f"pas-tenant-{tenant}")
        assert concurrency["ReservedConcurrentExecutions"] == 3
        alias = lambda_client().get_alias(FunctionName=f"pas-tenant-{tenant}", Name=version)
        assert alias["FunctionVersion"] == "1"

        priced = ok(_priced(api, admin_token, tenant))
        assert [(c["chargeType"], c["amount"]) for c in priced["items"]] == [("premium", 1200), ("tax", 25)]
        # the publish imported the plugin modules in function version 1 before the alias pointed at it
        assert invoker.invocations[0] == (f"pas-tenant-{tenant}", "1")
        assert set(invoker.invocations[1:]) == {(f"pas-tenant-{tenant}", version)}


def test_the_function_package_is_the_modules_the_local_sandbox_runs_and_its_layer_the_pdf_libraries(
    api, admin_token, jobs, monkeypatch, aws
):
    with lambda_runner(monkeypatch, jobs):
        tenant = tenant_with_plugins(api, admin_token)
        version = deployment_status(api, admin_token, tenant)["metadata"]["latestVersion"]
        function = lambda_client().get_function_configuration(FunctionName=f"pas-tenant-{tenant}", Qualifier=version)

    code = repository.read_code(tenant, version)
    assert base64.b64encode(hashlib.sha256(code).digest()).decode() == function["CodeSha256"]
    with zipfile.ZipFile(io.BytesIO(code)) as archive:
        names = sorted(archive.namelist())
        assert names == ["child.py", "plugins/python/auto.py", "render_child.py", "tenant_handler.py"]
        root = tenant_code.runtimes.CHALICELIB
        assert archive.read("child.py") == (root / "plugins" / "child.py").read_bytes()
        assert archive.read("render_child.py") == (root / "documents" / "render_child.py").read_bytes()
        assert archive.read("plugins/python/auto.py") == QUOTE_PLUGINS.encode()
    assert tenant_code.package({"plugins/python/auto.py": QUOTE_PLUGINS.encode()}) == code  # deterministic

    [layer] = function["Layers"]
    sha, _ = tenant_code.libraries()
    layer_object = (
        clients.s3()
        .get_object(
            Bucket=settings().bucket_name, Key=repository.tenant_functions.layer_key(tenant_code.LIBRARIES_LAYER, sha)
        )["Body"]
        .read()
    )
    with zipfile.ZipFile(io.BytesIO(layer_object)) as archive:
        libraries = set(archive.namelist())
    assert {
        "python/xhtml2pdf/__init__.py",
        "python/liquid/__init__.py",
        "python/airspeed/__init__.py",
        "python/reportlab/__init__.py",
    } <= libraries
    assert layer["Arn"].split(":")[-2] == tenant_code.LIBRARIES_LAYER


def test_the_role_grants_nothing_but_its_own_logs_under_the_boundary(api, admin_token, jobs, monkeypatch, aws):
    iam = clients.client("iam")
    boundary = iam.create_policy(
        PolicyName="pas-test-tenant-boundary",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "logs:PutLogEvents", "Resource": "*"}],
            }
        ),
    )
    with lambda_runner(monkeypatch, jobs, PAS_TENANT_FUNCTION_BOUNDARY_ARN=boundary["Policy"]["Arn"]):
        tenant = tenant_with_plugins(api, admin_token)
    name = f"pas-tenant-{tenant}"
    role = iam.get_role(RoleName=name)["Role"]
    assert role["PermissionsBoundary"]["PermissionsBoundaryArn"] == boundary["Policy"]["Arn"]
    trust = role["AssumeRolePolicyDocument"]
    trust = json.loads(trust) if isinstance(trust, str) else trust
    assert trust["Statement"] == [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
    ]
    assert iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"] == []
    assert iam.list_role_policies(RoleName=name)["PolicyNames"] == ["own-logs"]
    document = iam.get_role_policy(RoleName=name, PolicyName="own-logs")["PolicyDocument"]
    document = json.loads(document) if isinstance(document, str) else document
    group = f"arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/{name}"
    assert document["Statement"] == [
        {"Effect": "Allow", "Action": ["logs:CreateLogGroup"], "Resource": group},
        {"Effect": "Allow", "Action": ["logs:CreateLogStream", "logs:PutLogEvents"], "Resource": f"{group}:*"},
    ]
    assert lambda_client().get_function_configuration(FunctionName=name)["Role"] == role["Arn"]


def test_each_version_runs_its_own_code_and_a_version_of_code_published_before_reuses_its_function_version(
    api, admin_token, jobs, monkeypatch, aws
):
    host = FakeHost(
        tables={"BaseRates": {("web",): {"rate": Decimal(100)}}},
        ranges={"ValueBands": [(("auto",), Decimal(0), Decimal(20000), {"factor": Decimal("1.0")})]},
    )
    request = {
        "segment": {
            "element": {
                "locator": "root",
                "data": {},
                "elements": [{"type": "Vehicle", "locator": "car", "data": {"vin": "1HGCM", "value": 12000}}],
            }
        }
    }
    with lambda_runner(monkeypatch, jobs) as invoker:
        tenant = tenant_with_plugins(api, admin_token)
        first = deployment_status(api, admin_token, tenant)["metadata"]["latestVersion"]
        second = deploy(api, admin_token, tenant, DOUBLED)
        third = deploy(api, admin_token, tenant)  # the first version's code again
        runner = LambdaRunner(settings().plugin_function_name, invoke=invoker)

        for version in (first, third):
            assert runner.call(tenant, version, {}, "rate_PersonalAuto", request, host) == {
                "items": [
                    {
                        "elementLocator": "car",
                        "chargeType": "premium",
                        "rate": Decimal("100.0"),
                        "referenceRate": 100,
                        "tag": "band 1.0",
                    },
                    {"elementLocator": "root", "chargeType": "tax", "amount": 25},
                ]
            }
        assert runner.call(tenant, second, {}, "rate_PersonalAuto", request, host) == {
            "items": [{"elementLocator": "root", "chargeType": "premium", "amount": 2}]
        }
        name = f"pas-tenant-{tenant}"
        assert {(name, first), (name, second), (name, third)} <= set(invoker.invocations)

    assert repository.aliases(name) == {first: "1", second: "2", third: "1"}
    assert repository.tenant_functions.versions(name) == ["1", "2"]
    assert configuration_repository.get_version(tenant, third).tenantCode.functionVersion == "1"


def test_a_policy_issued_many_deployments_ago_still_gets_a_change_priced_by_its_own_version(
    api, admin_token, jobs, monkeypatch, aws
):
    with lambda_runner(monkeypatch, jobs) as invoker:
        tenant = tenant_with_plugins(api, admin_token)
        first = deployment_status(api, admin_token, tenant)["metadata"]["latestVersion"]
        policy = issued_policy(api, admin_token, tenant, new_account(api, admin_token, tenant))
        for plugins in (DOUBLED, DOUBLED.replace("'amount': 2}", "'amount': 3}"), DOUBLED):
            deploy(api, admin_token, tenant, plugins)
        assert len(repository.tenant_functions.versions(f"pas-tenant-{tenant}")) == 3

        static = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
        draft = ok(
            create_transaction(
                api, admin_token, tenant, policy["locator"], "change", [params(AUGUST), modify(static, value="25000")]
            )
        )
        priced = ok(step(api, admin_token, tenant, draft["locator"], "price"))

    assert amounts(priced["charges"]) == [
        ("premium", Decimal("-600.00"), True),
        ("premium", Decimal("900.00"), False),
        ("tax", Decimal("-12.50"), True),
        ("tax", Decimal("25"), False),
    ]
    assert (f"pas-tenant-{tenant}", first) in invoker.invocations


def test_a_transient_lambda_error_makes_the_job_run_again(api, admin_token, jobs, monkeypatch, aws):
    real, failures = repository.publish, []

    def conflicting(*arguments, **options):
        if not failures:
            failures.append("ResourceConflictException")
            raise repository.Retry("ResourceConflictException: The operation cannot be performed at this time")
        return real(*arguments, **options)

    monkeypatch.setattr(repository, "publish", conflicting)
    with lambda_runner(monkeypatch, jobs, eager_publishing=False):
        tenant = tenant_with_plugins(api, admin_token)
        [publish] = [m for m in jobs.sent if m.job_type == "tenantCode.publish"]
        with pytest.raises(tenant_code.PublishAgain):
            jobs.drain(job_types=frozenset({"tenantCode.publish"}))
        assert get_job(tenant, publish.job_locator)["status"] == "queued"
        assert deployment_status(api, admin_token, tenant)["tenantCode"] == {"status": "publishing"}

        jobs.send(publish.model_dump_json())  # SQS delivers the message again
        jobs.drain(job_types=frozenset({"tenantCode.publish"}))

        assert deployment_status(api, admin_token, tenant)["tenantCode"]["status"] == "live"


def test_a_redeployment_becomes_current_once_its_code_is_live_and_one_lambda_refuses_leaves_the_previous_current(
    api, admin_token, jobs, monkeypatch, aws
):
    def refused(*arguments, **options):
        raise repository.Refused("InvalidParameterValueException: Unzipped size must be smaller than 262144000 bytes")

    def premium(priced):
        return [c["amount"] for c in ok(priced)["items"] if c["chargeType"] == "premium"]

    with lambda_runner(monkeypatch, jobs, eager_publishing=False):
        tenant = tenant_with_plugins(api, admin_token)
        jobs.drain(job_types=frozenset({"tenantCode.publish"}))
        first = deployment_status(api, admin_token, tenant)["metadata"]["latestVersion"]

        second = deploy(api, admin_token, tenant, DOUBLED)
        status = deployment_status(api, admin_token, tenant)
        assert (status["metadata"]["latestVersion"], status["tenantCode"]["status"]) == (first, "live")
        assert status["latestDeployment"] == {"version": second, "tenantCode": {"status": "publishing"}}
        assert premium(_priced(api, admin_token, tenant)) == [1200]  # the previous version serves meanwhile
        jobs.drain(job_types=frozenset({"tenantCode.publish"}))
        status = deployment_status(api, admin_token, tenant)
        assert (status["metadata"]["latestVersion"], status["metadata"]["version2"]) == (second, first)
        assert "latestDeployment" not in status and premium(_priced(api, admin_token, tenant)) == [2]

        monkeypatch.setattr(repository, "publish", refused)
        third = deploy(api, admin_token, tenant)
        [publish] = [m for m in jobs.sent if m.job_type == "tenantCode.publish" and m.payload == {"version": third}]
        jobs.drain(job_types=frozenset({"tenantCode.publish"}))

        job = get_job(tenant, publish.job_locator)
        assert job["status"] == "failed" and job["error"].startswith("tenantCode.unpublishable: Lambda refused")
        status = deployment_status(api, admin_token, tenant)
        assert status["metadata"]["latestVersion"] == second and status["tenantCode"]["status"] == "live"
        assert set(status["pluginStatus"].values()) == {"deployed"}
        assert status["latestDeployment"] == {
            "version": third,
            "tenantCode": {
                "status": "failed",
                "error": ("InvalidParameterValueException: Unzipped size must be smaller than 262144000 bytes"),
            },
        }
        assert premium(_priced(api, admin_token, tenant)) == [2]


def test_a_plugin_module_that_fails_to_import_is_the_deployments_error_naming_its_file_and_line(
    api, admin_token, jobs, monkeypatch, aws
):
    with lambda_runner(monkeypatch, jobs):
        tenant = tenant_with_plugins(api, admin_token)
        first = deployment_status(api, admin_token, tenant)["metadata"]["latestVersion"]
        broken = deploy(api, admin_token, tenant, "\n\nimport module_that_is_not_there\n" + QUOTE_PLUGINS)

        status = deployment_status(api, admin_token, tenant)
        assert status["metadata"]["latestVersion"] == first and status["tenantCode"]["status"] == "live"
        assert status["latestDeployment"] == {
            "version": broken,
            "tenantCode": {
                "status": "failed",
                "error": (
                    "Plugin modules of the configuration fail to import: ModuleNotFoundError: No module named "
                    "'module_that_is_not_there' (plugins/python/auto.py line 3)"
                ),
            },
        }
        assert repository.alias_version(f"pas-tenant-{tenant}", broken) is None
        assert ok(_priced(api, admin_token, tenant))["items"]  # the previous version still serves


def test_on_the_local_runner_a_deployment_publishes_nothing(api, admin_token, jobs, aws):
    tenant = tenant_with_plugins(api, admin_token)

    assert [m for m in jobs.sent if m.job_type == "tenantCode.publish"] == []
    status = deployment_status(api, admin_token, tenant)
    assert "tenantCode" not in status and set(status["pluginStatus"].values()) == {"deployed"}
