"""infra/split_api.py on a small template shaped like `chalice package`'s sam.json."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

INFRA = Path(__file__).resolve().parents[2] / "infra"


def _split_api() -> Any:
    if str(INFRA) not in sys.path:
        sys.path.insert(0, str(INFRA))
    spec = importlib.util.spec_from_file_location("split_api", INFRA / "split_api.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


split_api = _split_api()
HANDLER_URI = {
    "Fn::Sub": "arn:${AWS::Partition}:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/"
    "${APIHandler.Arn}/invocations"
}


def _operation() -> dict[str, Any]:
    return {"x-amazon-apigateway-integration": {"uri": HANDLER_URI, "type": "aws_proxy", "httpMethod": "POST"}}


def _template(paths: list[str]) -> dict[str, Any]:
    return {
        "Resources": {
            "APIHandler": {"Type": "AWS::Serverless::Function", "Properties": {}},
            "RestAPI": {
                "Type": "AWS::Serverless::Api",
                "Properties": {
                    "StageName": "api",
                    "DefinitionBody": {
                        "swagger": "2.0",
                        "info": {"version": "1.0", "title": "pas"},
                        "paths": {path: {"get": _operation()} for path in paths},
                        "x-amazon-apigateway-binary-media-types": ["*/*"],
                        "x-amazon-apigateway-gateway-responses": {"DEFAULT_4XX": {"statusCode": "400"}},
                    },
                },
            },
            "APIHandlerInvokePermission": {
                "Type": "AWS::Lambda::Permission",
                "Properties": {
                    "FunctionName": {"Ref": "APIHandler"},
                    "Action": "lambda:InvokeFunction",
                    "Principal": "apigateway.amazonaws.com",
                    "SourceArn": {
                        "Fn::Sub": [
                            "arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${RestAPIId}/*",
                            {"RestAPIId": {"Ref": "RestAPI"}},
                        ]
                    },
                },
            },
        },
        "Outputs": {
            "RestAPIId": {"Value": {"Ref": "RestAPI"}},
            "EndpointURL": {
                "Value": {"Fn::Sub": "https://${RestAPI}.execute-api.${AWS::Region}.${AWS::URLSuffix}/api/"}
            },
            "APIHandlerArn": {"Value": {"Fn::GetAtt": ["APIHandler", "Arn"]}},
        },
    }


PATHS = [
    "/",
    "/auth/token",
    "/policy/{tenantLocator}/policies",
    "/policy/{tenantLocator}/policies/{locator}",
    "/billing/{tenantLocator}/invoices",
    "/document/{tenantLocator}/documents",
]


def _paths_of(template: dict[str, Any], api: str) -> list[str]:
    return sorted(template["Resources"][api]["Properties"]["DefinitionBody"]["paths"])


def test_each_first_segment_goes_to_its_api_and_every_other_one_stays_in_chalices():
    split = split_api.split_template(_template(PATHS))

    assert _paths_of(split, "PolicyAPI") == [
        "/policy/{tenantLocator}/policies",
        "/policy/{tenantLocator}/policies/{locator}",
    ]
    assert _paths_of(split, "BillingAPI") == ["/billing/{tenantLocator}/invoices"]
    assert _paths_of(split, "RestAPI") == ["/", "/auth/token", "/document/{tenantLocator}/documents"]


def test_each_api_keeps_the_gateway_settings_and_the_handler_integration():
    split = split_api.split_template(_template(PATHS))

    for api in ("RestAPI", "PolicyAPI", "BillingAPI"):
        properties = split["Resources"][api]["Properties"]
        body = properties["DefinitionBody"]
        assert properties["StageName"] == "api"
        assert body["x-amazon-apigateway-binary-media-types"] == ["*/*"]
        assert body["x-amazon-apigateway-gateway-responses"] == {"DEFAULT_4XX": {"statusCode": "400"}}
        assert all(
            operation["x-amazon-apigateway-integration"]["uri"] == HANDLER_URI
            for operations in body["paths"].values()
            for operation in operations.values()
        )
    titles = {
        split["Resources"][api]["Properties"]["DefinitionBody"]["info"]["title"]
        for api in ("RestAPI", "PolicyAPI", "BillingAPI")
    }
    assert titles == {"pas", "pas-PolicyAPI", "pas-BillingAPI"}


def test_each_api_gets_its_own_permission_and_outputs():
    split = split_api.split_template(_template(PATHS))

    permission = split["Resources"]["APIHandlerInvokePermissionPolicyAPI"]["Properties"]
    assert permission["FunctionName"] == {"Ref": "APIHandler"}
    assert permission["SourceArn"]["Fn::Sub"][1] == {"RestAPIId": {"Ref": "PolicyAPI"}}
    assert split["Resources"]["APIHandlerInvokePermission"]["Properties"]["SourceArn"]["Fn::Sub"][1] == {
        "RestAPIId": {"Ref": "RestAPI"}
    }
    assert split["Outputs"]["BillingAPIId"] == {"Value": {"Ref": "BillingAPI"}}
    assert split["Outputs"]["BillingAPIEndpointURL"] == {
        "Value": {"Fn::Sub": "https://${BillingAPI}.execute-api.${AWS::Region}.${AWS::URLSuffix}/api/"}
    }
    assert split["Outputs"]["EndpointURL"] == _template(PATHS)["Outputs"]["EndpointURL"]
    assert "PolicyAPIAPIHandlerArn" not in split["Outputs"]


def test_the_domain_is_optional_and_routes_by_base_path_without_stripping_it():
    split = split_api.split_template(_template(PATHS))

    assert split["Conditions"]["HasCustomDomain"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "DomainName"}, ""]}]}
    assert split["Parameters"]["DomainName"]["Default"] == split["Parameters"]["DomainCertificateArn"]["Default"] == ""
    domain = split["Resources"]["ApiDomainName"]
    assert (domain["Condition"], domain["Properties"]["RoutingMode"]) == ("HasCustomDomain", "ROUTING_RULE_ONLY")
    assert domain["Properties"]["RegionalCertificateArn"] == {"Ref": "DomainCertificateArn"}
    rules = {
        name: r["Properties"] for name, r in split["Resources"].items() if r["Type"] == "AWS::ApiGatewayV2::RoutingRule"
    }
    assert rules == {
        "PolicyAPIPolicyRoutingRule": _rule("PolicyAPI", 10, [{"MatchBasePaths": {"AnyOf": ["policy"]}}]),
        "BillingAPIBillingRoutingRule": _rule("BillingAPI", 20, [{"MatchBasePaths": {"AnyOf": ["billing"]}}]),
        "RestAPIRoutingRule": _rule("RestAPI", 1000, []),
    }


def test_each_api_is_named_after_the_stack_and_two_alarms_watch_them_all():
    split = split_api.split_template(_template(PATHS))
    resources = split["Resources"]

    names = {api: resources[api]["Properties"]["Name"] for api in ("RestAPI", "PolicyAPI", "BillingAPI")}
    assert names == {api: {"Fn::Sub": f"${{AWS::StackName}}-{api}"} for api in names}
    errors = resources["ApiServerErrorRateAlarm"]["Properties"]
    watched = [
        (
            m["Id"],
            m["MetricStat"]["Metric"]["MetricName"],
            m["MetricStat"]["Stat"],
            m["MetricStat"]["Metric"]["Dimensions"],
        )
        for m in errors["Metrics"]
        if "MetricStat" in m
    ]
    assert watched == [
        (f"{kind}{i}", metric, "Sum", [{"Name": "ApiName", "Value": names[api]}, {"Name": "Stage", "Value": "api"}])
        for kind, metric in (("errors", "5XXError"), ("requests", "Count"))
        for i, api in enumerate(("RestAPI", "PolicyAPI", "BillingAPI"))
    ]
    (rate,) = [m for m in errors["Metrics"] if m["ReturnData"]]
    assert rate["Expression"] == (
        "100 * SUM([FILL(errors0, 0), FILL(errors1, 0), FILL(errors2, 0)]) / "
        "SUM([FILL(requests0, 0), FILL(requests1, 0), FILL(requests2, 0)])"
    )
    assert errors["Threshold"] == {"Ref": "ApiServerErrorRateAlarmPercent"}
    latency = resources["ApiLatencyAlarm"]["Properties"]
    assert [m["MetricStat"]["Stat"] for m in latency["Metrics"] if "MetricStat" in m] == ["p90"] * 3
    assert [m["Expression"] for m in latency["Metrics"] if m["ReturnData"]] == ["MAX([latency0, latency1, latency2])"]
    assert (
        split["Parameters"]["ApiServerErrorRateAlarmPercent"]["Default"],
        split["Parameters"]["ApiLatencyAlarmMilliseconds"]["Default"],
    ) == (1, 3000)


def _rule(api: str, priority: int, conditions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "DomainNameArn": {"Fn::GetAtt": ["ApiDomainName", "DomainNameArn"]},
        "Priority": priority,
        "Conditions": conditions,
        "Actions": [{"InvokeApi": {"ApiId": {"Ref": api}, "Stage": {"Ref": f"{api}.Stage"}, "StripBasePath": False}}],
    }


def test_the_split_is_deterministic_and_leaves_its_input_alone():
    template = _template(PATHS)
    untouched = copy.deepcopy(template)

    first = split_api.split_template(template)

    assert template == untouched
    assert json.dumps(first) == json.dumps(split_api.split_template(_template(list(reversed(PATHS)))))


def test_a_new_route_lands_in_the_api_of_its_first_segment():
    before = split_api.split_template(_template(PATHS))
    after = split_api.split_template(_template([*PATHS, "/policy/{tenantLocator}/quotes", "/ledger/entries"]))

    assert set(_paths_of(after, "PolicyAPI")) - set(_paths_of(before, "PolicyAPI")) == {
        "/policy/{tenantLocator}/quotes"
    }
    assert set(_paths_of(after, "RestAPI")) - set(_paths_of(before, "RestAPI")) == {"/ledger/entries"}
    assert _paths_of(after, "BillingAPI") == _paths_of(before, "BillingAPI")


def test_an_api_over_the_limit_fails_saying_how_to_split_further():
    policy_paths = [f"/policy/{{tenantLocator}}/things{n}" for n in range(10)]

    with pytest.raises(
        split_api.SplitError,
        match=r"PolicyAPI needs 15 API Gateway resources, over the 12 .*"
        r"largest: /policy 14\).*API_GROUPS",
    ):
        split_api.split_template(_template([*PATHS, *policy_paths]), limit=12)


def test_a_template_without_chalices_api_or_already_split_is_refused():
    with pytest.raises(split_api.SplitError, match="no RestAPI"):
        split_api.split_template({"Resources": {}})
    with pytest.raises(split_api.SplitError, match="already split"):
        split_api.split_template(split_api.split_template(_template(PATHS)))


def test_the_cli_rewrites_the_template_in_place(tmp_path):
    sam = tmp_path / "sam.json"
    sam.write_text(json.dumps(_template(PATHS)))

    result = subprocess.run([sys.executable, str(INFRA / "split_api.py"), str(sam)], capture_output=True, text=True)

    assert result.returncode == 0, result.stderr
    assert json.loads(sam.read_text()) == split_api.split_template(_template(PATHS))
