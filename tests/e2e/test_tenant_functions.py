"""`PAS_PLUGIN_RUNNER=lambda make run`: tenant code as on AWS, on one machine. A deployment's publish job creates
the tenant's function in the stack's emulated Lambda; the plugin calls of a quote's pricing (validation and rating,
with their table lookups) and an ad-hoc render go through the function's alias, run by the local invoker
(local/tenant_functions.py). Without the alias they answer 503 `tenantCode.not_ready`; a restart, which loses
moto's Lambda, publishes the current version again."""

from __future__ import annotations

import io
import time
import zipfile
from typing import Any

import boto3
import requests

from tests.cli.conftest import GADGETCOVER
from tests.e2e.support import LocalStack

RENDERED = "Dear {{ account.data.name }}, your {{ productName }} quote"


def _gadgetcover() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(GADGETCOVER.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(GADGETCOVER).as_posix())
    return buffer.getvalue()


def _until(check: Any, within: float = 60) -> Any:
    deadline = time.monotonic() + within
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.3)


def _priced_and_rendered(stack: LocalStack, token: str, tenant: str, quote: str) -> tuple[tuple[int, Any], Any]:
    priced = stack.request("PATCH", f"/policy/{tenant}/quotes/{quote}/price", token=token)
    rendered = requests.post(
        f"{stack.base_url}/document/{tenant}/documents/render",
        params={"referenceType": "quote", "referenceLocator": quote},
        json={"template": RENDERED},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    return priced, rendered


def test_plugin_calls_and_renders_run_in_the_tenant_function_of_the_emulated_lambda(tmp_path, stacks):
    stack = LocalStack(tmp_path / "state", tmp_path / "first.log", environ={"PAS_PLUGIN_RUNNER": "lambda"})
    stacks.append(stack)
    token = stack.sign_in()
    status, created = stack.request("POST", "/config/createTenant?name=Lambda", token=token, package=_gadgetcover())
    assert status == 200 and created["deploymentResult"]["isSuccess"], created
    tenant, version = created["locator"], created["deploymentResult"]["metadata"]["latestVersion"]

    def live() -> Any:
        _, deployed = stack.request("GET", f"/config/{tenant}/deployments", token=token)
        return deployed if (deployed.get("tenantCode") or {}).get("status") == "live" else None

    def loaded() -> bool:
        _, resources = stack.request("GET", f"/resource/{tenant}/resources/bootstrap", token=token)
        return all(resource["status"] == "created" for resource in resources)

    deployed = _until(live)
    assert deployed and set(deployed["pluginStatus"].values()) == {"deployed"}, stack.output()
    assert _until(loaded)
    aws = boto3.client(
        "lambda",
        endpoint_url=f"http://127.0.0.1:{stack.aws_port}",
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    function = f"pas-tenant-{tenant}"
    assert [alias["Name"] for alias in aws.list_aliases(FunctionName=function)["Aliases"]] == [version]

    status, account = stack.request(
        "POST",
        f"/policy/{tenant}/accounts",
        token=token,
        json_body={"type": "Customer", "data": {"name": "Ada Lovelace"}},
    )
    assert status == 200, account

    status, valid = stack.request(
        "POST",
        f"/policy/{tenant}/quotes",
        token=token,
        json_body={
            "productName": "GadgetCover",
            "accountLocator": account["locator"],
            "startTime": "2030-01-01T05:00:00Z",
            "elements": [{"type": "Gadget", "data": {"category": "phone", "value": 900}}],
        },
    )
    assert status == 200, valid

    (status, priced), rendered = _priced_and_rendered(stack, token, tenant, valid["locator"])
    # pricing ran both plugins in the function, their rate lookups answered by the host between invocations
    assert status == 200, priced
    assert sorted((item["chargeType"], item["amount"]) for item in priced["items"]) == [("fee", 12), ("premium", 54)]
    assert rendered.status_code == 200, rendered.text
    assert rendered.text == "Dear Ada Lovelace, your GadgetCover quote"

    # the calls go through the alias: without it, neither runs, and nothing runs other code instead
    aws.delete_alias(FunctionName=function, Name=version)
    (status, refused), rendered = _priced_and_rendered(stack, token, tenant, valid["locator"])
    assert (status, refused["code"]) == (503, "tenantCode.not_ready"), refused
    assert (rendered.status_code, rendered.json()["code"]) == (503, "tenantCode.not_ready")

    # a restart loses moto's Lambda; the start publishes each tenant's current version again
    assert stack.stop() == 0
    stack.start_again(tmp_path / "second.log")
    assert "published the tenant code of an earlier run again: 1 tenants" in stack.output()
    (status, priced), rendered = _priced_and_rendered(stack, token, tenant, valid["locator"])
    assert status == 200 and len(priced["items"]) == 2, priced
    assert rendered.text == "Dear Ada Lovelace, your GadgetCover quote"
    assert stack.stop() == 0
