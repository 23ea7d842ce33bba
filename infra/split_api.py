"""Split the REST API of `chalice package`'s sam.json into several REST APIs under API Gateway's quota.

API Gateway allows 300 path resources per REST API (infra/README.md); the app needs more. Every API keeps
the full paths and integrates with the same `APIHandler` function (Chalice dispatches on the full resource
path), so the code does not change. Routes are grouped by their first path segment: each entry of
`API_GROUPS` is one API, every other segment stays in Chalice's `RestAPI`. With the `DomainName` and
`DomainCertificateArn` parameters the stack also creates one regional custom domain whose routing rules
send each segment to its API without stripping the base path, so clients see one base URL. Each API is named
after the stack (`<stack>-RestAPI`, ...), and two alarms watch them all: the share of 5xx answers and the p90
latency, from API Gateway's metrics (`_add_api_alarms`).

    .venv/bin/python infra/split_api.py out/sam.json [out/split.json]   # in place without an output path
"""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

from api_resources import resource_paths

CHALICE_API = "RestAPI"
"""Chalice's API: it keeps every segment no group names, its logical id and its outputs."""
API_GROUPS: dict[str, tuple[str, ...]] = {"PolicyAPI": ("policy",), "BillingAPI": ("billing",)}
"""The APIs split off, each with the first path segments it serves (fixed, so an API keeps its id)."""
GROUP_LIMIT = 250
"""Resources one API may need: under the quota of 300, with room for the routes of the next release."""
DOMAIN_CONDITION = "HasCustomDomain"
DOMAIN_RESOURCE = "ApiDomainName"
CATCH_ALL_PRIORITY = 1000
ALARM_PERIOD = 300
"""Seconds of one datapoint of the API alarms; each alarms when 2 of 3 datapoints breach."""


class SplitError(ValueError):
    """The template cannot be split as `API_GROUPS` says."""


def split_template(template: dict[str, Any], limit: int = GROUP_LIMIT) -> dict[str, Any]:
    """A copy of `template` whose `RestAPI` is split into the APIs of `API_GROUPS` (and the domain in front)."""
    split = copy.deepcopy(template)
    resources = split["Resources"]
    if CHALICE_API not in resources:
        raise SplitError(f"the template has no {CHALICE_API}: is it `chalice package`'s sam.json?")
    if any(api in resources for api in API_GROUPS):
        raise SplitError("the template is already split")
    chalice_api = resources[CHALICE_API]
    groups = _group_paths(chalice_api["Properties"]["DefinitionBody"]["paths"])
    _check_sizes(groups, limit)
    permissions = {
        name: r for name, r in resources.items() if r["Type"] == "AWS::Lambda::Permission" and _mentions(r, CHALICE_API)
    }
    outputs = {name: o for name, o in split.get("Outputs", {}).items() if _mentions(o, CHALICE_API)}
    for api, paths in groups.items():
        definition = chalice_api if api == CHALICE_API else copy.deepcopy(chalice_api)
        body = definition["Properties"]["DefinitionBody"]
        body["paths"] = paths
        if api == CHALICE_API:
            continue
        body["info"] = {**body.get("info", {}), "title": f"{body.get('info', {}).get('title', 'api')}-{api}"}
        resources[api] = definition
        for name, permission in permissions.items():
            resources[f"{name}{api}"] = _retarget(permission, api)
        for name, output in outputs.items():
            renamed = name.replace(CHALICE_API, api) if CHALICE_API in name else f"{api}{name}"
            split["Outputs"][renamed] = _retarget(output, api)
    for api in groups:
        resources[api]["Properties"]["Name"] = {"Fn::Sub": f"${{AWS::StackName}}-{api}"}
    _add_custom_domain(split, list(groups))
    _add_api_alarms(split, list(groups))
    return split


def api_of(path: str) -> str:
    """The logical id of the API that serves `path`."""
    segment = _first_segment(path)
    return next((api for api, segments in API_GROUPS.items() if segment in segments), CHALICE_API)


def _group_paths(paths: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The paths of each API, in a fixed order: `RestAPI` first, then `API_GROUPS`'s order; empty APIs left out."""
    groups: dict[str, dict[str, Any]] = {CHALICE_API: {}, **{api: {} for api in API_GROUPS}}
    for path in sorted(paths):
        groups[api_of(path)][path] = paths[path]
    return {api: group for api, group in groups.items() if group}


def _first_segment(path: str) -> str:
    return path.strip("/").split("/", 1)[0]


def _check_sizes(groups: dict[str, dict[str, Any]], limit: int) -> None:
    for api, paths in groups.items():
        needed = len(resource_paths(paths))
        if needed > limit:
            counts: dict[str, int] = {}
            for resource in resource_paths(paths) - {"/"}:
                counts[_first_segment(resource)] = counts.get(_first_segment(resource), 0) + 1
            largest = ", ".join(f"/{s} {n}" for s, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
            raise SplitError(
                f"{api} needs {needed} API Gateway resources, over the {limit} one API may have (largest: {largest}). "
                "Give a large first segment an API of its own in API_GROUPS (infra/split_api.py). A segment that "
                "alone is over needs a split below it, by a literal second segment: routing rules match literal "
                "base paths only, so nothing can be split below a path parameter such as {tenantLocator}."
            )


def _mentions(node: Any, logical_id: str) -> bool:
    return bool(re.search(rf'"Ref": "{logical_id}"|\$\{{{logical_id}[}}.]', json.dumps(node)))


def _retarget(node: Any, api: str) -> Any:
    """`node` with every reference to Chalice's API (Ref and ${...} in Fn::Sub) made a reference to `api`."""
    if isinstance(node, dict):
        if node == {"Ref": CHALICE_API}:
            return {"Ref": api}
        return {key: _retarget(value, api) for key, value in node.items()}
    if isinstance(node, list):
        return [_retarget(item, api) for item in node]
    if isinstance(node, str):
        return re.sub(rf"\$\{{{CHALICE_API}([}}.])", rf"${{{api}\1", node)
    return node


def _add_custom_domain(template: dict[str, Any], apis: list[str]) -> None:
    """The parameters, and the domain with one routing rule per API, created only when a domain name is given.

    The APIs of `API_GROUPS` match their first segments; Chalice's API takes everything else with a catch-all
    rule (no condition) evaluated last. StripBasePath is false: every API receives the full path."""
    template.setdefault("Parameters", {}).update(
        {
            "DomainName": {
                "Type": "String",
                "Default": "",
                "Description": "Custom domain in front of the APIs (empty: no domain, each API's own URL)",
            },
            "DomainCertificateArn": {
                "Type": "String",
                "Default": "",
                "Description": "ACM certificate of DomainName, in the stack's region",
            },
        }
    )
    template.setdefault("Conditions", {})[DOMAIN_CONDITION] = {"Fn::Not": [{"Fn::Equals": [{"Ref": "DomainName"}, ""]}]}
    resources = template["Resources"]
    resources[DOMAIN_RESOURCE] = {
        "Type": "AWS::ApiGateway::DomainName",
        "Condition": DOMAIN_CONDITION,
        "Properties": {
            "DomainName": {"Ref": "DomainName"},
            "RegionalCertificateArn": {"Ref": "DomainCertificateArn"},
            "EndpointConfiguration": {"Types": ["REGIONAL"]},
            "SecurityPolicy": "TLS_1_2",
            "RoutingMode": "ROUTING_RULE_ONLY",
        },
    }
    priority = 0
    for api in apis:
        segments = API_GROUPS.get(api)
        if segments is None:
            resources[f"{api}RoutingRule"] = _routing_rule(api, CATCH_ALL_PRIORITY, [])
            continue
        for segment in segments:
            priority += 10
            name = f"{api}{re.sub(r'[^A-Za-z0-9]', '', segment.title())}RoutingRule"
            resources[name] = _routing_rule(api, priority, [{"MatchBasePaths": {"AnyOf": [segment]}}])
    template.setdefault("Outputs", {}).update(
        {
            "DomainEndpointURL": {"Condition": DOMAIN_CONDITION, "Value": {"Fn::Sub": "https://${DomainName}/"}},
            "DomainTarget": {
                "Condition": DOMAIN_CONDITION,
                "Description": "Where the domain's DNS record (CNAME or alias) points",
                "Value": {"Fn::GetAtt": [DOMAIN_RESOURCE, "RegionalDomainName"]},
            },
        }
    )


def _routing_rule(api: str, priority: int, conditions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "Type": "AWS::ApiGatewayV2::RoutingRule",
        "Condition": DOMAIN_CONDITION,
        "Properties": {
            "DomainNameArn": {"Fn::GetAtt": [DOMAIN_RESOURCE, "DomainNameArn"]},
            "Priority": priority,
            "Conditions": conditions,
            "Actions": [
                {"InvokeApi": {"ApiId": {"Ref": api}, "Stage": {"Ref": f"{api}.Stage"}, "StripBasePath": False}}
            ],
        },
    }


def _add_api_alarms(template: dict[str, Any], apis: list[str]) -> None:
    """`ApiServerErrorRateAlarm`: the 5xx answers of every API as a percentage of their requests;
    `ApiLatencyAlarm`: the highest p90 latency of the APIs. API Gateway's metrics, by API name and stage, so
    they include what never reached the function (its timeouts, throttles, a crash)."""
    template.setdefault("Parameters", {}).update(
        {
            "ApiServerErrorRateAlarmPercent": {
                "Type": "Number",
                "Default": 1,
                "MinValue": 0,
                "Description": (
                    "ApiServerErrorRateAlarm: the share of 5xx answers (percent of all requests) that alarms"
                ),
            },
            "ApiLatencyAlarmMilliseconds": {
                "Type": "Number",
                "Default": 3000,
                "MinValue": 1,
                "Description": "ApiLatencyAlarm: the p90 latency of an API (milliseconds) that alarms",
            },
        }
    )

    def metric(name: str, api: str, stat: str) -> dict[str, Any]:
        stage = template["Resources"][api]["Properties"]["StageName"]
        dimensions = [
            {"Name": "ApiName", "Value": {"Fn::Sub": f"${{AWS::StackName}}-{api}"}},
            {"Name": "Stage", "Value": stage},
        ]
        return {
            "Metric": {"Namespace": "AWS/ApiGateway", "MetricName": name, "Dimensions": dimensions},
            "Period": ALARM_PERIOD,
            "Stat": stat,
        }

    errors = [
        {"Id": f"errors{i}", "MetricStat": metric("5XXError", api, "Sum"), "ReturnData": False}
        for i, api in enumerate(apis)
    ]
    requests = [
        {"Id": f"requests{i}", "MetricStat": metric("Count", api, "Sum"), "ReturnData": False}
        for i, api in enumerate(apis)
    ]
    latencies = [
        {"Id": f"latency{i}", "MetricStat": metric("Latency", api, "p90"), "ReturnData": False}
        for i, api in enumerate(apis)
    ]

    def total(series: list[dict[str, Any]]) -> str:
        return "SUM([" + ", ".join(f"FILL({m['Id']}, 0)" for m in series) + "])"

    every = {
        "EvaluationPeriods": 3,
        "DatapointsToAlarm": 2,
        "ComparisonOperator": "GreaterThanThreshold",
        "TreatMissingData": "notBreaching",
    }
    template["Resources"]["ApiServerErrorRateAlarm"] = {
        "Type": "AWS::CloudWatch::Alarm",
        "Properties": {
            "AlarmDescription": (
                f"5xx answers of {', '.join(apis)} above ApiServerErrorRateAlarmPercent of their requests"
            ),
            "Metrics": [
                *errors,
                *requests,
                {
                    "Id": "rate",
                    "Label": "5xx answers, percent of requests",
                    "ReturnData": True,
                    "Expression": f"100 * {total(errors)} / {total(requests)}",
                },
            ],
            "Threshold": {"Ref": "ApiServerErrorRateAlarmPercent"},
            **every,
        },
    }
    template["Resources"]["ApiLatencyAlarm"] = {
        "Type": "AWS::CloudWatch::Alarm",
        "Properties": {
            "AlarmDescription": f"The p90 latency of one of {', '.join(apis)} above ApiLatencyAlarmMilliseconds",
            "Metrics": [
                *latencies,
                {
                    "Id": "slowest",
                    "Label": "highest p90 latency of the APIs",
                    "ReturnData": True,
                    "Expression": "MAX([" + ", ".join(m["Id"] for m in latencies) + "])",
                },
            ],
            "Threshold": {"Ref": "ApiLatencyAlarmMilliseconds"},
            **every,
        },
    }


def main(argv: list[str]) -> None:
    if len(argv) not in (1, 2):
        sys.exit("usage: split_api.py SAM_JSON [OUTPUT_JSON]")
    source = Path(argv[0])
    try:
        split = split_template(json.loads(source.read_text()))
    except SplitError as error:
        sys.exit(f"split_api: {error}")
    Path(argv[-1]).write_text(json.dumps(split, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
