"""`chalice package` merged with infra/template.json and split by infra/split_api.py is a valid stack that wires
the app to its resources."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from local.resources import TEMPLATE, resources, table_definition

ROOT = Path(__file__).resolve().parents[2]
OWN_RESOURCES = {"CoreTable", "BlobBucket", "JobsQueue"}
WIRED_VARIABLES = {"PAS_TABLE_NAME": "CoreTable", "PAS_BUCKET_NAME": "BlobBucket", "PAS_JOBS_QUEUE_NAME": "JobsQueue"}
TRACE_ACTIONS = ["xray:PutTelemetryRecords", "xray:PutTraceSegments"]


@pytest.fixture(scope="module")
def packaged(tmp_path_factory) -> Path:
    """`chalice package` (then infra/split_api.py, as infra/README.md deploys it) of a copy of the app whose
    requirements.txt is empty: the template is the same, and
    chalice neither downloads the dependencies (pip, on the network) nor zips them, nor leaves its 22 MB
    bundle cache in .chalice/deployments for every version of the code. The command-line tool (pas_cli/,
    pyproject.toml) is copied too: the bundle must leave it out."""
    project = tmp_path_factory.mktemp("project")
    shutil.copy(ROOT / "app.py", project)
    shutil.copy(ROOT / "pyproject.toml", project)
    shutil.copytree(ROOT / "pas_cli", project / "pas_cli", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "chalicelib", project / "chalicelib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / ".chalice", project / ".chalice", ignore=shutil.ignore_patterns("deployments", "venv"))
    (project / "requirements.txt").write_text("")
    out = tmp_path_factory.mktemp("package") / "out"
    chalice = Path(sys.executable).parent / "chalice"
    env = {**os.environ, "AWS_DEFAULT_REGION": "us-east-1"}
    result = subprocess.run(
        [str(chalice), "package", "--stage", "prod", "--merge-template", str(TEMPLATE), str(out)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    split = subprocess.run(
        [sys.executable, str(ROOT / "infra" / "split_api.py"), str(out / "sam.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert split.returncode == 0, split.stdout + split.stderr
    return out / "sam.json"


@pytest.fixture(scope="module")
def stack(packaged) -> dict[str, Any]:
    return json.loads(packaged.read_text())


def test_the_lambda_bundle_holds_the_service_and_not_the_command_line_tool(packaged):
    with zipfile.ZipFile(packaged.parent / "deployment.zip") as bundle:
        names = bundle.namelist()
    assert "app.py" in names and "chalicelib/core/money.py" in names
    assert [name for name in names if name.startswith("pas_cli/") or name == "pyproject.toml"] == []


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
    assert (
        created["StreamSpecification"]["StreamViewType"]
        == deployed["Properties"]["StreamSpecification"]["StreamViewType"]
    )


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
                if services == {"xray"}:  # X-Ray's actions take no resource: "*", and only these two
                    assert (sorted(actions), statement["Resource"]) == (TRACE_ACTIONS, "*"), role_name
                    continue
                if services & {"lambda", "iam", "ec2"}:
                    _tenant_function_statement(role_name, services, actions, statement)
                    continue
                assert services <= {"dynamodb", "s3", "sqs"}, f"{role_name}: {services}"
                targets = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
                for target in targets:
                    named = _referenced_resources(target)
                    assert len(named) == 1 and named <= OWN_RESOURCES, f"{role_name}: {target}"


TENANT_FUNCTION_ACTIONS = {"ec2:DescribeSecurityGroups", "ec2:DescribeSubnets", "ec2:DescribeVpcs"}
"""What creating a function in a VPC needs of its caller, which takes no resource ("*")."""


def _tenant_function_statement(
    role_name: str, services: set[str], actions: list[str], statement: dict[str, Any]
) -> None:
    """The tenant functions (plugins/tenant_code.py): Lambda actions on `pas-tenant-*` functions and the one
    libraries layer only; roles only under /pas-tenant/, created only with the stack's boundary and passed only
    to Lambda; EC2 only the three descriptions a function in a VPC needs."""
    assert len(services) == 1, f"{role_name}: {actions}"
    text = json.dumps(statement["Resource"])
    if services == {"ec2"}:
        assert set(actions) <= TENANT_FUNCTION_ACTIONS and statement["Resource"] == "*", f"{role_name}: {actions}"
    elif services == {"lambda"}:
        targets = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        for target in targets:
            named = target["Fn::Sub"]
            assert ":function:pas-tenant-*" in named or ":layer:pas-tenant-libraries" in named, f"{role_name}: {named}"
    else:
        assert text.count("role/pas-tenant/*") == 1, f"{role_name}: {text}"
        condition = statement.get("Condition", {}).get("StringEquals", {})
        if {"iam:CreateRole", "iam:PutRolePolicy"} & set(actions):
            assert condition == {"iam:PermissionsBoundary": {"Ref": "TenantFunctionBoundary"}}, role_name
        elif "iam:PassRole" in actions:
            assert condition == {"iam:PassedToService": "lambda.amazonaws.com"}, role_name
        else:
            assert actions == ["iam:GetRole"], f"{role_name}: {actions}"


def test_the_tenant_functions_boundary_and_network_let_tenant_code_reach_nothing(stack):
    """The boundary caps every tenant role at its logs and the network interfaces Lambda makes; the tenant
    subnets have no route out (a route table without routes, no gateway, no endpoint in the stack) and their
    security group lets nothing out."""
    resources_ = stack["Resources"]
    boundary = resources_["TenantFunctionBoundary"]["Properties"]["PolicyDocument"]["Statement"]
    assert {action.split(":")[0] for statement in boundary for action in statement["Action"]} == {"logs", "ec2"}
    assert all(
        "Create" not in a or a in ("logs:CreateLogGroup", "logs:CreateLogStream", "ec2:CreateNetworkInterface")
        for statement in boundary
        for a in statement["Action"]
    )
    types = {resource["Type"] for resource in resources_.values()}
    assert not types & {
        "AWS::EC2::Route",
        "AWS::EC2::InternetGateway",
        "AWS::EC2::NatGateway",
        "AWS::EC2::VPCEndpoint",
        "AWS::EC2::VPCGatewayAttachment",
        "AWS::EC2::EgressOnlyInternetGateway",
    }
    assert resources_["TenantSecurityGroup"]["Properties"]["SecurityGroupEgress"] == [
        {"IpProtocol": "-1", "CidrIp": "127.0.0.1/32", "Description": "nothing leaves"}
    ]
    shared = stack["Globals"]["Function"]["Environment"]["Variables"]
    assert shared["PAS_PLUGIN_RUNNER"] == "lambda"
    assert shared["PAS_TENANT_FUNCTION_BOUNDARY_ARN"] == {"Ref": "TenantFunctionBoundary"}
    assert "TenantSubnetA" in json.dumps(shared["PAS_TENANT_FUNCTION_SUBNET_IDS"])


def _infra_module(name: str) -> Any:
    """A module of infra/ (a folder of scripts, not a package: its modules import each other by name)."""
    if str(ROOT / "infra") not in sys.path:
        sys.path.insert(0, str(ROOT / "infra"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "infra" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _apis(stack: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in stack["Resources"].items() if r["Type"] == "AWS::Serverless::Api"}


def test_every_rest_api_fits_the_resources_per_api_quota(stack):
    """API Gateway refuses a REST API with more path resources than its quota: infra/README.md."""
    counter, limit = _infra_module("api_resources"), _infra_module("split_api").GROUP_LIMIT
    apis = _apis(stack)
    assert set(apis) == {"RestAPI", "PolicyAPI", "BillingAPI"}
    for name, api in apis.items():
        paths = api["Properties"]["DefinitionBody"]["paths"]
        assert len(counter.resource_paths(paths)) <= limit < counter.DEFAULT_QUOTA, name


def test_the_split_apis_serve_every_route_of_the_app_once(stack):
    from app import app

    served: dict[tuple[str, str], list[str]] = {}
    for name, api in _apis(stack).items():
        for path, operations in api["Properties"]["DefinitionBody"]["paths"].items():
            for method in operations:
                served.setdefault((path, method.upper()), []).append(name)
    assert set(served) == {(path, method) for path, entries in app.routes.items() for method in entries}
    assert [route for route, apis in served.items() if len(apis) > 1] == []
    assert {path.split("/")[1] for (path, _), (api,) in served.items() if api == "PolicyAPI"} == {"policy"}
    assert {path.split("/")[1] for (path, _), (api,) in served.items() if api == "BillingAPI"} == {"billing"}


def test_every_api_integrates_with_the_api_handler_and_may_invoke_it(stack):
    permissions = [r["Properties"] for r in stack["Resources"].values() if r["Type"] == "AWS::Lambda::Permission"]
    for name, api in _apis(stack).items():
        body = api["Properties"]["DefinitionBody"]
        uris = {
            json.dumps(operation["x-amazon-apigateway-integration"]["uri"])
            for operations in body["paths"].values()
            for operation in operations.values()
        }
        assert len(uris) == 1 and "${APIHandler.Arn}" in uris.pop(), name
        assert (
            body["x-amazon-apigateway-gateway-responses"]
            == resources()["RestAPI"]["Properties"]["DefinitionBody"]["x-amazon-apigateway-gateway-responses"]
        ), name
        assert body["x-amazon-apigateway-binary-media-types"] == ["*/*"], name
        invokers = [
            p
            for p in permissions
            if p["FunctionName"] == {"Ref": "APIHandler"} and {"Ref": name} in p["SourceArn"]["Fn::Sub"][1].values()
        ]
        assert len(invokers) == 1, name
        assert stack["Outputs"][f"{name}Id"]["Value"] == {"Ref": name}


def test_the_custom_domain_routes_each_api_its_segments_with_the_full_path(stack):
    assert stack["Parameters"]["DomainName"]["Default"] == ""
    domain = stack["Resources"]["ApiDomainName"]
    assert domain["Condition"] == "HasCustomDomain"
    assert domain["Properties"]["EndpointConfiguration"] == {"Types": ["REGIONAL"]}
    rules = {name: r for name, r in stack["Resources"].items() if r["Type"] == "AWS::ApiGatewayV2::RoutingRule"}
    routed = {}
    for rule in rules.values():
        assert rule["Condition"] == "HasCustomDomain"
        (action,) = rule["Properties"]["Actions"]
        assert action["InvokeApi"]["StripBasePath"] is False
        base_paths = [c["MatchBasePaths"]["AnyOf"] for c in rule["Properties"]["Conditions"]]
        routed[action["InvokeApi"]["ApiId"]["Ref"]] = (rule["Properties"]["Priority"], base_paths)
    assert routed == {"PolicyAPI": (10, [["policy"]]), "BillingAPI": (20, [["billing"]]), "RestAPI": (1000, [])}


def test_every_function_and_api_is_traced(stack):
    assert {name: f["Properties"]["Tracing"] for name, f in _functions(stack).items()} == {
        name: "Active" for name in _functions(stack)
    }
    assert {name: api["Properties"]["TracingEnabled"] for name, api in _apis(stack).items()} == {
        name: True for name in _apis(stack)
    }


def test_the_alarms_watch_the_apis_the_dead_letter_queue_and_the_jobs_metrics_as_emitted(stack):
    from chalicelib.runtime import observability

    resources = stack["Resources"]
    alarms = {name for name, r in resources.items() if r["Type"] == "AWS::CloudWatch::Alarm"}
    assert alarms == {
        "JobsDeadLetterAlarm",
        "JobsDeadLetterAgeAlarm",
        "JobFailuresAlarm",
        "ApiServerErrorRateAlarm",
        "ApiLatencyAlarm",
    }
    age = resources["JobsDeadLetterAgeAlarm"]["Properties"]
    assert (age["Namespace"], age["MetricName"], age["Dimensions"][0]["Value"]) == (
        "AWS/SQS",
        "ApproximateAgeOfOldestMessage",
        {"Fn::GetAtt": ["JobsDeadLetterQueue", "QueueName"]},
    )
    # the metric the worker emits (runtime/jobs.py), in the namespace the functions are told
    failures = resources["JobFailuresAlarm"]["Properties"]
    namespace = stack["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_METRICS_NAMESPACE"]
    assert (failures["Namespace"], failures["MetricName"], failures["Dimensions"]) == (
        namespace,
        "Jobs",
        [{"Name": "service", "Value": observability.SERVICE}, {"Name": "outcome", "Value": "failed"}],
    )
    assert "${AWS::StackName}" in namespace["Fn::Sub"]  # two stacks of one account keep their metrics apart
    # API Gateway's metrics of every API, by the names the APIs are given
    names = {json.dumps(api["Properties"]["Name"]) for api in _apis(stack).values()}
    for alarm in ("ApiServerErrorRateAlarm", "ApiLatencyAlarm"):
        watched = [m["MetricStat"]["Metric"] for m in resources[alarm]["Properties"]["Metrics"] if "MetricStat" in m]
        assert {m["Namespace"] for m in watched} == {"AWS/ApiGateway"}
        assert {json.dumps(m["Dimensions"][0]["Value"]) for m in watched} == names, alarm


PSEUDO_PARAMETERS = {
    "AWS::AccountId",
    "AWS::NoValue",
    "AWS::Partition",
    "AWS::Region",
    "AWS::StackId",
    "AWS::StackName",
    "AWS::URLSuffix",
}
MOTO_CREATES = {
    "CoreTable",
    "BlobBucket",
    "JobsQueue",
    "JobsDeadLetterQueue",
    "TenantVpc",
    "TenantSubnetA",
    "TenantSubnetB",
    "TenantRouteTable",
    "TenantSubnetARoutes",
    "TenantSubnetBRoutes",
    "TenantSecurityGroup",
    "TenantFunctionBoundary",
    "ApiHandlerRole",
    "RunJobRole",
    "ReapJobsRole",
    "RunDueWorkRole",
    "CleanUpTablesRole",
}
"""What moto's CloudFormation creates of the packaged stack (issue 30, 5c): every resource of a type it models
whose references all lie inside that set. Left out: the SAM functions and APIs (moto applies no transform), and
what refers to them (the invoke permissions), the alarms, secrets, custom domain and routing rules (types
moto's CloudFormation does not model)."""


def _references(node: Any) -> set[str]:
    """The logical ids and parameters a template fragment names through Ref, Fn::GetAtt and Fn::Sub."""
    if isinstance(node, list):
        return set().union(*map(_references, node)) if node else set()
    if not isinstance(node, dict):
        return set()
    found: set[str] = set()
    for key, value in node.items():
        if key == "Ref" and isinstance(value, str):
            found.add(value)
        elif key == "Fn::GetAtt":
            found.add(value[0] if isinstance(value, list) else value.split(".")[0])
        elif key == "Fn::Sub":
            text, local = (value, {}) if isinstance(value, str) else (value[0], value[1])
            found |= {name.split(".")[0] for name in re.findall(r"\$\{([^!}][^}]*)\}", text)} - set(local)
            found |= _references(local)
            continue
        found |= _references(value)
    return found


def _modeled_by_moto(stack: dict[str, Any]) -> dict[str, Any]:
    """The packaged stack cut to what moto's CloudFormation models (see MOTO_CREATES), without the transform."""
    from moto.cloudformation.parsing import get_model_map

    modeled = get_model_map()
    kept = {name: r for name, r in stack["Resources"].items() if r["Type"] in modeled}
    known = set(stack.get("Parameters", {})) | PSEUDO_PARAMETERS
    while True:
        unresolved = {
            name
            for name, r in kept.items()
            if (
                _references(r)
                | set(
                    r.get("DependsOn", [])
                    if isinstance(r.get("DependsOn"), list)
                    else [r["DependsOn"]]
                    if "DependsOn" in r
                    else []
                )
            )
            - set(kept)
            - known
        }
        if not unresolved:
            break
        for name in unresolved:
            del kept[name]
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Parameters": stack.get("Parameters", {}),
        "Conditions": stack.get("Conditions", {}),
        "Resources": kept,
    }


@pytest.mark.filterwarnings("ignore:Exception\\(DependencyViolationError\\):UserWarning")  # moto's delete order
def test_the_stacks_resources_moto_models_are_created_in_moto_from_the_packaged_template(stack, aws):
    """Deployed by moto's CloudFormation from the packaged template: every reference between them resolves, the
    table and queues have the properties the service relies on, the tenant subnets have no route out,
    and every function role's policies name the resources created with them."""
    import boto3

    template = _modeled_by_moto(stack)
    assert set(template["Resources"]) == MOTO_CREATES
    cloudformation = boto3.client("cloudformation", region_name="us-east-1")
    cloudformation.create_stack(
        StackName="rehearsal", TemplateBody=json.dumps(template), Capabilities=["CAPABILITY_NAMED_IAM"]
    )
    created = {
        r["LogicalResourceId"]: r["PhysicalResourceId"]
        for r in cloudformation.list_stack_resources(StackName="rehearsal")["StackResourceSummaries"]
        if r["ResourceStatus"] == "CREATE_COMPLETE"
    }
    try:
        assert cloudformation.describe_stacks(StackName="rehearsal")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
        assert set(created) == MOTO_CREATES

        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        table = dynamodb.describe_table(TableName=created["CoreTable"])["Table"]
        expected = table_definition()
        assert table["KeySchema"] == expected["KeySchema"]
        assert sorted(index["IndexName"] for index in table["GlobalSecondaryIndexes"]) == sorted(
            index["IndexName"] for index in expected["GlobalSecondaryIndexes"]
        )
        assert table["StreamSpecification"]["StreamEnabled"] is True

        sqs = boto3.client("sqs", region_name="us-east-1")
        dead_letters = sqs.get_queue_attributes(QueueUrl=created["JobsDeadLetterQueue"], AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        jobs = sqs.get_queue_attributes(QueueUrl=created["JobsQueue"], AttributeNames=["All"])["Attributes"]
        assert json.loads(jobs["RedrivePolicy"]) == {"deadLetterTargetArn": dead_letters, "maxReceiveCount": 5}
        assert jobs["VisibilityTimeout"] == str(resources()["JobsQueue"]["Properties"]["VisibilityTimeout"])

        # of the bucket's properties moto's CloudFormation applies the encryption only (not its versioning, public
        # access block, lifecycle or CORS rules)
        s3 = boto3.client("s3", region_name="us-east-1")
        (rule,) = s3.get_bucket_encryption(Bucket=created["BlobBucket"])["ServerSideEncryptionConfiguration"]["Rules"]
        assert rule["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"

        ec2 = boto3.client("ec2", region_name="us-east-1")
        subnets = ec2.describe_subnets(SubnetIds=[created["TenantSubnetA"], created["TenantSubnetB"]])["Subnets"]
        assert {subnet["VpcId"] for subnet in subnets} == {created["TenantVpc"]}
        assert len({subnet["AvailabilityZone"] for subnet in subnets}) == 2
        # both subnets take the stack's route table (moto records an association as its table), whose one route,
        # like the VPC's main table's, stays inside the VPC
        assert created["TenantSubnetARoutes"] == created["TenantSubnetBRoutes"] == created["TenantRouteTable"]
        in_vpc = [{"Name": "vpc-id", "Values": [created["TenantVpc"]]}]
        tables = ec2.describe_route_tables(Filters=in_vpc)["RouteTables"]
        assert created["TenantRouteTable"] in {table["RouteTableId"] for table in tables}
        assert {route.get("GatewayId") for table in tables for route in table["Routes"]} == {"local"}
        (group,) = ec2.describe_security_groups(GroupIds=[created["TenantSecurityGroup"]])["SecurityGroups"]
        # no way in; its egress rule moto's CloudFormation does not apply (it keeps EC2's allow-all): the template's
        # own rule is checked in test_the_tenant_functions_boundary_and_network_let_tenant_code_reach_nothing
        assert (group["VpcId"], group["IpPermissions"]) == (created["TenantVpc"], [])

        iam = boto3.client("iam", region_name="us-east-1")
        table_arn = table["TableArn"]
        for role in ("ApiHandlerRole", "RunJobRole"):
            documents = [
                json.dumps(iam.get_role_policy(RoleName=created[role], PolicyName=name)["PolicyDocument"])
                for name in iam.list_role_policies(RoleName=created[role])["PolicyNames"]
            ]
            assert documents and any(table_arn in document for document in documents), role
            assert not any("Fn::" in document or '"Ref"' in document for document in documents), role
        assert (
            iam.get_policy(PolicyArn=created["TenantFunctionBoundary"])["Policy"]["Arn"]
            == created["TenantFunctionBoundary"]
        )
    finally:
        _delete(cloudformation, created)


def _delete(cloudformation: Any, created: dict[str, str]) -> None:
    """Leave the session's moto as it was. moto deletes a stack's resources in no dependency order (the VPC
    before its subnets fails): as often as that takes; then the bucket, which the stack retains."""
    import boto3
    from botocore.exceptions import ClientError

    for _ in range(len(MOTO_CREATES)):
        try:
            cloudformation.delete_stack(StackName="rehearsal")
            break
        except ClientError as error:
            assert error.response["Error"]["Code"] == "DependencyViolation", error
    boto3.client("s3", region_name="us-east-1").delete_bucket(Bucket=created["BlobBucket"])
