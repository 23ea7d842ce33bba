"""Configuration deployments (spec part 1, "Configuration deployments").

Packages come as a raw ZIP body or as `multipart/form-data` with the file in the part `file`.
A package that fails validation answers 200 with `isSuccess: false` (DECISIONS.md, Errors); a body
that is no readable package answers 400 (413 when too large) with a code saying why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.contract import Upload
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context
from chalicelib.http.responses import ZipFile

if TYPE_CHECKING:
    from chalicelib.configuration import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.configuration", "schemas", "service")

bp = Blueprint(__name__)

PACKAGE_TYPES = ["application/zip", "multipart/form-data", "application/octet-stream"]
UNREADABLE_PACKAGE = (
    codes.CONFIG_PACKAGE_CORRUPT,
    codes.CONFIG_PACKAGE_INVALID_JSON,
    codes.CONFIG_PACKAGE_LAYOUT_INVALID,
    codes.CONFIG_PACKAGE_NOT_ZIP,
    codes.CONFIG_PACKAGE_TOO_LARGE,
    codes.CONFIG_PACKAGE_UNSAFE_PATH,
    codes.CONFIG_PLUGIN_TOO_LARGE,
)
"""The 400s and 413s of a body that is no readable package: every route that takes one answers them."""


@bp.route("/config/createTenant", methods=["POST"], content_types=PACKAGE_TYPES)
@endpoint(
    "tenants.create-tenant",
    idempotent=True,
    errors=[
        codes.CONFIG_BOOTSTRAP_TOO_LARGE,
        *UNREADABLE_PACKAGE,
        codes.CLOCK_TEST_CLOCKS_DISABLED,
    ],
)
def create_tenant_from_package(
    body: schemas.ConfigurationPackage, query: schemas.CreateTenantQuery
) -> schemas.TenantDeploymentResult:
    result = service.create_tenant(
        request_context(), body, name=query.name, description=query.description, test_clock=query.testClock
    )
    return schemas.TenantDeploymentResult.of(result)


@bp.route("/config/validateConfig", methods=["POST"], content_types=PACKAGE_TYPES)
@endpoint(
    "tenants.create-tenant",
    "tenants.validate-config",
    errors=UNREADABLE_PACKAGE,
)
def validate_configuration(body: schemas.ConfigurationPackage) -> ZipFile:
    return ZipFile(service.validation_report(body), filename="validation-result.zip")


@bp.route("/config/formatConfig", methods=["POST"], content_types=PACKAGE_TYPES)
@endpoint(
    "tenants.create-tenant",
    "tenants.validate-config",
    errors=UNREADABLE_PACKAGE,
)
def format_configuration(body: Upload) -> ZipFile:
    return ZipFile(service.formatted(body), filename="config.zip")


@bp.route("/config/{tenantLocator}/deployments", methods=["GET"])
@endpoint("deployments.read", errors=[codes.NOT_FOUND["configuration"]])
def fetch_deployment_metadata(tenantLocator: str) -> schemas.DeployedConfigMetadata:
    return schemas.DeployedConfigMetadata.of(*service.deployment_status(request_context()))


@bp.route("/config/{tenantLocator}/deployments/deploy", methods=["POST"], content_types=PACKAGE_TYPES)
@endpoint(
    "deployments.deploy",
    idempotent=True,
    errors=UNREADABLE_PACKAGE,
)
def deploy_configuration(
    tenantLocator: str, body: schemas.ConfigurationPackage, query: schemas.DeployQuery
) -> schemas.TenantDeploymentResult:
    result = service.deploy(request_context(), body, overwrite=query.overwrite)
    return schemas.TenantDeploymentResult.of(result)


@bp.route("/config/{tenantLocator}/deployments/validate", methods=["POST"], content_types=PACKAGE_TYPES)
@endpoint(
    "deployments.deploy",
    errors=UNREADABLE_PACKAGE,
)
def validate_tenant_configuration(tenantLocator: str, body: schemas.ConfigurationPackage) -> ZipFile:
    return ZipFile(service.tenant_validation_report(request_context(), body), filename="validation-result.zip")


@bp.route("/config/{tenantLocator}/deployments/download", methods=["GET"])
@endpoint("deployments.deploy", errors=[codes.NOT_FOUND["configuration"]])
def download_current_configuration(tenantLocator: str) -> ZipFile:
    version, package = service.download(request_context())
    return ZipFile(package, filename=f"config-{version}.zip")


@bp.route("/config/{tenantLocator}/deployments/download/{version}", methods=["GET"])
@endpoint("deployments.deploy", errors=[codes.NOT_FOUND["configuration"]])
def download_configuration_version(tenantLocator: str, version: str, query: schemas.DownloadQuery) -> ZipFile:
    found, package = service.download(request_context(), version, by_static_locator=query.byStaticLocator)
    return ZipFile(package, filename=f"config-{found}.zip")


@bp.route("/config/{tenantLocator}/deployments/datamodel", methods=["GET"])
@endpoint("deployments.deploy", "deployments.datamodel", errors=[codes.NOT_FOUND["configuration"]])
def fetch_datamodel(tenantLocator: str, query: schemas.DatamodelQuery) -> schemas.DataModelResponse:
    return schemas.DataModelResponse.model_construct(**service.datamodel(request_context(), resolved=query.resolve))


@bp.route("/config/{tenantLocator}/deployments/datamodel/{version}", methods=["GET"])
@endpoint("deployments.deploy", "deployments.datamodel", errors=[codes.NOT_FOUND["configuration"]])
def fetch_datamodel_version(
    tenantLocator: str, version: str, query: schemas.DatamodelQuery
) -> schemas.DataModelResponse:
    return schemas.DataModelResponse.model_construct(
        **service.datamodel(request_context(), version, resolved=query.resolve, by_static_locator=query.byStaticLocator)
    )


@bp.route("/config/{tenantLocator}/deployments/diff", methods=["GET"])
@endpoint("deployments.deploy", errors=[codes.NOT_FOUND["configuration"], codes.REQUEST_MALFORMED_JSON])
def fetch_deployment_diff(tenantLocator: str, query: schemas.DiffQuery) -> dict[str, Any]:
    return service.difference(request_context(), query.config)
