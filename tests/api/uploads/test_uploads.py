"""POST /uploads (DECISIONS.md "Uploads"): an intent answers a presigned PUT URL for exactly the announced file;
the operations that take a file take `?uploadLocator=` instead of the body and get the file once it is checked
against the intent; an upload serves one operation; a direct body over the limit is refused naming POST /uploads."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import zipfile
from collections.abc import Iterator
from decimal import Decimal
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from chalicelib.settings import reload
from chalicelib.uploads.schemas import SHA256_EXAMPLE
from tests.api.configuration.support import create_tenant, new_configured_tenant, package, stored_state
from tests.api.documents.support import documents, download
from tests.api.schedules.support import draft_quote, every_item, schedule_path, schedules_tenant
from tests.api.tables.support import RATES_V1, RATES_V2, csv_zip, record, tables_tenant, value_of
from tests.api.uploads.support import by_reference, intent, put, uploaded
from tests.builders import new_user
from tests.support.api import assert_error, call, ok

DIRECT_LIMIT = 4096


@pytest.fixture
def small_direct_limit() -> Iterator[None]:
    """A direct limit of 4 KB instead of API Gateway's 10 MB, so a small package is over it."""
    os.environ["PAS_MAX_UPLOAD_BODY_BYTES"] = str(DIRECT_LIMIT)
    reload()
    yield
    del os.environ["PAS_MAX_UPLOAD_BODY_BYTES"]
    reload()


def big_package() -> bytes:
    """A valid package over DIRECT_LIMIT: a plugin module padded with a comment that does not compress."""
    padding = "# " + base64.b64encode(os.urandom(6000)).decode() + "\n"
    made = package(files={"plugins/python/padding.py": padding})
    assert len(made) > DIRECT_LIMIT
    return made


def _whoami(api, token) -> str:
    return str(ok(call(api, "GET", "/auth/users/whoami", token))["locator"])


def _report(response) -> dict:
    assert response.status_code == 200, response.body
    with zipfile.ZipFile(io.BytesIO(response.body)) as archive:
        return json.loads(archive.read("validation-result.json"))


def _deploy(api, token, tenant, locator):
    return by_reference(api, "POST", f"/config/{tenant}/deployments/deploy", token, locator)


def test_an_intent_answers_a_signed_put_url_for_exactly_the_announced_file(api, admin_token):
    content = package()
    digest = hashlib.sha256(content).digest()

    made = ok(intent(api, admin_token, "configuration", content, contentType="application/zip"))

    assert set(made) == {"uploadLocator", "url", "method", "headers", "expiresAt"}
    assert made["method"] == "PUT"
    assert made["expiresAt"] == "2026-01-15T09:45:00.000Z"  # the conftest clock's 09:30, and 15 minutes
    assert made["headers"] == {
        "Content-Length": str(len(content)),
        "Content-Type": "application/zip",
        "x-amz-checksum-sha256": base64.b64encode(digest).decode(),
    }
    url = urlsplit(made["url"])
    signed = parse_qs(url.query)
    assert signed["X-Amz-Expires"] == ["900"]
    assert signed["X-Amz-SignedHeaders"] == ["content-length;content-type;host;x-amz-checksum-sha256"]
    assert url.path.endswith(f"/uploads/users/{_whoami(api, admin_token)}/{made['uploadLocator']}")
    assert (
        ok(intent(api, admin_token, "table", b"x", tenant=new_configured_tenant(api, admin_token)[0]))["headers"][
            "Content-Type"
        ]
        == "application/octet-stream"
    )


def test_a_package_over_the_direct_limit_is_refused_naming_post_uploads_and_goes_by_reference(
    api, admin_token, small_direct_limit
):
    content = big_package()

    refused = assert_error(create_tenant(api, admin_token, content), 413, "request.too_large")

    assert "POST /uploads" in refused["message"] and "?uploadLocator=" in refused["message"]
    created = ok(
        by_reference(
            api,
            "POST",
            "/config/createTenant?" + urlencode({"name": "By reference"}),
            admin_token,
            uploaded(api, admin_token, "configuration", content),
        )
    )
    assert (created["name"], created["deploymentResult"]["isSuccess"]) == ("By reference", True)
    tenant = created["locator"]
    assert_error(
        call(
            api,
            "POST",
            f"/config/{tenant}/deployments/deploy",
            admin_token,
            raw=content,
            headers={"Content-Type": "application/zip"},
        ),
        413,
        "request.too_large",
    )
    again = big_package()
    deployed = ok(_deploy(api, admin_token, tenant, uploaded(api, admin_token, "configuration", again, tenant)))
    assert deployed["deploymentResult"]["isSuccess"] is True
    latest = deployed["deploymentResult"]["metadata"]["latestVersion"]
    assert latest != created["deploymentResult"]["metadata"]["latestVersion"]
    stored = api.http.get(f"/config/{tenant}/deployments/download", headers={"Authorization": f"Bearer {admin_token}"})
    with zipfile.ZipFile(io.BytesIO(stored.body)) as downloaded, zipfile.ZipFile(io.BytesIO(again)) as sent:
        assert downloaded.read("plugins/python/padding.py") == sent.read("plugins/python/padding.py")


def test_both_validations_take_an_upload(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)
    content = package()

    tenantless = by_reference(
        api, "POST", "/config/validateConfig", admin_token, uploaded(api, admin_token, "configuration", content)
    )
    tenants = by_reference(
        api,
        "POST",
        f"/config/{tenant}/deployments/validate",
        admin_token,
        uploaded(api, admin_token, "configuration", content, tenant),
    )

    assert _report(tenantless)["isSuccess"] is True
    assert _report(tenants)["isSuccess"] is True


def test_an_upload_serves_one_operation(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)
    locator = uploaded(api, admin_token, "configuration", package(), tenant)
    ok(_deploy(api, admin_token, tenant, locator))
    before = stored_state(tenant)

    reused = assert_error(_deploy(api, admin_token, tenant, locator), 409, "upload.already_used")

    assert "serves one operation" in reused["message"]
    assert stored_state(tenant) == before


def test_a_replayed_idempotent_deploy_answers_its_first_result_rather_than_a_used_upload(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)
    locator = uploaded(api, admin_token, "configuration", package(), tenant)

    first = by_reference(
        api,
        "POST",
        f"/config/{tenant}/deployments/deploy",
        admin_token,
        locator,
        **{"X-Idempotency-Key": "deploy-once"},
    )
    replay = by_reference(
        api,
        "POST",
        f"/config/{tenant}/deployments/deploy",
        admin_token,
        locator,
        **{"X-Idempotency-Key": "deploy-once"},
    )

    assert ok(replay) == ok(first)


def test_an_operation_that_fails_leaves_its_upload_unused(api, admin_token):
    locator = uploaded(api, admin_token, "configuration", b"not a zip at all")
    before = stored_state()

    for _ in range(2):  # the second time too the package's own error, not a used upload
        assert_error(
            by_reference(api, "POST", "/config/createTenant?name=Broken", admin_token, locator),
            400,
            "config.package_not_zip",
        )

    assert stored_state() == before


@pytest.mark.parametrize(
    "sent, code",
    [
        (b"PK" + b"x" * 40, "upload.size_mismatch"),  # another length (S3 refuses it; moto takes it)
        (b"PK" + b"y" * 38, "upload.checksum_mismatch"),  # the announced length, other bytes
    ],
)
def test_a_file_unlike_its_intent_is_refused_and_the_right_one_is_taken_later(api, admin_token, sent, code):
    tenant, _ = new_configured_tenant(api, admin_token)
    content = package()
    made = ok(intent(api, admin_token, "configuration", content, tenant))
    assert_error(_deploy(api, admin_token, tenant, made["uploadLocator"]), 409, "upload.not_received")
    wrong = sent if code == "upload.size_mismatch" else sent.ljust(len(content), b"y")
    put(made, wrong, headers={**made["headers"], "Content-Length": str(len(wrong))})
    before = stored_state(tenant)

    refused = assert_error(_deploy(api, admin_token, tenant, made["uploadLocator"]), 409, code)

    assert made["uploadLocator"] in refused["message"]
    assert stored_state(tenant) == before
    put(made, content)  # the URL still takes the right file, and the upload was not used up
    assert ok(_deploy(api, admin_token, tenant, made["uploadLocator"]))["deploymentResult"]["isSuccess"] is True


def test_an_expired_upload_is_refused(api, admin_token, clock):
    tenant, _ = new_configured_tenant(api, admin_token)
    locator = uploaded(api, admin_token, "configuration", package(), tenant)
    clock.advance(minutes=15)
    before = stored_state(tenant)

    expired = assert_error(_deploy(api, admin_token, tenant, locator), 409, "upload.expired")

    assert "2026-01-15T09:45:00.000Z" in expired["message"] and "POST /uploads" in expired["message"]
    assert stored_state(tenant) == before


def test_another_tenants_another_callers_or_another_purposes_upload_is_refused(api, admin_token):
    mine, _ = new_configured_tenant(api, admin_token)
    theirs, _ = new_configured_tenant(api, admin_token)
    content = package()
    for_theirs = uploaded(api, admin_token, "configuration", content, theirs)
    tenantless = uploaded(api, admin_token, "configuration", content)
    _, other_admin = new_user(["*.*"], ["any"])
    before = stored_state(mine), stored_state(theirs)

    assert_error(_deploy(api, admin_token, mine, for_theirs), 404, "upload.not_found")
    assert_error(_deploy(api, admin_token, mine, tenantless), 404, "upload.not_found")
    assert_error(
        by_reference(api, "POST", "/config/createTenant?name=X", admin_token, for_theirs), 404, "upload.not_found"
    )
    assert_error(
        by_reference(api, "POST", "/config/createTenant?name=X", other_admin, tenantless), 404, "upload.not_found"
    )  # an upload for no tenant serves its maker alone
    wrong = assert_error(
        by_reference(api, "PATCH", f"/resource/{theirs}/tables/Rates", admin_token, for_theirs),
        400,
        "upload.wrong_purpose",
    )
    assert "configuration" in wrong["message"]

    assert (stored_state(mine), stored_state(theirs)) == before
    assert ok(_deploy(api, admin_token, theirs, for_theirs))["deploymentResult"]["isSuccess"] is True


def test_an_upload_takes_the_permission_of_its_operation_and_access_to_its_tenant(api, admin_token):
    tenant = tables_tenant(api, admin_token)
    other, _ = new_configured_tenant(api, admin_token)
    _, uploader = new_user(["tables.upload"], [tenant])
    content = csv_zip(RATES_V1)

    assert ok(intent(api, uploader, "table", content, tenant))["method"] == "PUT"
    denied = assert_error(intent(api, uploader, "configuration", content, tenant), 403, "auth.permission_denied")
    assert "deployments.deploy" in denied["message"]
    assert_error(intent(api, uploader, "configuration", content), 403, "auth.permission_denied")
    assert_error(intent(api, uploader, "table", content, other), 403, "auth.tenant_forbidden")
    missing = assert_error(intent(api, uploader, "table", content), 400, "request.invalid")
    assert missing["fieldErrors"] == [{"field": "tenantLocator", "message": "is required for a table upload"}]
    assert_error(intent(api, uploader, "table", content, tenant, size=100 * 1024 * 1024 + 1), 413, "upload.too_large")
    for bad in ({"sha256": "abc"}, {"size": 0}, {"tenantLocator": "not-a-uuid"}, {"extra": 1}):
        assert_error(intent(api, uploader, "table", content, tenant, **bad), 400, "request.invalid")
    assert_error(intent(api, uploader, "video", content, tenant), 400, "request.invalid")


def test_a_body_with_a_reference_or_a_malformed_reference_is_refused(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)
    locator = uploaded(api, admin_token, "configuration", package(), tenant)
    path = f"/config/{tenant}/deployments/deploy"

    both = assert_error(
        call(
            api,
            "POST",
            f"{path}?uploadLocator={locator}",
            admin_token,
            raw=package(),
            headers={"Content-Type": "application/zip"},
        ),
        400,
        "request.invalid",
    )
    malformed = assert_error(by_reference(api, "POST", path, admin_token, "../../etc"), 400, "request.invalid")

    assert both["fieldErrors"][0]["field"] == malformed["fieldErrors"][0]["field"] == "uploadLocator"
    assert ok(_deploy(api, admin_token, tenant, locator.lower()))["deploymentResult"]["isSuccess"] is True


def test_tables_take_uploads_to_create_and_replace(api, admin_token, clock):
    tenant = tables_tenant(api, admin_token)
    created = by_reference(
        api,
        "POST",
        f"/resource/{tenant}/tables?name=Rates2026&staticName=Rates",
        admin_token,
        uploaded(api, admin_token, "table", csv_zip(RATES_V1), tenant),
    )
    assert ok(created)["name"] == "Rates2026"
    assert value_of(record(api, admin_token, tenant, "table", "Rates", key=["CA", "18"]))["factor"] == Decimal("1.80")
    clock.advance(minutes=1)

    replaced = by_reference(
        api,
        "PATCH",
        f"/resource/{tenant}/tables/Rates2026",
        admin_token,
        uploaded(api, admin_token, "table", csv_zip(RATES_V2), tenant),
    )

    assert ok(replaced)["name"] == "Rates2026"
    assert value_of(record(api, admin_token, tenant, "table", "Rates", key=["CA", "18"]))["factor"] == Decimal("1.75")


def test_schedules_take_uploads_to_add_items_and_to_deserialize(api, admin_token, jobs):
    tenant = schedules_tenant(api, admin_token)
    quote, vehicle = draft_quote(api, admin_token, tenant)
    path = schedule_path(tenant, quote, vehicle)

    added = by_reference(
        api,
        "POST",
        path,
        admin_token,
        uploaded(api, admin_token, "schedule", b"serial,kind,value\nAB0001,laptop,10.50\n", tenant),
        content_type="text/csv",
    )
    assert ok(added)["success"] is True
    started = by_reference(
        api,
        "POST",
        f"{path}/deserialize?params=%7B%7D",
        admin_token,
        uploaded(api, admin_token, "schedule", b"serial,kind,value\nAB0002,phone,5\n", tenant),
        content_type="text/csv",
    )
    job = ok(started)["jobLocator"]
    jobs.drain()

    assert ok(call(api, "GET", f"/policy/{tenant}/deserializeJobs/{job}", admin_token))["jobState"] == "completed"
    assert [(entry["data"]["serial"], str(entry["data"]["value"])) for entry in every_item(api, admin_token, path)] == [
        ("AB0001", "10.50"),
        ("AB0002", "5.00"),
    ]


def test_documents_take_uploads_to_attach_and_replace(api, admin_token):
    tenant = schedules_tenant(api, admin_token)
    quote, _ = draft_quote(api, admin_token, tenant)
    query = urlencode(
        {"referenceType": "quote", "referenceLocator": quote, "name": "Proposal", "documentFormat": "pdf"}
    )

    attached = ok(
        by_reference(
            api,
            "POST",
            documents(tenant, f"/attach?{query}"),
            admin_token,
            uploaded(api, admin_token, "document", b"%PDF-1.4 a proposal", tenant),
            content_type="application/pdf",
        )
    )
    assert download(api, admin_token, tenant, attached["locator"]).body == b"%PDF-1.4 a proposal"
    replaced = ok(
        by_reference(
            api,
            "PATCH",
            documents(tenant, f"/{attached['locator']}"),
            admin_token,
            uploaded(api, admin_token, "document", b"%PDF-1.4 the signed one", tenant),
            content_type="application/pdf",
        )
    )

    assert replaced["size"] == len(b"%PDF-1.4 the signed one")
    assert download(api, admin_token, tenant, attached["locator"]).body == b"%PDF-1.4 the signed one"


def test_the_description_offers_an_upload_on_every_file_route_but_format_config(api):
    paths = ok(api.http.get("/openapi.json"))["paths"]
    by_reference_routes = sorted(
        f"{method.upper()} {path}"
        for path, methods in paths.items()
        for method, operation in methods.items()
        if any(p["name"] == "uploadLocator" for p in operation["parameters"])
    )

    assert by_reference_routes == sorted(
        [
            "POST /config/createTenant",
            "POST /config/validateConfig",
            "POST /config/{tenantLocator}/deployments/deploy",
            "POST /config/{tenantLocator}/deployments/validate",
            *[
                f"{method} /resource/{{tenantLocator}}/{kind}{suffix}"
                for kind in ("tables", "rangeTables", "constraints")
                for method, suffix in (("POST", ""), ("PATCH", "/{name}"))
            ],
            *[
                f"POST /policy/{{tenantLocator}}/{owner}s/{{locator}}/schedules/{{staticElementLocator}}{suffix}"
                for owner in ("quote", "transaction")
                for suffix in ("", "/deserialize")
            ],
            "POST /document/{tenantLocator}/documents/attach",
            "PATCH /document/{tenantLocator}/documents/{locator}",
            "POST /migration/{tenantLocator}/migrations",
        ]
    )
    deploy = paths["/config/{tenantLocator}/deployments/deploy"]["post"]
    assert deploy["requestBody"]["required"] is False
    shared = ok(api.http.get("/openapi.json"))["components"]["responses"]
    answers = [shared[answer["$ref"].rsplit("/", 1)[1]] for answer in deploy["responses"].values() if "$ref" in answer]
    assert {"upload.not_found", "upload.already_used", "upload.checksum_mismatch"} <= set(
        json.dumps(answers).replace('"', " ").split()
    )
    assert paths["/config/formatConfig"]["post"]["requestBody"]["required"] is True
    create = paths["/uploads"]["post"]
    assert create["requestBody"]["content"]["application/json"]["example"]["sha256"] == SHA256_EXAMPLE
