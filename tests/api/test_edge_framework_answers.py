"""What Chalice would answer itself, answered by us (issue 10): files for clients that send no `Accept`
header, 405 and 415 in our error body, and an upper-case tenant locator naming the same tenant."""

from __future__ import annotations

import io
import zipfile

import pytest

from tests.api.quotes.support import new_account
from tests.api.tables.support import RATES_V1, create, tables_tenant
from tests.support.api import assert_error, call, ok
from tests.support.configs import configured_tenant, package, policy_model

ZIP_MAGIC = b"PK\x03\x04"


def _no_accept(token: str, **extra: str) -> dict[str, str]:
    """The headers of Python's urllib: no Accept at all."""
    return {"Authorization": f"Bearer {token}", **extra}


def _assert_zip(response) -> zipfile.ZipFile:
    assert response.status_code == 200, response.body[:300]
    assert response.headers["Content-Type"] == "application/zip"
    assert response.body.startswith(ZIP_MAGIC)
    return zipfile.ZipFile(io.BytesIO(response.body))


@pytest.fixture
def configured(api, admin_token) -> str:
    return configured_tenant(api, admin_token)


@pytest.mark.parametrize("accept", [None, "application/json", "text/html, */*;q=0.8"])
def test_a_configuration_download_is_the_file_whatever_the_accept_header(api, admin_token, configured, accept):
    headers = _no_accept(admin_token, **({"Accept": accept} if accept else {}))

    current = _assert_zip(api.http.get(f"/config/{configured}/deployments/download", headers=headers))
    version = ok(call(api, "GET", f"/config/{configured}/deployments", admin_token))["metadata"]["latestVersion"]
    by_version = _assert_zip(api.http.get(f"/config/{configured}/deployments/download/{version}", headers=headers))

    assert "config.json" in current.namelist()
    assert current.namelist() == by_version.namelist()


@pytest.mark.parametrize("path", ["/config/validateConfig", "/config/formatConfig"])
def test_validating_and_formatting_a_package_answer_the_file_without_an_accept_header(api, admin_token, path):
    response = api.http.post(
        path, body=package(policy_model()), headers=_no_accept(admin_token, **{"Content-Type": "application/zip"})
    )

    assert _assert_zip(response).namelist()


def test_a_tenant_package_validation_answers_the_file_without_an_accept_header(api, admin_token, configured):
    response = api.http.post(
        f"/config/{configured}/deployments/validate",
        body=package(policy_model()),
        headers=_no_accept(admin_token, **{"Content-Type": "application/zip"}),
    )

    assert _assert_zip(response).namelist()


def test_a_table_download_is_the_file_without_an_accept_header(api, admin_token):
    tenant = tables_tenant(api, admin_token)
    ok(create(api, admin_token, tenant, "table", "Rates2026", "Rates", RATES_V1))

    archive = _assert_zip(api.http.get(f"/resource/{tenant}/tables/Rates2026", headers=_no_accept(admin_token)))

    (name,) = archive.namelist()
    assert archive.read(name).decode().splitlines()[0] == RATES_V1.splitlines()[0]


def test_a_refused_download_is_still_our_error_body(api, admin_token, tenant):
    response = api.http.get(f"/config/{tenant}/deployments/download", headers=_no_accept(admin_token))

    assert_error(response, 404, "configuration.not_found")


def test_an_undeclared_content_type_is_415_in_our_error_body_naming_what_the_route_takes(api, admin_token, configured):
    as_text = call(
        api,
        "POST",
        f"/policy/{configured}/accounts",
        admin_token,
        {"type": "PersonAccount"},
        headers={"Content-Type": "text/plain"},
    )
    json_to_a_package_route = call(api, "POST", "/config/validateConfig", admin_token, {"x": 1})

    body = assert_error(as_text, 415, "request.unsupported_media_type")
    assert body["message"] == "This route does not take Content-Type text/plain; send application/json"
    assert body["requestId"] == as_text.headers["X-Request-Id"]
    body = assert_error(json_to_a_package_route, 415, "request.unsupported_media_type")
    assert body["message"] == (
        "This route does not take Content-Type application/json; "
        "send application/zip, multipart/form-data, application/octet-stream"
    )


def test_a_long_content_type_is_not_repeated_whole(api, admin_token, configured):
    response = call(
        api, "POST", f"/policy/{configured}/accounts", admin_token, {}, headers={"Content-Type": "text/" + "x" * 5000}
    )

    body = assert_error(response, 415, "request.unsupported_media_type")
    assert len(body["message"]) < 200


def test_a_method_the_path_lacks_is_405_in_our_error_body_with_allow(api, admin_token):
    response = api.http.request("DELETE", "/auth/token", headers=_no_accept(admin_token))

    body = assert_error(response, 405, "request.method_not_allowed")
    assert body["message"] == "DELETE is not a method of this path; it has POST"
    assert response.headers["Allow"] == "POST"
    assert admin_token not in response.body.decode()


def test_an_upper_case_tenant_locator_is_the_same_tenant(api, admin_token, configured):
    account = new_account(api, admin_token, configured)
    upper = configured.upper()

    listed = ok(call(api, "GET", f"/policy/{upper}/accounts/list", admin_token))
    fetched = ok(call(api, "GET", f"/policy/{upper}/accounts/{account}", admin_token))
    created = ok(
        call(
            api,
            "POST",
            f"/policy/{upper}/accounts",
            admin_token,
            {"type": "ProspectAccount", "data": {"email": "b@example.com"}},
        )
    )

    assert [item["locator"] for item in listed["items"]] == [account]
    assert fetched["locator"] == account
    lower_list = ok(call(api, "GET", f"/policy/{configured}/accounts/list", admin_token))
    assert [item["locator"] for item in lower_list["items"]] == [account, created["locator"]]


def test_an_upper_case_tenant_locator_grants_no_more_than_the_lower_case_one(api, admin_token, configured):
    from tests.builders import new_tenant, new_user

    other = new_tenant()
    _, token = new_user(["*.*"], [other])

    response = call(api, "GET", f"/policy/{configured.upper()}/accounts/list", token)

    assert_error(response, 403, "auth.tenant_forbidden")
    assert ok(call(api, "GET", f"/policy/{other.upper()}/accounts/list", token))["items"] == []


def test_an_error_repeats_at_most_200_characters_of_a_path_variable(api, admin_token, configured):
    long_locator = "Z" * 5000

    response = call(api, "GET", f"/policy/{configured}/accounts/{long_locator}", admin_token)

    body = assert_error(response, 404, "account.not_found")
    assert body["message"] == f"account {'Z' * 200}... not found"
