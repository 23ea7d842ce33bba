"""The Lambda control plane of the per-tenant functions (`PAS_PLUGIN_RUNNER=lambda`): their IAM role, the
function, its published versions and one alias per configuration version. plugins/tenant_code.py publishes
through it, as a job; storage/functions.py invokes.

What a publish does, each step safe to repeat (the job runs again after a transient error):

1. the role (named as the function): trusted by Lambda only, under the stack's permissions boundary, with one
   inline policy that lets it write its own log group and nothing else (but, in a VPC, the network-interface
   actions Lambda itself takes with the role to place the function in its subnets);
2. the function, created from the code object in S3 or, when it exists, its configuration (memory, timeout,
   VPC, role) and then its code updated, waiting each time until Lambda has applied the update;
3. a version published with the code's SHA-256 as a precondition, so a concurrent publish of another
   configuration version (it changed `$LATEST` meanwhile) fails this one instead of publishing that code
   under this alias: the job runs again. When a published version already runs the same code with the same
   configuration (a redeploy that changed no plugin), the alias points at it instead: a function holds one
   version per distinct code, not one per deployment;
4. the reserved concurrency, the caller's check of that version (plugins/tenant_code.py imports every plugin
   module in it), then the alias named after the configuration version, pointed at that version: only now do
   calls at this alias run, and they run exactly this code.

Errors: Lambda's and IAM's throttling, a function still being updated and a role not yet assumable (IAM is
eventually consistent) are `Retry` (the job runs again); what Lambda refuses for good (code too large, a
handler it rejects) is `Refused`, whose message names what it said.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chalicelib.settings import settings
from chalicelib.storage import clients

ALIAS_NAME_LENGTH = 128
_RETRYABLE = frozenset(
    {
        "TooManyRequestsException",
        "ServiceException",
        "ResourceNotReadyException",
        "ResourceConflictException",
        "PreconditionFailedException",
        "ThrottlingException",
        "Throttling",
        "ServiceFailure",
        "ServiceUnavailable",
        "ConcurrentModification",
        "ConcurrentModificationException",
        "EC2ThrottledException",
    }
)
_LOG_POLICY = "own-logs"
_WAIT_SECONDS = 1.0
_WAIT_ATTEMPTS = 60


class Retry(Exception):
    """Transient: run the publish again later."""


class Refused(Exception):
    """Lambda or IAM refused the function as it is; running again would not help."""


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    handler: str
    memory_mb: int
    timeout_seconds: int
    reserved_concurrency: int
    """0: none reserved."""
    subnet_ids: tuple[str, ...] = ()
    security_group_ids: tuple[str, ...] = ()
    boundary_arn: str | None = None
    layers: tuple[str, ...] = ()
    """Layer version ARNs (the renderer's libraries: `layer`)."""
    runtime: str = "python3.11"
    description: str = ""


@dataclass(frozen=True)
class Published:
    function_version: str
    code_sha256: str


def publish(
    spec: FunctionSpec, code_bucket: str, code_key: str, code_sha256: str, alias: str, verify: Callable[[str], None]
) -> Published:
    """The function running the code object `code_bucket`/`code_key` (whose SHA-256, base64 as Lambda writes
    it, is `code_sha256`) at alias `alias` (see the module docstring). `verify(version)` runs before the alias
    points at the version (it raises what stops the publish)."""
    role_arn = _role(spec)
    code: dict[str, Any] = {"S3Bucket": code_bucket, "S3Key": code_key}
    configuration = _configuration(spec, role_arn)
    lambda_ = clients.client("lambda")
    existing = _call(lambda_.get_function_configuration, FunctionName=spec.name, missing_ok=True)
    same = (
        None
        if existing is None
        else next(
            (found for found in _version_configurations(spec.name) if _runs_as(found, configuration, code_sha256)), None
        )
    )
    if same is not None:
        version = str(same["Version"])
    else:
        version = _published_version(spec, code, configuration, code_sha256, alias, existing is None)
    if spec.reserved_concurrency:
        _call(
            lambda_.put_function_concurrency,
            FunctionName=spec.name,
            ReservedConcurrentExecutions=spec.reserved_concurrency,
        )
    verify(version)
    try:
        if _call(lambda_.get_alias, FunctionName=spec.name, Name=alias, missing_ok=True) is None:
            _call(lambda_.create_alias, FunctionName=spec.name, Name=alias, FunctionVersion=version)
        else:
            _call(lambda_.update_alias, FunctionName=spec.name, Name=alias, FunctionVersion=version)
    except Refused as refused:
        if "ResourceNotFoundException" not in str(refused):
            raise
        # a prune (another version's publish) deleted the function version before this alias pointed at it
        raise Retry(f"{spec.name} version {version} was deleted before alias {alias} pointed at it") from None
    return Published(version, code_sha256)


def _published_version(
    spec: FunctionSpec, code: dict[str, Any], configuration: dict[str, Any], code_sha256: str, alias: str, create: bool
) -> str:
    lambda_ = clients.client("lambda")
    if create:
        _call(
            lambda_.create_function,
            FunctionName=spec.name,
            PackageType="Zip",
            Code=code,
            Publish=False,
            **configuration,
        )
    else:
        _wait_until_updatable(spec.name)
        _call(lambda_.update_function_configuration, FunctionName=spec.name, **configuration)
        _wait_until_updatable(spec.name, updated=True)
        _call(lambda_.update_function_code, FunctionName=spec.name, **code)
    _wait_until_updatable(spec.name, updated=True)
    published = _call(
        lambda_.publish_version, FunctionName=spec.name, CodeSha256=code_sha256, Description=f"{PUBLISHED_FOR}{alias}"
    )
    if published.get("CodeSha256") not in (None, code_sha256):
        raise Retry(f"{spec.name} published other code than configuration {alias}'s: another publish ran")
    return str(published["Version"])


def _runs_as(published: dict[str, Any], configuration: dict[str, Any], code_sha256: str) -> bool:
    """Whether a published version runs this code with this configuration (then an alias may point at it)."""
    vpc = published.get("VpcConfig") or {}
    return (
        published.get("CodeSha256") == code_sha256
        and all(
            published.get(name) == configuration[name]
            for name in ("Role", "Handler", "Runtime", "MemorySize", "Timeout")
        )
        and sorted(vpc.get("SubnetIds") or []) == sorted(configuration["VpcConfig"]["SubnetIds"])
        and sorted(vpc.get("SecurityGroupIds") or []) == sorted(configuration["VpcConfig"]["SecurityGroupIds"])
        and [layer.get("Arn") for layer in published.get("Layers") or []] == configuration["Layers"]
    )


def alias_version(function_name: str, alias: str) -> str | None:
    """The function version `alias` points at; None when the function or the alias does not exist."""
    found = _call(clients.client("lambda").get_alias, FunctionName=function_name, Name=alias, missing_ok=True)
    return None if found is None else str(found["FunctionVersion"])


def function_version(function_name: str, version: str) -> dict[str, Any] | None:
    """A published version's configuration (CodeSha256, MemorySize, Timeout, Handler, ...), or None."""
    found: dict[str, Any] | None = _call(
        clients.client("lambda").get_function_configuration,
        FunctionName=function_name,
        Qualifier=version,
        missing_ok=True,
    )
    return found


def aliases(function_name: str) -> dict[str, str]:
    """Alias name -> function version, every alias of the function (none when it does not exist)."""
    lambda_ = clients.client("lambda")
    found: dict[str, str] = {}
    marker: str | None = None
    while True:
        page = _call(
            lambda_.list_aliases, FunctionName=function_name, missing_ok=True, **({"Marker": marker} if marker else {})
        )
        if page is None:
            return found
        found.update({alias["Name"]: str(alias["FunctionVersion"]) for alias in page.get("Aliases", [])})
        marker = page.get("NextMarker")
        if not marker:
            return found


def versions(function_name: str) -> list[str]:
    """The function's published versions (not `$LATEST`), oldest first."""
    return [str(found["Version"]) for found in _version_configurations(function_name)]


def _version_configurations(function_name: str) -> list[dict[str, Any]]:
    """The configuration of each published version (not `$LATEST`), oldest first."""
    lambda_ = clients.client("lambda")
    found: list[dict[str, Any]] = []
    marker: str | None = None
    while True:
        page = _call(
            lambda_.list_versions_by_function,
            FunctionName=function_name,
            missing_ok=True,
            **({"Marker": marker} if marker else {}),
        )
        if page is None:
            return found
        found += [version for version in page.get("Versions", []) if version["Version"] != "$LATEST"]
        marker = page.get("NextMarker")
        if not marker:
            return sorted(found, key=lambda version: int(version["Version"]))


def delete_alias(function_name: str, alias: str) -> None:
    """The alias goes (calls at it find nothing); its function version stays until `prune`."""
    _call(clients.client("lambda").delete_alias, FunctionName=function_name, Name=alias, missing_ok=True)


PUBLISHED_FOR = "configuration "
"""A published version's description: `configuration {alias}`, the alias it was published for."""


def prune(function_name: str, spare: Callable[[str], bool] = lambda alias: False) -> list[str]:
    """Deletes every published version no alias points at (nothing can call it: every call names an alias), but
    those published for an alias for which `spare(alias)` holds (a publish in flight: its alias comes next).
    Answers the versions deleted."""
    lambda_ = clients.client("lambda")
    aliased = set(aliases(function_name).values())
    removed = [
        str(found["Version"])
        for found in _version_configurations(function_name)
        if str(found["Version"]) not in aliased
        and not spare(str(found.get("Description") or "").removeprefix(PUBLISHED_FOR))
    ]
    for version in removed:
        _call(lambda_.delete_function, FunctionName=function_name, Qualifier=version, missing_ok=True)
    return removed


LAYER_PREFIX = "tenant-code/"
"""Where the layers' zips are kept in the bucket (shared by every tenant, named by their content)."""


def layer_key(name: str, content_sha256: str) -> str:
    return f"{LAYER_PREFIX}{name}-{content_sha256}.zip"


def layer(name: str, content_sha256: str, build: Callable[[], bytes], runtime: str = "python3.11") -> str:
    """The ARN of the version of layer `name` whose content has the hex SHA-256 `content_sha256` (its
    description says so); when there is none, `build()`'s zip is stored in the bucket and published."""
    lambda_ = clients.client("lambda")
    description = f"sha256:{content_sha256}"
    marker: str | None = None
    while True:
        page = _call(
            lambda_.list_layer_versions, LayerName=name, missing_ok=True, **({"Marker": marker} if marker else {})
        )
        for version in (page or {}).get("LayerVersions", []):
            if version.get("Description") == description:
                return str(version["LayerVersionArn"])
        marker = (page or {}).get("NextMarker")
        if not marker:
            break
    bucket, key = settings().bucket_name, layer_key(name, content_sha256)
    _call(clients.s3().put_object, Bucket=bucket, Key=key, Body=build(), ContentType="application/zip")
    published = _call(
        lambda_.publish_layer_version,
        LayerName=name,
        Description=description,
        Content={"S3Bucket": bucket, "S3Key": key},
        CompatibleRuntimes=[runtime],
    )
    return str(published["LayerVersionArn"])


# --- the role --------------------------------------------------------------------------------------------


NETWORK_INTERFACE_ACTIONS = [
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
]
"""What Lambda needs of a function's role to place it in its subnets (it makes the network interfaces with the
role's permissions); code inside cannot use them: its subnets have no route out and no endpoints."""


def role_policy(
    function_name: str, region: str, account: str, partition: str = "aws", *, in_vpc: bool = False
) -> dict[str, Any]:
    """The role's only permissions: its own log group (and, in a VPC, the network interfaces Lambda makes)."""
    group = f"arn:{partition}:logs:{region}:{account}:log-group:/aws/lambda/{function_name}"
    statements: list[dict[str, Any]] = [
        {"Effect": "Allow", "Action": ["logs:CreateLogGroup"], "Resource": group},
        {"Effect": "Allow", "Action": ["logs:CreateLogStream", "logs:PutLogEvents"], "Resource": f"{group}:*"},
    ]
    if in_vpc:
        statements.append({"Effect": "Allow", "Action": NETWORK_INTERFACE_ACTIONS, "Resource": "*"})
    return {"Version": "2012-10-17", "Statement": statements}


TRUST_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}


def _role(spec: FunctionSpec) -> str:
    iam = clients.client("iam")
    found = _call(iam.get_role, RoleName=spec.name, missing_ok=True)
    if found is None:
        arguments: dict[str, Any] = {
            "RoleName": spec.name,
            "Path": "/pas-tenant/",
            "AssumeRolePolicyDocument": json.dumps(TRUST_POLICY),
            "Description": f"the tenant function {spec.name}: its own logs only",
        }
        if spec.boundary_arn:
            arguments["PermissionsBoundary"] = spec.boundary_arn
        found = _call(iam.create_role, **arguments)
    role = found["Role"]
    _, partition, _, _, account, _ = role["Arn"].split(":", 5)
    region = clients.client("lambda").meta.region_name
    _call(
        iam.put_role_policy,
        RoleName=spec.name,
        PolicyName=_LOG_POLICY,
        PolicyDocument=json.dumps(role_policy(spec.name, region, account, partition, in_vpc=bool(spec.subnet_ids))),
    )
    return str(role["Arn"])


# --- the function ----------------------------------------------------------------------------------------


def _configuration(spec: FunctionSpec, role_arn: str) -> dict[str, Any]:
    configuration: dict[str, Any] = {
        "Role": role_arn,
        "Handler": spec.handler,
        "Runtime": spec.runtime,
        "MemorySize": spec.memory_mb,
        "Timeout": spec.timeout_seconds,
        "Description": spec.description,
        "Environment": {"Variables": {}},
        "VpcConfig": {"SubnetIds": list(spec.subnet_ids), "SecurityGroupIds": list(spec.security_group_ids)},
        "Layers": list(spec.layers),
    }
    return configuration


def _wait_until_updatable(name: str, *, updated: bool = False) -> None:
    """Until the function is Active and no update of it is in progress (Retry when that takes too long).
    `updated`: we just updated it, and an update that failed is refused."""
    lambda_ = clients.client("lambda")
    for _ in range(_WAIT_ATTEMPTS):
        found = _call(lambda_.get_function_configuration, FunctionName=name)
        state, update = found.get("State", "Active"), found.get("LastUpdateStatus", "Successful")
        reason = found.get("StateReason") or found.get("LastUpdateStatusReason") or "no reason given"
        if state == "Failed" or (updated and update == "Failed"):
            raise Refused(f"Lambda could not apply the update of {name}: {reason}")
        if state == "Active" and update != "InProgress":
            return
        time.sleep(_WAIT_SECONDS)
    raise Retry(f"{name} is still being updated")


def _call(method: Callable[..., dict[str, Any]], *, missing_ok: bool = False, **arguments: Any) -> Any:
    from botocore.exceptions import ClientError

    try:
        return method(**arguments)
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        message = error.response.get("Error", {}).get("Message", "") or code
        if missing_ok and code in ("ResourceNotFoundException", "NoSuchEntity", "NoSuchEntityException"):
            return None
        if code in _RETRYABLE or "cannot be assumed" in message:
            raise Retry(f"{code}: {message}") from None
        raise Refused(f"{code}: {message}"[:1000]) from None
