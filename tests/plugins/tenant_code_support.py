"""Helpers of the tenant-code tests (test_tenant_code.py, test_tenant_code_pruning.py): a package of the quotes
model with plugins, a tenant deployed with it and its rating tables, a redeployment, the deployments' status."""

from __future__ import annotations

import simplejson

from tests.support.api import call, ok
from tests.support.configs import (
    QUOTE_PLUGINS,
    package_with_files,
    quotes_model,
    rated_tenant,
)

DOUBLED = QUOTE_PLUGINS.replace(
    "def rate_PersonalAuto(request):",
    "def rate_PersonalAuto(request):\n"
    "    return {'items': [{'elementLocator': request['segment']['element']['locator'],"
    " 'chargeType': 'premium', 'amount': 2}]}\n\n\ndef _old_rate(request):",
)


def package_of(plugins: str = QUOTE_PLUGINS) -> bytes:
    return package_with_files(quotes_model(), {"plugins/python/auto.py": plugins.encode()})


def tenant_with_plugins(api, token, plugins: str = QUOTE_PLUGINS) -> str:
    return rated_tenant(api, token, package_of(plugins))


def deploy(api, token, tenant, plugins: str = QUOTE_PLUGINS) -> str:
    response = api.http.post(
        f"/config/{tenant}/deployments/deploy",
        body=package_of(plugins),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/zip", "Accept": "application/json"},
    )
    assert response.status_code == 200, response.body
    return simplejson.loads(response.body)["deploymentResult"]["metadata"]["latestVersion"]


def deployment_status(api, token, tenant):
    return ok(call(api, "GET", f"/config/{tenant}/deployments", token))
