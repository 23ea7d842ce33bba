"""A configuration over API Gateway's 10 MB, deployed under `make run` as a client deploys it (DECISIONS.md
"Uploads"): sent directly it is refused, naming POST /uploads; announced with POST /uploads, PUT with a real HTTP
client to the presigned URL, which points at the stack's emulated S3 (moto's server), and deployed by
`?uploadLocator=`, it is the tenant's configuration, its large table file byte for byte."""

from __future__ import annotations

import hashlib
import time

import boto3
import requests

from tests.e2e.support import LocalStack, big_package

DIRECT_LIMIT = 10 * 1024 * 1024


def _raw(stack: LocalStack, method: str, path: str, token: str, body: bytes = b"") -> requests.Response:
    """A request with a ZIP body (empty: an operation named by `?uploadLocator=`), or a GET."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "*/*"}
    if method != "GET":
        headers["Content-Type"] = "application/zip"
    return requests.request(method, stack.base_url + path, data=body, timeout=120, headers=headers)


def _upload(stack: LocalStack, token: str, content: bytes, tenant: str | None = None) -> str:
    """POST /uploads, then the file PUT to the URL it answers: the upload's locator."""
    status, made = stack.request(
        "POST",
        "/uploads",
        token=token,
        json_body={
            "purpose": "configuration",
            "size": len(content),
            "sha256": hashlib.sha256(content).hexdigest(),
            "contentType": "application/zip",
            **({"tenantLocator": tenant} if tenant else {}),
        },
    )
    assert status == 200, made
    assert made["url"].startswith(f"http://127.0.0.1:{stack.aws_port}/")  # the stack's S3, over HTTP
    put = requests.put(made["url"], data=content, headers=made["headers"], timeout=120)
    assert put.status_code == 200, put.text
    return str(made["uploadLocator"])


def _bootstrap(stack: LocalStack, token: str, tenant: str, within: float = 120) -> list[dict]:
    deadline = time.monotonic() + within
    while True:
        status, resources = stack.request("GET", f"/resource/{tenant}/resources/bootstrap", token=token)
        assert status == 200, resources
        if all(resource["status"] != "queued" for resource in resources) or time.monotonic() > deadline:
            return resources
        time.sleep(0.5)


def test_a_configuration_over_10_mb_creates_a_tenant_and_deploys_through_uploads(local_stack):
    token = local_stack.sign_in()
    big, notes = big_package()
    assert len(big) > DIRECT_LIMIT

    direct = _raw(local_stack, "POST", "/config/createTenant?name=Direct", token, big)
    assert (direct.status_code, direct.json()["code"]) == (413, "request.too_large")
    assert "POST /uploads" in direct.json()["message"]

    upload = _upload(local_stack, token, big)
    created = _raw(local_stack, "POST", f"/config/createTenant?name=Uploads&uploadLocator={upload}", token)
    assert created.status_code == 200, created.text
    assert created.json()["deploymentResult"]["isSuccess"] is True, created.json()["deploymentResult"]["errors"]
    tenant = created.json()["locator"]
    resources = _bootstrap(local_stack, token, tenant)
    assert [(r["name"], r["status"]) for r in resources] == [("GadgetRates2026", "created")], [
        r.get("error") for r in resources
    ]
    status, row = local_stack.request(
        "GET", f"/resource/{tenant}/tables/GadgetRates2026/record?key=gadget7&byStaticName=false", token=token
    )
    assert status == 200 and row["value"]["note"] == notes["gadget7"]  # the 11 MB table, loaded whole
    again = _raw(local_stack, "POST", f"/config/createTenant?name=Again&uploadLocator={upload}", token)
    assert (again.status_code, again.json()["code"]) == (409, "upload.already_used")
    s3 = boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{local_stack.aws_port}",
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    listed = s3.list_objects_v2(Bucket="pas-blobs", Prefix="uploads/").get("Contents", [])
    assert not [item for item in listed if item["Key"].endswith(upload)]  # used: its object is gone

    deployed = _raw(
        local_stack,
        "POST",
        f"/config/{tenant}/deployments/deploy?uploadLocator={_upload(local_stack, token, big, tenant)}",
        token,
    )
    assert deployed.status_code == 200, deployed.text
    result = deployed.json()["deploymentResult"]
    assert result["isSuccess"] is True, result["errors"]
    assert result["metadata"]["latestVersion"] != created.json()["deploymentResult"]["metadata"]["latestVersion"]
