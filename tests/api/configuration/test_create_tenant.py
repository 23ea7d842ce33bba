"""POST /config/createTenant: real packages, bootstrap resources, failures that create nothing, access."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from chalicelib.configuration import service
from chalicelib.configuration.answer import datamodel_answer
from chalicelib.configuration.package import read_package
from chalicelib.configuration.resolve import resolve
from chalicelib.core.ids import is_uuid
from chalicelib.storage import blobs
from tests.api.configuration.support import (
    blob_keys,
    create_tenant,
    datamodel,
    download,
    get,
    minimal_model,
    package,
    request_events,
    stored_state,
    upload,
)
from tests.builders import new_user, system_ctx
from tests.support.api import assert_error, ok
from tests.unit.configuration.zips import (
    FIXTURES,
    PACKAGES,
    SERVER_DOWNLOAD,
    directory_files,
    fixture_model,
    fixture_zip,
    zip_files,
)


@pytest.mark.parametrize("name", PACKAGES)
@pytest.mark.parametrize("wrap", [None, "socotra-config"])
def test_a_real_package_creates_a_tenant_and_downloads_as_the_model_it_deployed(api, admin_token, name, wrap):
    result = ok(create_tenant(api, admin_token, fixture_zip(name, wrap), name=name, description="from a fixture"))

    tenant = result["locator"]
    assert is_uuid(tenant)
    assert result["name"] == name
    assert result["deploymentResult"]["isSuccess"] is True
    assert result["deploymentResult"]["errors"] == []
    deployed = datamodel(api, admin_token, tenant)
    downloaded = read_package(download(api, admin_token, tenant)).model
    assert datamodel_answer(downloaded, resolve(downloaded)) == deployed
    assert deployed["products"].keys() == fixture_model(name)["products"].keys()


def test_the_iag_data_model_carries_every_default_the_real_server_added(api, admin_token):
    """_server-observed: what the platform handed back after deploying iag-motor-demo (e.g. maxLength
    20000 on string fields, numberingTrigger on the abstract account, delinquencyLevel)."""
    upload_model = fixture_model("iag-motor-demo")
    server_model = read_package(zip_files(directory_files(SERVER_DOWNLOAD))).model
    added = dict(_only_in(server_model, upload_model))
    assert len(added) == 16 and added[("delinquencyPlans", "Standard", "delinquencyLevel")] == "policy"

    tenant = ok(create_tenant(api, admin_token, fixture_zip("iag-motor-demo")))["locator"]
    deployed = datamodel(api, admin_token, tenant)

    assert {path: _at(deployed, path) for path in added} == added
    assert deployed["accounts"]["BaseAccount"]["numberingTrigger"] == "validation"
    assert deployed["exposures"]["PersonalVehicle"]["data"]["excess"] == {
        **upload_model["exposures"]["PersonalVehicle"]["data"]["excess"],
        "maxLength": 20000,
    }


def _only_in(model, other, path=()):
    for key, value in model.items():
        if key not in other:
            yield (*path, key), value
        elif isinstance(value, dict) and isinstance(other[key], dict):
            yield from _only_in(value, other[key], (*path, key))


def _at(model, path):
    for key in path:
        model = model.get(key) if isinstance(model, dict) else None
    return model


def test_a_package_as_multipart_form_data_creates_a_tenant(api, admin_token):
    response = upload(api, "/config/createTenant?name=Multipart", admin_token, package(), multipart=True)

    result = ok(response)
    assert result["deploymentResult"]["isSuccess"] is True
    assert datamodel(api, admin_token, result["locator"])["products"]["Auto"]["charges"] == ["premium"]


def test_a_multipart_body_without_a_file_part_is_refused(api, admin_token):
    before = stored_state()

    response = upload(api, "/config/createTenant", admin_token, package(), multipart=True, part="upload")

    assert_error(response, 400, "request.file_missing")
    assert stored_state() == before


def test_the_result_has_every_field_the_openapi_definition_requires(api, admin_token):
    result = ok(create_tenant(api, admin_token, name="Acme", description="Acme Mutual"))

    version = result["deploymentResult"]["metadata"]["latestVersion"]
    assert result == {
        "locator": result["locator"],
        "name": "Acme",
        "bootstrapResult": {"status": "queued", "error": ""},
        "deploymentResult": {
            "isSuccess": True,
            "errors": [],
            "metadata": {
                "latestVersion": version,
                "version1": version,
                "version2": version,
                "staticVersionLocator": version,
                "implementedPlugins": {},
                "implementedAutomationPlugins": {},
            },
        },
    }
    assert len(version) == 26


def test_a_package_that_fails_validation_creates_no_tenant_and_stores_nothing(api, admin_token):
    model = minimal_model()
    model["products"]["Auto"]["eligibleAccountTypes"] = ["Company"]
    del model["charges"]["premium"]
    before = stored_state()

    response = create_tenant(api, admin_token, package(model))

    result = ok(response)
    assert result["deploymentResult"]["isSuccess"] is False
    assert sorted(result["deploymentResult"]["errors"]) == [
        "charges: at least one charge with category 'premium' is required",
        "products.Auto.charges[0]: 'premium' is not defined in charges",
        "products.Auto.eligibleAccountTypes[0]: 'Company' is not defined in accounts",
    ]
    assert result["locator"] == service.NO_TENANT
    assert result["bootstrapResult"]["status"] == "failed"
    assert result["deploymentResult"]["metadata"]["latestVersion"] == ""
    assert stored_state() == before


def test_bootstrap_resources_are_stored_with_the_configuration_and_recorded(api, admin_token):
    response = create_tenant(api, admin_token, fixture_zip("iag-motor-demo", "socotra-config"))

    result = ok(response)
    tenant = result["locator"]
    version = result["deploymentResult"]["metadata"]["latestVersion"]
    assert result["bootstrapResult"] == {"status": "queued", "error": ""}
    record = service.bootstrap_record(system_ctx().for_tenant(tenant))
    assert record.version == version and record.status == "queued"
    assert {(r.instance, r.staticName, r.kind, r.path) for r in record.resources} == {
        ("UWRules01", "UWRules", "tables", "config/bootstrap/tables/UWRules01.csv"),
        (
            "invoiceDoc_v1",
            "InvoiceDoc",
            "documentTemplates",
            "config/bootstrap/documentTemplates/invoiceDoc_v1.velocity",
        ),
        ("Forms01", "Forms", "staticDocuments", "config/bootstrap/staticDocuments/Forms01.pdf"),
        ("Disclosure01", "Disclosure", "staticDocuments", "config/bootstrap/staticDocuments/Disclosure01.pdf"),
        ("SR2201", "SR22", "staticDocuments", "config/bootstrap/staticDocuments/SR2201.pdf"),
    }
    assert record.resourceGroups == fixture_model("iag-motor-demo")["bootstrap"]["resources"]["resourceGroups"]
    assert sorted(blob_keys(f"tenants/{tenant}/config/bootstrap/")) == sorted(
        f"tenants/{tenant}/{r.path}" for r in record.resources
    )
    assert (
        blobs.get(tenant, "config/bootstrap/tables/UWRules01.csv")
        == (
            FIXTURES / "iag-motor-demo" / "bootstrap" / "resources" / "resourceFiles" / "tables" / "UWRules01.csv"
        ).read_bytes()
    )
    downloaded = read_package(download(api, admin_token, tenant))
    assert not [path for path in downloaded.other_files if path.startswith("bootstrap/")]
    assert [e["type"] for e in request_events(api, admin_token, tenant, response)] == [
        "config.deployment.deploy",
        "config.bootstrap.queue",
    ]


def test_a_package_without_bootstrap_records_no_bootstrap(api, admin_token):
    tenant = ok(create_tenant(api, admin_token))["locator"]

    assert service.bootstrap_record(system_ctx().for_tenant(tenant)) is None
    assert blob_keys(f"tenants/{tenant}/config/bootstrap/") == []


def test_create_tenant_records_its_events_with_the_request_id(api, admin_token):
    response = create_tenant(api, admin_token)

    tenant = ok(response)["locator"]
    version = ok(response)["deploymentResult"]["metadata"]["latestVersion"]
    [event] = request_events(api, admin_token, tenant, response)
    assert event["type"] == "config.deployment.deploy"
    assert event["requestId"] == response.headers["X-Request-Id"]
    assert event["data"] == {
        "tenantLocator": tenant,
        "version": version,
        "staticVersionLocator": version,
        "overwrite": False,
    }


def test_the_caller_gets_access_to_the_tenant_it_created(api):
    from chalicelib.identity import service as identity
    from tests.builders import sign_in

    locator, _ = new_user(["tenants.create-tenant", "deployments.read"], [], password="correct horse 1")
    token = sign_in(identity.get_user(system_ctx(), locator).user.userName, "correct horse 1")

    tenant = ok(create_tenant(api, token))["locator"]

    assert ok(get(api, f"/config/{tenant}/deployments", token))["metadata"]["latestVersion"]


def test_an_idempotency_key_creates_one_tenant_for_two_identical_requests(api, admin_token):
    body = package()
    first = upload(api, "/config/createTenant?name=Once", admin_token, body, headers={"X-Idempotency-Key": "k-1"})
    count = stored_state()

    second = upload(api, "/config/createTenant?name=Once", admin_token, body, headers={"X-Idempotency-Key": "k-1"})

    assert ok(second) == ok(first)
    assert stored_state() == count


def test_create_tenant_needs_a_token_and_the_permission(api, admin_token):
    _, reader = new_user(["deployments.read", "tenants.validate-config"], ["any"])
    before = stored_state()

    assert_error(upload(api, "/config/createTenant", None, package()), 401, "auth.token_missing")
    assert_error(upload(api, "/config/createTenant", reader, package()), 403, "auth.permission_denied")
    assert stored_state() == before


def test_the_tenant_name_is_checked(api, admin_token):
    response = upload(api, "/config/createTenant?name=" + "x" * 201, admin_token, package())

    body = assert_error(response, 400, "request.invalid")
    assert [error["field"] for error in body["fieldErrors"]] == ["name"]


def test_numbers_in_the_model_stay_exact(api, admin_token):
    model = minimal_model()
    model["coverageTerms"]["Deductible"]["options"]["*d500"]["value"] = Decimal("0.10")
    tenant = ok(create_tenant(api, admin_token, package(model)))["locator"]

    response = get(api, f"/config/{tenant}/deployments/datamodel", admin_token)

    assert '"value":0.10' in response.body.decode()
    assert json.loads(response.body, parse_float=Decimal)["coverageTerms"]["Deductible"]["options"]["*d500"][
        "value"
    ] == Decimal("0.10")


def test_bootstrap_resources_too_many_to_record_are_refused_before_anything_is_created(api, admin_token):
    model = minimal_model()
    model["tables"] = {"Rates": {"columns": {"key": {"dataType": "string", "isKey": True}}}}
    names = [f"Rates{index:04d}_{'x' * 110}" for index in range(1000)]
    model["bootstrap"] = {
        "resources": {"resourceGroups": {}, "resourceInstances": {name: {"staticName": "Rates"} for name in names}}
    }
    files = {f"bootstrap/resources/resourceFiles/tables/{name}.csv": "key\na\n" for name in names}
    body = package(model, files)
    before = stored_state()

    response = create_tenant(api, admin_token, body)

    error = assert_error(response, 400, "config.bootstrap_too_large")
    assert "at most 300000" in error["message"]
    assert stored_state() == before
