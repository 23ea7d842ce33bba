"""Helpers of the configuration API tests: uploads, small packages, what the service stored."""

from __future__ import annotations

import io
import json
import zipfile
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

import simplejson

from tests.support.api import json_of as json_of  # tests/api/tables/test_bootstrap.py's, until it imports it from there
from tests.support.api import ok
from tests.unit.configuration.zips import zip_files

ZIP = "application/zip"
BOUNDARY = "----pas-test-boundary-7MA4YWxkTrZu0gW"


def minimal_model() -> dict[str, Any]:
    return {
        "defaultCurrency": "USD",
        "accounts": {"Person": {"data": {"name": {"type": "string"}}}},
        "products": {"Auto": {"eligibleAccountTypes": ["Person"], "contents": ["Vehicle+"], "charges": ["premium"]}},
        "exposures": {"Vehicle": {"contents": ["Collision?"], "data": {"vin": {"type": "string"}}}},
        "coverages": {"Collision": {"coverageTerms": ["Deductible!"]}},
        "coverageTerms": {"Deductible": {"type": "deductible", "options": {"*d500": {"value": 500}}}},
        "charges": {"premium": {"category": "premium"}},
    }


def package(model: dict[str, Any] | None = None, files: dict[str, bytes | str] | None = None) -> bytes:
    """A package in the split layout: scalars in config.json, one folder per entity."""
    model = minimal_model() if model is None else model
    entries: dict[str, bytes | str] = {
        "config.json": simplejson.dumps(
            {key: value for key, value in model.items() if not isinstance(value, dict)}, use_decimal=True
        )
    }
    for collection, entities in model.items():
        if isinstance(entities, dict):
            for name, body in entities.items():
                entries[f"{collection}/{name}/config.json"] = simplejson.dumps(body, use_decimal=True)
    return zip_files({**entries, **(files or {})})


def auth(token: str | None, accept: str = ZIP) -> dict[str, str]:
    headers = {"Accept": accept}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def upload(
    api: Any,
    path: str,
    token: str | None,
    body: bytes,
    *,
    multipart: bool = False,
    part: str = "file",
    headers: dict[str, str] | None = None,
) -> Any:
    """POST a package as a raw ZIP body, or as multipart/form-data with the file in `part`."""
    sent = auth(token)
    if multipart:
        sent["Content-Type"] = f"multipart/form-data; boundary={BOUNDARY}"
        body = multipart_body(part, body)
    else:
        sent["Content-Type"] = ZIP
    sent.update(headers or {})
    return api.http.post(path, headers=sent, body=body)


def multipart_body(part: str, content: bytes) -> bytes:
    """As curl --form and httpx send it: a text field first, then the file."""
    return b"".join(
        [
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="comment"\r\n\r\nhello\r\n'.encode(),
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{part}"; filename="config.zip"\r\n'
            f"Content-Type: application/zip\r\n\r\n".encode(),
            content,
            f"\r\n--{BOUNDARY}--\r\n".encode(),
        ]
    )


def create_tenant(api: Any, token: str, body: bytes | None = None, **query: str) -> Any:
    params = urlencode({"name": "Test insurer", **query})
    return upload(api, f"/config/createTenant?{params}", token, package() if body is None else body)


def new_configured_tenant(api: Any, token: str, body: bytes | None = None) -> tuple[str, dict[str, Any]]:
    """A fresh tenant with `body` (default: the minimal package) deployed; answers (locator, result)."""
    result = ok(create_tenant(api, token, body))
    assert result["deploymentResult"]["isSuccess"] is True, result
    return result["locator"], result


def deploy(api: Any, token: str, tenant: str, body: bytes, **query: str) -> Any:
    suffix = f"?{urlencode(query)}" if query else ""
    return upload(api, f"/config/{tenant}/deployments/deploy{suffix}", token, body)


def get(api: Any, path: str, token: str | None) -> Any:
    return api.http.get(path, headers=auth(token))


def datamodel(api: Any, token: str, tenant: str, suffix: str = "") -> dict[str, Any]:
    return ok(get(api, f"/config/{tenant}/deployments/datamodel{suffix}", token))


def download(api: Any, token: str, tenant: str, suffix: str = "") -> bytes:
    response = get(api, f"/config/{tenant}/deployments/download{suffix}", token)
    assert response.status_code == 200, response.body
    assert response.headers["Content-Type"] == ZIP
    return response.body


def zip_json(data: bytes, name: str) -> Any:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return json.loads(archive.read(name), parse_float=Decimal)


def zip_names(data: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.namelist()


# --- what is stored ------------------------------------------------------------------------------


def blob_keys(prefix: str = "tenants/") -> list[str]:
    """The S3 keys under `prefix`, read from the emulated bucket as ListObjectsV2 answers them (delete markers
    left out): through the API, moto sorts the whole bucket for each page of 1,000, and the bucket the session
    shares holds thousands of objects, so a listing cost seconds."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import FakeDeleteMarker, s3_backends

    from chalicelib.settings import settings

    bucket = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets[settings().bucket_name]
    return sorted(
        name for name, key in bucket.keys.items() if name.startswith(prefix) and not isinstance(key, FakeDeleteMarker)
    )


def config_items(tenant: str) -> list[dict[str, Any]]:
    from chalicelib.storage import keys, query, table

    return query.all_items(table.gateway(), keys.tenant_scope(tenant), keys.config_partition(tenant))


def tenant_count() -> int:
    from chalicelib.identity import service

    return len(service.list_tenant_locators())


def stored_state(tenant: str | None = None) -> tuple[Any, ...]:
    """What a failed request must leave as it was: S3 objects, tenants, the tenant's config items."""
    items = sorted((i["PK"], i["SK"], str(i.get("version"))) for i in config_items(tenant)) if tenant else []
    return len(blob_keys()), tenant_count(), items


def request_events(api: Any, token: str, tenant: str, response: Any) -> list[dict[str, Any]]:
    rid = response.headers["X-Request-Id"]
    return ok(api.http.get(f"/event/{tenant}/events/request/{rid}", headers=auth(token, "application/json")))


def validation_paths(tenant: str) -> list[str]:
    return ["/config/validateConfig", f"/config/{tenant}/deployments/validate"]
