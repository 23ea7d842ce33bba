"""validateConfig, deployments/validate, formatConfig, and packages that cannot be read at all."""

from __future__ import annotations

import json
import os

import pytest

from chalicelib.configuration.package import MAX_UNCOMPRESSED_BYTES, read_package
from chalicelib.settings import reload
from tests.api.configuration.support import (
    minimal_model,
    new_configured_tenant,
    package,
    stored_state,
    upload,
    validation_paths,
    zip_json,
    zip_names,
)
from tests.builders import new_user
from tests.support.api import assert_error
from tests.unit.configuration.zips import fixture_zip, patch_central_directory, zip_files


def model_without_premium() -> dict:
    model = minimal_model()
    model["charges"] = {"fee": {"category": "fee"}}
    model["products"]["Auto"]["charges"] = ["fee"]
    return model


@pytest.fixture
def configured(api, admin_token) -> str:
    tenant, _ = new_configured_tenant(api, admin_token)
    return tenant


def test_validation_answers_a_zip_with_the_result_and_stores_nothing(api, admin_token, configured):
    for path in validation_paths(configured):
        before = stored_state(configured)

        passed = upload(api, path, admin_token, fixture_zip("itemcare", "socotra-config"))
        failed = upload(api, path, admin_token, package(model_without_premium()), multipart=True)

        for response in (passed, failed):
            assert response.status_code == 200, response.body
            assert response.headers["Content-Type"] == "application/zip"
            assert zip_names(response.body) == ["validation-result.json"]
        assert zip_json(passed.body, "validation-result.json") == {"isSuccess": True, "errors": []}
        assert zip_json(failed.body, "validation-result.json") == {
            "isSuccess": False,
            "errors": ["charges: at least one charge with category 'premium' is required"],
        }
        assert stored_state(configured) == before


def test_tenant_validation_needs_a_known_tenant_and_deploy_permission(api, admin_token, configured):
    from chalicelib.core.ids import new_tenant_locator

    _, validator = new_user(["tenants.validate-config"], [configured])

    assert_error(
        upload(api, f"/config/{new_tenant_locator()}/deployments/validate", admin_token, package()),
        404,
        "tenant.not_found",
    )
    assert upload(api, "/config/validateConfig", validator, package()).status_code == 200
    assert upload(api, "/config/formatConfig", validator, package()).status_code == 200
    assert_error(
        upload(api, f"/config/{configured}/deployments/validate", validator, package()), 403, "auth.permission_denied"
    )


def test_format_puts_property_names_and_enum_values_in_the_specs_casing(api, admin_token):
    files = {
        "config.json": json.dumps({"DefaultCurrency": "USD", "defaultDurationBasis": "MONTHS"}),
        "Accounts/Person/config.json": json.dumps({"Data": {"name": {"Type": "string"}}}),
        "products/Auto/config.json": json.dumps({"eligibleAccountTypes": ["Person"], "charges": ["Premium"]}),
        "charges/Premium/config.json": json.dumps({"category": "Premium", "Handling": "Normal"}),
        "bootstrap/resources/resourceFiles/tables/Rates01.csv": "a,b\n1,2\n",
    }
    before = stored_state()

    response = upload(api, "/config/formatConfig", admin_token, zip_files(files))

    assert response.status_code == 200, response.body
    assert response.headers["Content-Type"] == "application/zip"
    formatted = read_package(response.body)
    assert formatted.model == {
        "defaultCurrency": "USD",
        "defaultDurationBasis": "months",
        "accounts": {"Person": {"data": {"name": {"type": "string"}}}},
        "products": {"Auto": {"eligibleAccountTypes": ["Person"], "charges": ["Premium"]}},
        "charges": {"Premium": {"category": "premium", "handling": "normal"}},
    }
    assert formatted.other_files == {"bootstrap/resources/resourceFiles/tables/Rates01.csv": b"a,b\n1,2\n"}
    assert zip_json(response.body, "charges/Premium/config.json") == {"category": "premium", "handling": "normal"}
    assert stored_state() == before


# --- packages that cannot be read ----------------------------------------------------------------


def _corrupt() -> bytes:
    data = package()
    return data[:30] + bytes(byte ^ 0xFF for byte in data[30:200]) + data[200:]


BAD_PACKAGES = {
    "not a zip": (b"this is not a zip file", 400, "config.package_not_zip", "not a ZIP"),
    "corrupt": (_corrupt(), 400, "config.package_corrupt", "corrupt"),
    "parent path": (
        zip_files({"config.json": "{}", "../evil/config.json": "{}"}),
        400,
        "config.package_unsafe_path",
        "'../evil/config.json'",
    ),
    "absolute path": (zip_files({"/etc/config.json": "{}"}), 400, "config.package_unsafe_path", "'/etc/config.json'"),
    "two folders": (
        zip_files({"one/config.json": "{}", "two/config.json": "{}"}),
        400,
        "config.package_layout_invalid",
        "one, two",
    ),
    "invalid json": (
        zip_files({"pkg/config.json": "{}", "pkg/charges/premium/config.json": '{\n  "category": ,\n}'}),
        400,
        "config.package_invalid_json",
        "pkg/charges/premium/config.json line 2 column 15",
    ),
    "inflates too much": (
        patch_central_directory(package(), "config.json", 24, MAX_UNCOMPRESSED_BYTES + 1),
        413,
        "config.package_too_large",
        "uncompressed",
    ),
}


@pytest.mark.parametrize("case", list(BAD_PACKAGES))
def test_a_package_that_cannot_be_read_answers_a_clear_error_and_stores_nothing(api, admin_token, configured, case):
    body, status, code, mentioned = BAD_PACKAGES[case]
    paths = [
        "/config/createTenant",
        f"/config/{configured}/deployments/deploy",
        "/config/formatConfig",
        *validation_paths(configured),
    ]
    before = stored_state(configured)

    for path in paths:
        error = assert_error(upload(api, path, admin_token, body), status, code)
        assert mentioned in error["message"], error

    assert stored_state(configured) == before


def test_a_body_over_the_upload_limit_answers_413_before_it_is_read(api, admin_token):
    os.environ["PAS_MAX_UPLOAD_BODY_BYTES"] = "2048"
    reload()
    try:
        before = stored_state()
        response = upload(api, "/config/createTenant", admin_token, fixture_zip("itemcare"))
    finally:
        del os.environ["PAS_MAX_UPLOAD_BODY_BYTES"]
        reload()

    assert_error(response, 413, "request.too_large")
    assert stored_state() == before


def test_an_upload_of_another_content_type_is_refused(api, admin_token):
    response = api.http.post(
        "/config/validateConfig",
        body=package(),
        headers={"Authorization": f"Bearer {admin_token}", "Content-Type": "text/plain"},
    )

    assert response.status_code == 415
