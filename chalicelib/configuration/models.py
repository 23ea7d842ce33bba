"""Deployed configurations: versions, the deployment metadata, bootstrap records, results."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel

from chalicelib.configuration.billing_plans import BillingPlans
from chalicelib.configuration.resolve import resolve


class DeploymentMetadata(BaseModel):
    """What is deployed (spec DeploymentMetadata). As the platform's deploy result shows it:
    `version1` is the version a deployment created (= `latestVersion`), `version2` the version it
    replaced (the same one on a tenant's first deployment). `staticVersionLocator` names the version
    slot: a new one per deployment, kept by `overwrite=true` deployments."""

    latestVersion: str
    version1: str
    version2: str
    staticVersionLocator: str
    implementedPlugins: dict[str, str] = {}
    implementedAutomationPlugins: dict[str, str] = {}


TenantCodeStatus = Literal["publishing", "live", "failed", "pruned"]


class TenantCode(BaseModel):
    """Where a version's tenant code stands in its tenant function (`PAS_PLUGIN_RUNNER=lambda` only):
    `publishing` until the tenantCode.publish job has pointed the version's alias at its code, then
    `live`; `failed` (with Lambda's words) when it could not; `pruned` once newer publishes pushed its alias out
    (the function keeps the `tenant_function_versions_kept` most recently published versions and the current
    one): a call needing it moves it back to `publishing` and enqueues its publish job, once.

    `revision` moves with every change of status, and the changes that race (a prune, a call asking for a
    publish again) are conditional on it. `published`: the tenant's publish sequence number of its last
    publish (the order of "most recently published"; a publish again counts as recent)."""

    status: TenantCodeStatus
    functionVersion: str | None = None
    error: str | None = None
    revision: int = 0
    published: int | None = None


class ConfigVersion(BaseModel):
    """One deployed version; immutable once written, but for where its tenant code stands (`tenantCode`)."""

    version: str
    staticVersionLocator: str
    previousVersion: str | None = None
    implementedPlugins: dict[str, str] = {}
    implementedAutomationPlugins: dict[str, str] = {}
    createdAt: datetime
    createdBy: str
    tenantCode: TenantCode | None = None


class CurrentDeployment(BaseModel):
    """The tenant's current version, with `revision` guarding concurrent deployments. `latestDeployment`: the
    newest deployment when it is not current (on the tenant function, a redeployment becomes current only once
    its code is live: publishing, or failed and never current)."""

    metadata: DeploymentMetadata
    revision: int
    latestDeployment: str | None = None


BootstrapResourceType = Literal[
    "constraintTable",
    "customFont",
    "documentTemplate",
    "documentTemplateSnippet",
    "rangeTable",
    "secret",
    "staticDocument",
    "table",
]
"""The OpenAPI BootstrapResource.resourceType values."""
RESOURCE_TYPES: dict[str, BootstrapResourceType] = {
    "tables": "table",
    "rangeTables": "rangeTable",
    "constraintTables": "constraintTable",
    "documentTemplates": "documentTemplate",
    "documentTemplatesSnippets": "documentTemplateSnippet",
    "staticDocuments": "staticDocument",
    "customFonts": "customFont",
    "secrets": "secret",
}
"""The resourceType of the files of each folder of bootstrap/resources/resourceFiles/ (a table of the
`tables` folder may be declared a range table: the tables domain decides)."""


class BootstrapFile(BaseModel):
    """A bootstrap resource instance as stored: `path` is the blob path under the tenant, `kind` its
    folder in the package."""

    instance: str
    staticName: str
    kind: str
    path: str
    size: int

    @property
    def resource_type(self) -> BootstrapResourceType | None:
        return RESOURCE_TYPES.get(self.kind)


class BootstrapRecord(BaseModel):
    """The bootstrap resources createTenant stored with the tenant's first deployment: the tables domain
    loads the tables among them, documents reads its templates and static documents. `resourceGroups` is
    the package's `bootstrap.resources.resourceGroups`, as deployed."""

    version: str
    status: Literal["queued"] = "queued"
    resources: list[BootstrapFile]
    resourceGroups: dict[str, Any] = {}
    createdAt: datetime


@dataclass(frozen=True)
class LatestDeployment:
    """The newest deployment when it is not current: its version and where its tenant code stands."""

    version: str
    tenant_code: TenantCode | None


@dataclass(frozen=True)
class DeploymentOutcome:
    """A deployment's result: on failure, `metadata` is what stays deployed (None when nothing)."""

    is_success: bool
    errors: list[str]
    metadata: DeploymentMetadata | None


@dataclass(frozen=True)
class TenantDeployment:
    locator: str
    name: str
    deployment: DeploymentOutcome
    bootstrap_status: Literal["queued", "failed"]
    bootstrap_error: str = ""


@dataclass(frozen=True)
class DeployedConfiguration:
    """A version's normal-form model, shared by every request of the process: never mutate it."""

    version: str
    model: dict[str, Any]

    @cached_property
    def resolved(self) -> dict[str, Any]:
        """The model with every `extend` chain applied (computed once)."""
        return resolve(self.model)

    @cached_property
    def billing_plans(self) -> BillingPlans:
        """The billing settings of the resolved model, typed (computed once)."""
        return BillingPlans.of(self.resolved)
