"""Configuration deployments (spec part 1, "Configuration deployments").

Packages come as a raw ZIP body or as `multipart/form-data` with the file in the part `file`.
A package that fails validation answers 200 with `isSuccess: false` (DECISIONS.md, Errors); a body
that is no readable package answers 400 (413 when too large) with a code saying why.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chalice import Blueprint

from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import query_as, request_context, uploaded_file
from chalicelib.http.responses import Binary

if TYPE_CHECKING:
    from chalicelib.configuration import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.configuration", "schemas", "service")

bp = Blueprint(__name__)

PACKAGE_TYPES = ["application/zip", "multipart/form-data", "application/octet-stream"]
ZIP = "application/zip"


@bp.route("/config/createTenant", methods=["POST"], content_types=PACKAGE_TYPES)
@endpoint("tenants.create-tenant", idempotent=True, upload=True)
def create_tenant_from_package() -> schemas.TenantDeploymentResult:
    query = query_as(schemas.CreateTenantQuery)
    result = service.create_tenant(request_context(), uploaded_file(), name=query.name,
                                   description=query.description)
    return schemas.TenantDeploymentResult.of(result)


@bp.route("/config/validateConfig", methods=["POST"], content_types=PACKAGE_TYPES)
@endpoint("tenants.create-tenant", "tenants.validate-config", upload=True)
def validate_configuration() -> Binary:
    return Binary(service.validation_report(uploaded_file()), ZIP, "validation-result.zip")


@bp.route("/config/formatConfig", methods=["POST"], content_types=PACKAGE_TYPES)
@endpoint("tenants.create-tenant", "tenants.validate-config", upload=True)
def format_configuration() -> Binary:
    return Binary(service.formatted(uploaded_file()), ZIP, "config.zip")


@bp.route("/config/{tenantLocator}/deployments", methods=["GET"])
@endpoint("deployments.read")
def fetch_deployment_metadata(tenantLocator: str) -> schemas.DeployedConfigMetadata:
    return schemas.DeployedConfigMetadata.of(service.deployment_metadata(request_context()))


@bp.route("/config/{tenantLocator}/deployments/deploy", methods=["POST"], content_types=PACKAGE_TYPES)
@endpoint("deployments.deploy", idempotent=True, upload=True)
def deploy_configuration(tenantLocator: str) -> schemas.TenantDeploymentResult:
    query = query_as(schemas.DeployQuery)
    result = service.deploy(request_context(), uploaded_file(), overwrite=query.overwrite)
    return schemas.TenantDeploymentResult.of(result)


@bp.route("/config/{tenantLocator}/deployments/validate", methods=["POST"], content_types=PACKAGE_TYPES)
@endpoint("deployments.deploy", upload=True)
def validate_tenant_configuration(tenantLocator: str) -> Binary:
    return Binary(service.tenant_validation_report(request_context(), uploaded_file()), ZIP,
                  "validation-result.zip")


@bp.route("/config/{tenantLocator}/deployments/download", methods=["GET"])
@endpoint("deployments.deploy")
def download_current_configuration(tenantLocator: str) -> Binary:
    version, package = service.download(request_context())
    return Binary(package, ZIP, f"config-{version}.zip")


@bp.route("/config/{tenantLocator}/deployments/download/{version}", methods=["GET"])
@endpoint("deployments.deploy")
def download_configuration_version(tenantLocator: str, version: str) -> Binary:
    query = query_as(schemas.DownloadQuery)
    found, package = service.download(request_context(), version, by_static_locator=query.byStaticLocator)
    return Binary(package, ZIP, f"config-{found}.zip")


@bp.route("/config/{tenantLocator}/deployments/datamodel", methods=["GET"])
@endpoint("deployments.deploy", "deployments.datamodel")
def fetch_datamodel(tenantLocator: str) -> dict[str, Any]:
    query = query_as(schemas.DatamodelQuery)
    return service.datamodel(request_context(), resolved=query.resolve)


@bp.route("/config/{tenantLocator}/deployments/datamodel/{version}", methods=["GET"])
@endpoint("deployments.deploy", "deployments.datamodel")
def fetch_datamodel_version(tenantLocator: str, version: str) -> dict[str, Any]:
    query = query_as(schemas.DatamodelQuery)
    return service.datamodel(request_context(), version, resolved=query.resolve,
                             by_static_locator=query.byStaticLocator)


@bp.route("/config/{tenantLocator}/deployments/diff", methods=["GET"])
@endpoint("deployments.deploy")
def fetch_deployment_diff(tenantLocator: str) -> dict[str, Any]:
    return service.difference(request_context(), query_as(schemas.DiffQuery).config)
