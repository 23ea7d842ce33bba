"""`chalice package` merged with infra/template.json is a valid stack that wires the app to its resources."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from local.resources import TEMPLATE, resources, table_definition

ROOT = Path(__file__).resolve().parents[2]
OWN_RESOURCES = {"CoreTable", "BlobBucket", "JobsQueue"}
WIRED_VARIABLES = {"PAS_TABLE_NAME": "CoreTable", "PAS_BUCKET_NAME": "BlobBucket", "PAS_JOBS_QUEUE_NAME": "JobsQueue"}


@pytest.fixture(scope="module")
def packaged(tmp_path_factory) -> Path:
    """`chalice package` of a copy of the app whose requirements.txt is empty: the template is the same, and
    chalice neither downloads the dependencies (pip, on the network) nor zips them, nor leaves its 22 MB
    bundle cache in .chalice/deployments for every version of the code."""
    project = tmp_path_factory.mktemp("project")
    shutil.copy(ROOT / "app.py", project)
    shutil.copytree(ROOT / "chalicelib", project / "chalicelib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / ".chalice", project / ".chalice", ignore=shutil.ignore_patterns("deployments", "venv"))
    (project / "requirements.txt").write_text("")
    out = tmp_path_factory.mktemp("package") / "out"
    chalice = Path(sys.executable).parent / "chalice"
    env = {**os.environ, "AWS_DEFAULT_REGION": "us-east-1"}
    result = subprocess.run(
        [str(chalice), "package", "--stage", "prod", "--merge-template", str(TEMPLATE), str(out)],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out / "sam.json"


@pytest.fixture(scope="module")
def stack(packaged) -> dict[str, Any]:
    return json.loads(packaged.read_text())


def test_the_merged_template_passes_cfn_lint(packaged):
    from cfnlint.api import ManualArgs, lint_file

    matches = lint_file(packaged, config=ManualArgs(regions=["us-east-1"]))
    errors = [f"{m.rule.id} {m.message} ({m.path})" for m in matches if m.rule.id.startswith("E")]
    assert errors == []


def test_the_deployed_table_is_the_one_tests_and_make_run_create(stack):
    deployed = stack["Resources"]["CoreTable"]
    assert deployed == resources()["CoreTable"]
    created = table_definition()
    for name in ("AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "BillingMode"):
        assert created[name] == deployed["Properties"][name]
    assert created["StreamSpecification"]["StreamViewType"] == deployed["Properties"]["StreamSpecification"][
        "StreamViewType"]


def _functions(stack: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in stack["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}


def test_every_function_is_told_the_names_of_the_stacks_own_resources(stack):
    shared = stack["Globals"]["Function"]["Environment"]["Variables"]
    for variable, resource in WIRED_VARIABLES.items():
        assert resource in json.dumps(shared[variable]), variable
    functions = _functions(stack)
    assert {"APIHandler", "RunJob", "ReapJobs"} <= set(functions)
    for name, function in functions.items():
        own = function["Properties"].get("Environment", {}).get("Variables", {})
        assert not set(own) & set(shared), f"{name} overrides the stack's resource names"
        assert own.get("PAS_STAGE") == "prod"


def test_the_job_worker_is_triggered_by_the_stacks_queue(stack):
    (source,) = _functions(stack)["RunJob"]["Properties"]["Events"].values()
    assert source["Type"] == "SQS"
    assert "${JobsQueue.QueueName}" in source["Properties"]["Queue"]["Fn::Sub"]


def _referenced_resources(resource: Any) -> set[str]:
    """The logical ids of infra/template.json that a policy's Resource names (through Ref/GetAtt/Sub)."""
    text = json.dumps(resource)
    return {name for name in resources() if name in text}


def test_functions_may_touch_only_the_stacks_table_bucket_and_queue(stack):
    roles = {name: r for name, r in stack["Resources"].items() if r["Type"] == "AWS::IAM::Role"}
    assert roles
    for role_name, role in roles.items():
        for policy in role["Properties"]["Policies"]:
            for statement in policy["PolicyDocument"]["Statement"]:
                actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
                assert not any("*" in a for a in actions), f"{role_name}: wildcard action in {actions}"
                services = {a.split(":")[0] for a in actions}
                if services == {"logs"}:
                    continue
                assert services <= {"dynamodb", "s3", "sqs"}, f"{role_name}: {services}"
                targets = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
                for target in targets:
                    named = _referenced_resources(target)
                    assert len(named) == 1 and named <= OWN_RESOURCES, f"{role_name}: {target}"


def _api_resources_module() -> Any:
    spec = importlib.util.spec_from_file_location("api_resources", ROOT / "infra" / "api_resources.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rest_api_fits_the_resources_per_api_quota(stack):
    """API Gateway refuses a REST API with more path resources than its quota: infra/README.md."""
    counter = _api_resources_module()
    paths = stack["Resources"]["RestAPI"]["Properties"]["DefinitionBody"]["paths"]
    assert len(counter.resource_paths(paths)) <= counter.DEFAULT_QUOTA
