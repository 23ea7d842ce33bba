"""POST .../deployments/deploy and GET .../deployments, .../download: versions, overwrite, plugins, access."""

from __future__ import annotations

import pytest

from chalicelib.configuration.package import read_package
from chalicelib.core.ids import new_tenant_locator
from tests.api.configuration.support import (
    blob_keys,
    datamodel,
    deploy,
    download,
    get,
    minimal_model,
    new_configured_tenant,
    package,
    request_events,
    stored_state,
    upload,
)
from tests.builders import new_user
from tests.support.api import assert_error, ok
from tests.unit.configuration.zips import fixture_zip

PLUGIN = b'''"""Rating for Auto."""


def rate_Auto(request):
    return {"items": []}


def validate(request):
    return {"errors": []}


def helper():
    return None
'''


def with_fee(displayName: str = "Fee") -> dict:
    model = minimal_model()
    model["charges"]["fee"] = {"category": "fee", "displayName": displayName}
    return model


def metadata_of(response) -> dict:
    result = ok(response)
    assert result["deploymentResult"]["isSuccess"] is True, result
    return result["deploymentResult"]["metadata"]


def test_a_redeploy_makes_a_new_version_and_the_old_one_stays_downloadable(api, admin_token):
    tenant, created = new_configured_tenant(api, admin_token)
    first = created["deploymentResult"]["metadata"]["latestVersion"]

    response = deploy(api, admin_token, tenant, package(with_fee()))

    result = ok(response)
    second = result["deploymentResult"]["metadata"]["latestVersion"]
    assert result["locator"] == tenant and result["name"] == "Test insurer"
    assert result["deploymentResult"] == {
        "isSuccess": True,
        "errors": [],
        "metadata": {
            "latestVersion": second,
            "version1": second,
            "version2": first,
            "staticVersionLocator": second,
            "implementedPlugins": {},
            "implementedAutomationPlugins": {},
        },
    }
    assert second > first
    assert "fee" in read_package(download(api, admin_token, tenant)).model["charges"]
    assert "fee" not in read_package(download(api, admin_token, tenant, f"/{first}")).model["charges"]
    assert "fee" in read_package(download(api, admin_token, tenant, f"/{second}")).model["charges"]
    assert "fee" not in datamodel(api, admin_token, tenant, f"/{first}")["charges"]
    assert sorted(blob_keys(f"tenants/{tenant}/config/")) == sorted(
        f"tenants/{tenant}/config/{v}{suffix}" for v in (first, second) for suffix in (".zip", ".model.json")
    )
    [event] = request_events(api, admin_token, tenant, response)
    assert (event["type"], event["requestId"]) == ("config.deployment.deploy", response.headers["X-Request-Id"])
    assert event["data"] == {
        "tenantLocator": tenant,
        "version": second,
        "staticVersionLocator": second,
        "overwrite": False,
    }


def test_overwrite_keeps_the_static_version_locator_so_it_names_the_new_version(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)
    second = metadata_of(deploy(api, admin_token, tenant, package(with_fee("Fee"))))

    third = metadata_of(deploy(api, admin_token, tenant, package(with_fee("Service fee")), overwrite="true"))

    assert third["staticVersionLocator"] == second["staticVersionLocator"] == second["latestVersion"]
    assert (third["version1"], third["version2"]) == (third["latestVersion"], second["latestVersion"])
    static = second["staticVersionLocator"]
    fee = "Service fee"
    by_static_model = datamodel(api, admin_token, tenant, f"/{static}?byStaticLocator=true")
    assert by_static_model["charges"]["fee"]["displayName"] == fee
    assert datamodel(api, admin_token, tenant, f"/{static}")["charges"]["fee"]["displayName"] == "Fee"
    by_static = read_package(download(api, admin_token, tenant, f"/{static}?byStaticLocator=true"))
    assert by_static.model["charges"]["fee"]["displayName"] == fee


def test_deployment_metadata_shows_the_current_version_and_its_plugins(api, admin_token):
    tenant, created = new_configured_tenant(api, admin_token)
    plugins = {"plugins/python/rating.py": PLUGIN}

    deployed = metadata_of(deploy(api, admin_token, tenant, package(files=plugins)))

    implemented = {
        "rating:Auto": "plugins/python/rating.py:rate_Auto",
        "validation:Auto": "plugins/python/rating.py:validate",
    }
    assert deployed["implementedPlugins"] == implemented
    assert ok(get(api, f"/config/{tenant}/deployments", admin_token)) == {
        "metadata": deployed,
        "pluginStatus": {"rating:Auto": "deployed", "validation:Auto": "deployed"},
        "pluginVersionStatus": {deployed["latestVersion"]: {"rating:Auto": "deployed", "validation:Auto": "deployed"}},
    }
    assert read_package(download(api, admin_token, tenant)).plugins == plugins


def test_a_plugin_module_that_does_not_parse_fails_the_deployment(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)

    result = ok(deploy(api, admin_token, tenant, package(files={"plugins/python/rating.py": b"def rate_Auto(:\n"})))

    assert result["deploymentResult"]["isSuccess"] is False
    assert result["deploymentResult"]["errors"] == ["plugins/python/rating.py line 1: invalid syntax"]


def test_a_redeploy_that_fails_validation_changes_nothing_and_reports_what_stays_deployed(api, admin_token):
    tenant, created = new_configured_tenant(api, admin_token)
    model = minimal_model()
    model["exposures"]["Vehicle"]["data"]["vin"]["type"] = "strng"
    before = stored_state(tenant)

    result = ok(deploy(api, admin_token, tenant, package(model)))

    assert result["deploymentResult"]["isSuccess"] is False
    assert result["deploymentResult"]["errors"] == [
        "exposures.Vehicle.data.vin.type: 'strng' is neither a built-in type (string, int, long, decimal, date, "
        "datetime, boolean, guid) nor defined in dataTypes"
    ]
    assert result["deploymentResult"]["metadata"] == created["deploymentResult"]["metadata"]
    assert result["bootstrapResult"]["status"] == "failed"
    assert stored_state(tenant) == before


def test_a_redeploy_ignores_bootstrap_resources(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)

    metadata_of(deploy(api, admin_token, tenant, fixture_zip("iag-motor-demo", "socotra-config")))

    assert blob_keys(f"tenants/{tenant}/bootstrap/") == []


def test_a_package_as_multipart_form_data_deploys(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)

    response = upload(api, f"/config/{tenant}/deployments/deploy", admin_token, package(with_fee()), multipart=True)

    metadata_of(response)
    assert "fee" in datamodel(api, admin_token, tenant)["charges"]


def test_deploying_to_an_unknown_tenant_answers_404(api, admin_token):
    before = stored_state()

    response = deploy(api, admin_token, new_tenant_locator(), package())

    assert_error(response, 404, "tenant.not_found")
    assert stored_state() == before


def test_reading_a_tenant_without_a_deployment_answers_404(api, admin_token, tenant):
    for path in ("", "/download", "/datamodel", "/diff?config=%7B%7D"):
        assert_error(get(api, f"/config/{tenant}/deployments{path}", admin_token), 404, "configuration.not_found")
    assert_error(get(api, f"/config/{new_tenant_locator()}/deployments", admin_token), 404, "tenant.not_found")


@pytest.mark.parametrize("version", ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "not-a-version", "01arz3ndektsv4rrffq69g5fav"])
def test_an_unknown_version_answers_404(api, admin_token, version):
    tenant, _ = new_configured_tenant(api, admin_token)

    for path in (
        f"/download/{version}",
        f"/datamodel/{version}",
        f"/download/{version}?byStaticLocator=true",
        f"/datamodel/{version}?byStaticLocator=true",
    ):
        assert_error(get(api, f"/config/{tenant}/deployments{path}", admin_token), 404, "configuration.not_found")


def test_a_version_of_another_tenant_is_not_found_in_this_one(api, admin_token):
    mine, _ = new_configured_tenant(api, admin_token)
    _, theirs = new_configured_tenant(api, admin_token)
    version = theirs["deploymentResult"]["metadata"]["latestVersion"]

    assert_error(
        get(api, f"/config/{mine}/deployments/download/{version}", admin_token), 404, "configuration.not_found"
    )
    assert_error(
        get(api, f"/config/{mine}/deployments/datamodel/{version}", admin_token), 404, "configuration.not_found"
    )


def test_a_caller_without_the_tenant_cannot_read_or_deploy_it(api, admin_token):
    theirs, created = new_configured_tenant(api, admin_token)
    mine, _ = new_configured_tenant(api, admin_token)
    _, token = new_user(["deployments.*"], [mine])
    version = created["deploymentResult"]["metadata"]["latestVersion"]
    before = stored_state(theirs)

    for path in ("", "/download", f"/download/{version}", "/datamodel", f"/datamodel/{version}"):
        assert_error(get(api, f"/config/{theirs}/deployments{path}", token), 403, "auth.tenant_forbidden")
    assert_error(deploy(api, token, theirs, package(with_fee())), 403, "auth.tenant_forbidden")
    assert stored_state(theirs) == before
    assert ok(get(api, f"/config/{mine}/deployments", token))


def test_each_endpoint_needs_its_permission(api, admin_token):
    tenant, _ = new_configured_tenant(api, admin_token)
    _, reader = new_user(["deployments.read"], [tenant])
    _, modeller = new_user(["deployments.datamodel"], [tenant])

    assert ok(get(api, f"/config/{tenant}/deployments", reader))
    assert_error(deploy(api, reader, tenant, package()), 403, "auth.permission_denied")
    assert_error(get(api, f"/config/{tenant}/deployments/download", reader), 403, "auth.permission_denied")
    assert_error(get(api, f"/config/{tenant}/deployments/datamodel", reader), 403, "auth.permission_denied")
    assert ok(get(api, f"/config/{tenant}/deployments/datamodel", modeller))
    assert_error(get(api, f"/config/{tenant}/deployments/download", modeller), 403, "auth.permission_denied")
    assert_error(get(api, f"/config/{tenant}/deployments", modeller), 403, "auth.permission_denied")
    assert_error(get(api, f"/config/{tenant}/deployments", None), 401, "auth.token_missing")
