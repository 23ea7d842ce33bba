"""The configuration deployment API contract (spec part 1, "Configuration deployment results";
required fields as the OpenAPI definition marks them)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from chalicelib.configuration.models import DeploymentMetadata, LatestDeployment, TenantCode, TenantDeployment
from chalicelib.configuration.package import MAX_JSON_DEPTH
from chalicelib.core.messages import Response
from chalicelib.http.contract import Upload

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')

PLUGIN_DEPLOYED = "deployed"
"""pluginStatus of every implemented plugin: Python plugins need no build step, so a plugin of a
deployed version is ready as soon as the version is."""


class ConfigurationPackage(Upload):
    """A package: the raw ZIP body, its `file` part of a multipart body, or an upload (`?uploadLocator=`)."""

    purpose = "configuration"


class CreateTenantQuery(BaseModel):
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)] | None = None
    description: Annotated[str, StringConstraints(max_length=2000)] | None = None
    testClock: bool = False
    """Our extension (DECISIONS.md "Test clocks"): the tenant gets a test clock, where the stage allows them."""


class DeployQuery(BaseModel):
    overwrite: bool = False


class DownloadQuery(BaseModel):
    byStaticLocator: bool = False


class DatamodelQuery(BaseModel):
    resolve: bool = False
    byStaticLocator: bool = False


class DiffQuery(BaseModel):
    config: str = Field(json_schema_extra={"contentMediaType": "application/json", "contentSchema": {"type": "object"}})
    """A ConfigurationRef as JSON (the service parses it: service.difference)."""

    @field_validator("config")
    @classmethod
    def _nests_within_the_limit(cls, value: str) -> str:
        """Refused before it is parsed: the parser recurses once per level."""
        depth = deepest = 0
        for bracket in re.findall(r"[\[\]{}]", _JSON_STRING.sub("", value)):
            depth += 1 if bracket in "[{" else -1
            deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            raise ValueError(f"nests objects and arrays more than {MAX_JSON_DEPTH} deep")
        return value


class DataModelResponse(Response):
    """The data model (a ConfigurationRef, answer.py): the maps the definition requires named, every other
    field of the model kept as it is."""

    model_config = ConfigDict(extra="allow")

    accounts: dict[str, Any]
    charges: dict[str, Any]
    products: dict[str, Any]


class DeploymentMetadataResponse(Response):
    latestVersion: str
    version1: str
    version2: str
    implementedPlugins: dict[str, str]
    implementedAutomationPlugins: dict[str, str]
    staticVersionLocator: str | None = None

    @classmethod
    def of(cls, metadata: DeploymentMetadata | None) -> DeploymentMetadataResponse:
        """Nothing deployed (a createTenant whose package failed): empty versions and maps."""
        if metadata is None:
            return cls(
                latestVersion="", version1="", version2="", implementedPlugins={}, implementedAutomationPlugins={}
            )
        return cls.model_validate(metadata.model_dump())


class ConfigBuilderResult(BaseModel):
    isSuccess: bool
    metadata: DeploymentMetadataResponse
    errors: list[str]


class BootstrapResult(BaseModel):
    status: Literal["queued", "failed"]
    error: str


class TenantDeploymentResult(BaseModel):
    locator: str
    name: str
    bootstrapResult: BootstrapResult
    deploymentResult: ConfigBuilderResult

    @classmethod
    def of(cls, result: TenantDeployment) -> TenantDeploymentResult:
        deployment = result.deployment
        return cls(
            locator=result.locator,
            name=result.name,
            bootstrapResult=BootstrapResult(status=result.bootstrap_status, error=result.bootstrap_error),
            deploymentResult=ConfigBuilderResult(
                isSuccess=deployment.is_success,
                errors=deployment.errors,
                metadata=DeploymentMetadataResponse.of(deployment.metadata),
            ),
        )


class TenantCodeResponse(Response):
    """Our extension: where the current version's code stands in the tenant function (`PAS_PLUGIN_RUNNER=lambda`):
    `publishing`, `live`, `failed` (with `error`) or `pruned` (newer versions pushed its code out of the function: a
    call needing it publishes it again)."""

    status: Literal["publishing", "live", "failed", "pruned"]
    functionVersion: str | None = None
    error: str | None = None


PLUGIN_STATUS = {"publishing": "deploying", "live": PLUGIN_DEPLOYED, "failed": "failed", "pruned": PLUGIN_DEPLOYED}
"""pluginStatus of every implemented plugin by where the tenant code stands."""


class LatestDeploymentResponse(Response):
    """Our extension: the newest deployment on the tenant function while it is not current. `publishing`: it
    becomes current once its code is live; `failed` (with `error`): it never will, the previous version stays
    current (a redeploy is the way on)."""

    version: str
    tenantCode: TenantCodeResponse | None = None


class DeployedConfigMetadata(BaseModel):
    metadata: DeploymentMetadataResponse
    pluginStatus: dict[str, str]
    pluginVersionStatus: dict[str, dict[str, str]]
    expectedRetirementTime: datetime | None = None
    tenantCode: TenantCodeResponse | None = None
    latestDeployment: LatestDeploymentResponse | None = None

    @classmethod
    def of(
        cls, metadata: DeploymentMetadata, tenant_code: TenantCode | None = None, latest: LatestDeployment | None = None
    ) -> DeployedConfigMetadata:
        """Without a tenant function (the local runner) a deployed version's plugins are ready at once."""
        plugins = {**metadata.implementedPlugins, **metadata.implementedAutomationPlugins}
        shown = PLUGIN_STATUS[tenant_code.status] if tenant_code else PLUGIN_DEPLOYED
        status = {name: shown for name in plugins}
        return cls(
            metadata=DeploymentMetadataResponse.of(metadata),
            pluginStatus=status,
            pluginVersionStatus={metadata.latestVersion: status},
            tenantCode=_tenant_code(tenant_code),
            latestDeployment=LatestDeploymentResponse(
                version=latest.version, tenantCode=_tenant_code(latest.tenant_code)
            )
            if latest
            else None,
        )


def _tenant_code(tenant_code: TenantCode | None) -> TenantCodeResponse | None:
    shown = tenant_code.model_dump(include={"status", "functionVersion", "error"}) if tenant_code else None
    return TenantCodeResponse.model_validate(shown) if shown else None
