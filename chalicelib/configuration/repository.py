"""Persistence of deployed configurations.

Table (partition `T#{t}#CFG`, storage/keys.py): `V#{version}` one item per deployed version,
`#CURRENT` the current version's DeploymentMetadata (its `version` attribute is the optimistic lock),
`S#{staticVersionLocator}` the latest version of each static locator, `#BOOTSTRAP` the bootstrap
resources createTenant stored. Blobs (`tenants/{t}/...`): `config/{version}.zip` the package as
downloaded, `config/{version}.model.json` its normal-form model (so reading a model never re-reads
the ZIP), `config/bootstrap/{kind}/{file}` the bootstrap resource files.
"""

from __future__ import annotations

import mimetypes
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import simplejson

from chalicelib.configuration.models import (
    BootstrapFile,
    BootstrapRecord,
    ConfigVersion,
    CurrentDeployment,
    DeploymentMetadata,
    TenantCode,
)
from chalicelib.configuration.package import RESOURCE_FILES_FOLDER, BootstrapResource
from chalicelib.core import codes
from chalicelib.core.errors import DomainError
from chalicelib.storage import blobs, codec, keys, table
from chalicelib.storage.unit_of_work import UnitOfWork

UPLOAD_THREADS = 8


def _concurrent_deployment() -> DomainError:
    return codes.CONCURRENT_MODIFICATION("Another deployment of this tenant finished first; deploy again")


# --- reads ---------------------------------------------------------------------------------------


def current_key(tenant: str) -> tuple[str, str]:
    """The current deployment pointer's (PK, SK): what a request's read cache forgets when a deploy moves it."""
    key = keys.config_current(tenant)
    return key.pk, key.sk


def current(tenant: str) -> CurrentDeployment | None:
    return current_of(table.gateway().get(keys.tenant_scope(tenant), keys.config_current(tenant)))


def current_of(item: dict[str, Any] | None) -> CurrentDeployment | None:
    """The current deployment pointer of its stored item (read by whoever read it)."""
    if item is None:
        return None
    return CurrentDeployment(
        metadata=DeploymentMetadata.model_validate(item["metadata"]),
        revision=int(item["version"]),
        latestDeployment=item.get("latestDeployment"),
    )


def get_version(tenant: str, version: str) -> ConfigVersion | None:
    item = table.gateway().get(keys.tenant_scope(tenant), keys.config_version(tenant, version))
    return ConfigVersion.model_validate(codec.without_keys(item)) if item else None


def latest_of_static(tenant: str, static_version_locator: str) -> str | None:
    item = table.gateway().get(keys.tenant_scope(tenant), keys.config_static_version(tenant, static_version_locator))
    return item["latestVersion"] if item else None


def bootstrap(tenant: str) -> BootstrapRecord | None:
    item = table.gateway().get(keys.tenant_scope(tenant), keys.config_bootstrap(tenant))
    return BootstrapRecord.model_validate(codec.without_keys(item)) if item else None


def read_package(tenant: str, version: str) -> bytes | None:
    return blobs.get(tenant, _package_path(version))


def read_model(tenant: str, version: str) -> dict[str, Any] | None:
    body = blobs.get(tenant, _model_path(version))
    return simplejson.loads(body, use_decimal=True) if body is not None else None


# --- blobs, written before the transaction that makes them reachable ----------------------------


def store_version_files(tenant: str, version: str, package: bytes, model: dict[str, Any]) -> None:
    blobs.put(tenant, _package_path(version), package, "application/zip")
    blobs.put(tenant, _model_path(version), simplejson.dumps(model, use_decimal=True).encode(), "application/json")


def bootstrap_files(resources: list[BootstrapResource]) -> list[BootstrapFile]:
    """Where each resource file is kept: `config/bootstrap/{kind}/{file}` under the tenant."""
    return [
        BootstrapFile(
            instance=r.instance,
            staticName=r.static_name,
            kind=r.kind,
            path=_bootstrap_path(r.path),
            size=len(r.content),
        )
        for r in resources
    ]


def store_bootstrap_files(tenant: str, resources: list[BootstrapResource], files: list[BootstrapFile]) -> None:
    """Each resource at its `files` path (same order), several uploads at a time."""
    if not resources:
        return

    def upload(pair: tuple[BootstrapResource, BootstrapFile]) -> None:
        resource, file = pair
        content_type = mimetypes.guess_type(file.path)[0] or "application/octet-stream"
        blobs.put(tenant, file.path, resource.content, content_type)

    with ThreadPoolExecutor(max_workers=min(UPLOAD_THREADS, len(resources))) as pool:
        list(pool.map(upload, zip(resources, files, strict=True)))


def _package_path(version: str) -> str:
    return f"config/{version}.zip"


def _model_path(version: str) -> str:
    return f"config/{version}.model.json"


def _bootstrap_path(package_path: str) -> str:
    """`bootstrap/resources/resourceFiles/tables/A.csv` -> `config/bootstrap/tables/A.csv`: with the
    tenant's configuration (the record names the path, so a tenant created before keeps its own)."""
    return "/".join(("config", "bootstrap", *package_path.split("/")[len(RESOURCE_FILES_FOLDER) :]))


# --- writes in the caller's unit of work ---------------------------------------------------------


def add_version(uow: UnitOfWork, tenant: str, version: ConfigVersion) -> None:
    uow.add(
        table.put_new(
            {
                **keys.config_version(tenant, version.version).as_dict(),
                "entity": "configVersion",
                **version.model_dump(),
            },
            _concurrent_deployment,
        )
    )


def move_current(
    uow: UnitOfWork, tenant: str, metadata: DeploymentMetadata, previous: CurrentDeployment | None
) -> None:
    """Point the tenant at a new version; fails with 409 when another deployment moved it first. A recorded
    `latestDeployment` no newer than the version goes (it is current now, or older than what is)."""
    key = keys.config_current(tenant)
    if previous is None:
        uow.add(
            table.put_new(
                {**key.as_dict(), "entity": "configCurrent", "metadata": metadata.model_dump(), "version": 1},
                _concurrent_deployment,
            )
        )
    else:
        settled = previous.latestDeployment is not None and previous.latestDeployment <= metadata.latestVersion
        uow.add(
            table.update(
                key,
                {"metadata": metadata.model_dump()},
                expected_version=previous.revision,
                remove=("latestDeployment",) if settled else (),
                on_failure=_concurrent_deployment,
            )
        )


def record_deployment(uow: UnitOfWork, tenant: str, version: str, previous: CurrentDeployment) -> None:
    """A deployment that is not current yet, on the current pointer (409 when another deployment moved it first)."""
    uow.add(
        table.update(
            keys.config_current(tenant),
            {"latestDeployment": version},
            expected_version=previous.revision,
            on_failure=_concurrent_deployment,
        )
    )


def set_tenant_code(tenant: str, version: str, tenant_code: TenantCode) -> None:
    """Where the version's tenant code stands (one UpdateItem, outside any transaction: the publish job's)."""
    table.gateway().write(
        keys.tenant_scope(tenant),
        table.update(keys.config_version(tenant, version), {"tenantCode": tenant_code.model_dump(exclude_none=True)}),
    )


def tenant_code_change(
    tenant: str, version: str, tenant_code: TenantCode, expected: TenantCode, on_failure: table.ErrorFactory
) -> table.WriteOp:
    """The version's tenant code becomes `tenant_code`, on condition that it still stands as `expected` (its
    status and revision; a record written before revisions has none: revision 0)."""
    op = table.update(
        keys.config_version(tenant, version),
        {"tenantCode": tenant_code.model_dump(exclude_none=True)},
        on_failure=on_failure,
    )
    names = {**op.params.get("ExpressionAttributeNames", {}), "#tc": "tenantCode", "#st": "status", "#rv": "revision"}
    values = {
        **op.params.get("ExpressionAttributeValues", {}),
        ":st": codec.serialize_value(expected.status),
        ":rv": codec.serialize_value(expected.revision),
    }
    revision = "(#tc.#rv = :rv OR attribute_not_exists(#tc.#rv))" if expected.revision == 0 else "#tc.#rv = :rv"
    condition = f"{op.params['ConditionExpression']} AND #tc.#st = :st AND {revision}"
    op.params.update(ExpressionAttributeNames=names, ExpressionAttributeValues=values, ConditionExpression=condition)
    return op


def change_tenant_code(
    tenant: str, version: str, tenant_code: TenantCode, expected: TenantCode, on_failure: table.ErrorFactory
) -> None:
    """`tenant_code_change` as one conditional UpdateItem (on_failure() raised when the record moved)."""
    table.gateway().write(
        keys.tenant_scope(tenant), tenant_code_change(tenant, version, tenant_code, expected, on_failure)
    )


def next_publish(tenant: str) -> int:
    """The tenant's next tenant-code publish sequence number (1 first): one UpdateItem on the current pointer,
    an attribute of its own (its `version`, the deployments' optimistic lock, does not move)."""
    return table.gateway().increment(keys.tenant_scope(tenant), keys.config_current(tenant), "codePublishes")


def point_static_locator(uow: UnitOfWork, tenant: str, static_version_locator: str, version: str) -> None:
    uow.add(
        table.put(
            {
                **keys.config_static_version(tenant, static_version_locator).as_dict(),
                "entity": "configStaticVersion",
                "latestVersion": version,
            }
        )
    )


def add_bootstrap(uow: UnitOfWork, tenant: str, record: BootstrapRecord) -> None:
    uow.add(
        table.put_new({**keys.config_bootstrap(tenant).as_dict(), "entity": "configBootstrap", **record.model_dump()})
    )


# --- numbering: counters (outside any transaction) and number guards (in the caller's) -----------

COUNTER_ATTRIBUTE = "issued"


def next_counter(
    tenant: str, plan_name: str, entity_kind: str, limit: int, on_limit: table.ErrorFactory, *, count: int = 1
) -> int:
    """Reserves the next value (0 for the first) of the plan's counter for `entity_kind` (`count` values: answers
    the first), unless fewer than `count` of `limit` values are left (then `on_limit()` is raised). One
    UpdateItem, committed at once: a value whose transaction then fails stays unused (a gap in the numbers)."""
    issued = table.gateway().increment(
        keys.tenant_scope(tenant),
        keys.number_counter(tenant, plan_name, entity_kind),
        COUNTER_ATTRIBUTE,
        below=limit - count + 1,
        on_limit=on_limit,
        by=count,
    )
    return issued - count


def number_owner(tenant: str, entity_kind: str, number: str) -> str | None:
    item = table.gateway().get(keys.tenant_scope(tenant), keys.number_guard(tenant, entity_kind, number))
    return item["owner"] if item else None


def add_number_guard(
    uow: UnitOfWork, tenant: str, entity_kind: str, number: str, owner: str, on_taken: table.ErrorFactory
) -> None:
    uow.add(
        table.put_new(
            {
                **keys.number_guard(tenant, entity_kind, number).as_dict(),
                "entity": "numberGuard",
                "kind": entity_kind,
                "number": number,
                "owner": owner,
            },
            on_taken,
        )
    )


def remove_number_guard(uow: UnitOfWork, tenant: str, entity_kind: str, number: str) -> None:
    uow.add(table.delete(keys.number_guard(tenant, entity_kind, number)))
