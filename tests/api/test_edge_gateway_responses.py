"""What infra/template.json tells API Gateway (merged into Chalice's REST API by `chalice package`): the
answers the gateway gives itself are our error body and echo nothing of the request, an unknown path is
404, and every client gets files as files (issue 10). tests/architecture/test_package.py packages the
merged template, splits it (infra/split_api.py copies these settings to every API), checks that each API
carries them, and lints it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from local.resources import resources

ALL_TYPES = {
    "ACCESS_DENIED",
    "API_CONFIGURATION_ERROR",
    "AUTHORIZER_CONFIGURATION_ERROR",
    "AUTHORIZER_FAILURE",
    "BAD_REQUEST_PARAMETERS",
    "BAD_REQUEST_BODY",
    "DEFAULT_4XX",
    "DEFAULT_5XX",
    "EXPIRED_TOKEN",
    "INTEGRATION_FAILURE",
    "INTEGRATION_TIMEOUT",
    "INVALID_API_KEY",
    "INVALID_SIGNATURE",
    "MISSING_AUTHENTICATION_TOKEN",
    "QUOTA_EXCEEDED",
    "REQUEST_TOO_LARGE",
    "RESOURCE_NOT_FOUND",
    "THROTTLED",
    "UNAUTHORIZED",
    "UNSUPPORTED_MEDIA_TYPE",
    "WAF_FILTERED",
}
"""Every gateway response type API Gateway has (its GatewayResponse reference)."""


def _api() -> dict[str, Any]:
    return resources()["RestAPI"]["Properties"]["DefinitionBody"]


def _gateway_responses() -> dict[str, dict[str, Any]]:
    return _api()["x-amazon-apigateway-gateway-responses"]


def _body(response: dict[str, Any]) -> dict[str, Any]:
    (template,) = response["responseTemplates"].values()
    return json.loads(template.replace("$context.requestId", "c0ffee00-0000-4000-8000-000000000000"))


def test_every_gateway_response_type_is_customised():
    assert set(_gateway_responses()) == ALL_TYPES


@pytest.mark.parametrize("kind", sorted(ALL_TYPES))
def test_each_gateway_answer_is_our_error_body_with_its_own_status(kind):
    response = _gateway_responses()[kind]

    body = _body(response)

    assert set(body) == {"httpStatus", "code", "message", "requestId"}
    assert str(body["httpStatus"]) == response["statusCode"]
    assert body["requestId"] == "c0ffee00-0000-4000-8000-000000000000"
    assert list(response["responseTemplates"]) == ["application/json"]
    template = response["responseTemplates"]["application/json"]
    assert template.count("$") == 1, "only $context.requestId: nothing of the request is repeated"
    assert "responseParameters" not in response


def test_an_unknown_path_is_404_whatever_authorization_header_it_carries():
    """No route uses IAM authorisation, so a signature error can only come from a path no route has."""
    for kind in ("MISSING_AUTHENTICATION_TOKEN", "INVALID_SIGNATURE", "RESOURCE_NOT_FOUND"):
        response = _gateway_responses()[kind]
        assert (response["statusCode"], _body(response)["code"]) == ("404", "route.not_found")


def test_every_response_type_is_binary_so_files_reach_clients_that_send_no_accept_header():
    assert _api()["x-amazon-apigateway-binary-media-types"] == ["*/*"]
