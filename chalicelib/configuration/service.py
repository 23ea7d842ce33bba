"""Configuration deployments: tenants created from packages, redeploys, versions, the data model.

A package is read (package.py), validated and normalised (validator.py) before anything is stored,
so a package that fails changes nothing. A successful deployment writes its ZIP (in the download
layout, holding the normal-form model) and the model JSON to S3 first, then makes them reachable in
one transaction: the immutable version item, the moved current pointer with its DeploymentMetadata,
the static-locator item and the event. S3 objects of a transaction that then fails stay unreachable.

`current_model(ctx)`, `model(ctx, version)` and `billing_plans(ctx)` are the domain's surface for later
domains: one GetItem for the current pointer, and the model itself at most once per process (cache.py).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable
from decimal import Decimal
from typing import Any, TypeVar

from chalicelib.configuration import cache, repository
from chalicelib.configuration.answer import datamodel_answer
from chalicelib.configuration.billing_plans import BillingPlans
from chalicelib.configuration.diff import diff
from chalicelib.configuration.formatting import format_package
from chalicelib.configuration.models import (
    BootstrapRecord,
    ConfigVersion,
    CurrentDeployment,
    DeployedConfiguration,
    DeploymentMetadata,
    DeploymentOutcome,
    LatestDeployment,
    TenantCode,
    TenantCodeStatus,
    TenantDeployment,
)
from chalicelib.configuration.package import (
    RESOURCE_FILES_FOLDER,
    BootstrapResource,
    ConfigPackage,
    PackageError,
    bootstrap_resources,
    dumps_json,
    implemented_plugins,
    python_modules,
    read_package,
    write_package,
)
from chalicelib.configuration.schema import lookup
from chalicelib.configuration.validator import ValidationOutcome, validate
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import AlreadyExists, ConcurrentModification, DomainError, FieldError
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.identity import service as identity
from chalicelib.runtime import jobs, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.sandbox import python_source
from chalicelib.settings import settings

VALIDATION_RESULT_FILE = "validation-result.json"
NO_TENANT = "00000000-0000-0000-0000-000000000000"
"""The `locator` of a createTenant result whose package failed: no tenant was created."""
DEFAULT_TENANT_NAME = "Unnamed tenant"
MAX_BOOTSTRAP_RECORD_BYTES = 300_000
"""The bootstrap record is one table item, which DynamoDB caps at 400 KB."""
MAX_ERRORS_SHOWN = 20
DEPLOY_EVENT = "config.deployment.deploy"
BOOTSTRAP_EVENT = "config.bootstrap.queue"
MOVE_ATTEMPTS = 5
_TABLE_RESOURCE_KINDS = frozenset({"tables", "rangeTables", "constraintTables"})

_VERSION = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
_VERSION_PLACEHOLDER = "0" * 26
_BOOTSTRAP_FOLDER = "/".join(RESOURCE_FILES_FOLDER) + "/"

T = TypeVar("T")


# --- deploying -----------------------------------------------------------------------------------


def create_tenant(
    ctx: CallContext, package_bytes: bytes, *, name: str | None, description: str | None, test_clock: bool = False
) -> TenantDeployment:
    """Validate the package; only when it passes, register the tenant (the caller gets access; with
    `test_clock`, a test clock: 403 `clock.test_clocks_disabled` where the stage allows none), deploy the
    package as its first version and store its bootstrap resources."""
    if test_clock and not settings().test_clocks:
        raise codes.CLOCK_TEST_CLOCKS_DISABLED("This stage does not allow test clocks (PAS_TEST_CLOCKS is false)")
    package = _read(package_bytes)
    outcome, plugins = _check(package)
    tenant_name = name or DEFAULT_TENANT_NAME
    if not outcome.is_success:
        return _failed(NO_TENANT, tenant_name, outcome.errors, None)
    resources = bootstrap_resources(package)
    record = _bootstrap_record(ctx, resources, outcome.model)
    tenant = identity.create_tenant(ctx, name=tenant_name, description=description, test_clock=test_clock)
    tenant_ctx = ctx.for_tenant(tenant.locator)
    repository.store_bootstrap_files(tenant.locator, resources, record.resources if record else [])
    uow, metadata = _deployment(tenant_ctx, package, outcome.model, plugins, None, overwrite=False)
    if record is not None:
        record = record.model_copy(update={"version": metadata.latestVersion})
        repository.add_bootstrap(uow, tenant.locator, record)
        uow.record_event(
            BOOTSTRAP_EVENT,
            {"tenantLocator": tenant.locator, "version": metadata.latestVersion, "resources": len(resources)},
        )
        if any(resource.kind in _TABLE_RESOURCE_KINDS for resource in record.resources):
            # loaded by chalicelib.tables, a higher domain
            jobs.enqueue(uow, JobType.TABLES_BOOTSTRAP, locator=bootstrap_step_locator(record, 0))
    uow.commit()
    return TenantDeployment(tenant.locator, tenant.name, DeploymentOutcome(True, [], metadata), "queued")


def _bootstrap_record(
    ctx: CallContext, resources: list[BootstrapResource], model: dict[str, Any]
) -> BootstrapRecord | None:
    """The record of the package's bootstrap resources (None without any), checked to fit in one item."""
    if not resources:
        return None
    groups = lookup(model, "bootstrap.resources.resourceGroups")
    record = BootstrapRecord(
        version=_VERSION_PLACEHOLDER,
        resources=repository.bootstrap_files(resources),
        resourceGroups=groups if isinstance(groups, dict) else {},
        createdAt=ctx.now,
    )
    size = len(record.model_dump_json())
    if size > MAX_BOOTSTRAP_RECORD_BYTES:
        raise codes.CONFIG_BOOTSTRAP_TOO_LARGE(
            f"The bootstrap resources of the package take {size} bytes to record; at most "
            f"{MAX_BOOTSTRAP_RECORD_BYTES} are allowed (fewer resources or shorter names)"
        )
    return record


def bootstrap_step_locator(record: BootstrapRecord, cursor: int) -> str:
    """The locator of the tables.bootstrap job that loads the record's table resources from number
    `cursor` on: derived, so a retried step enqueues its next step once, and the tables domain finds the
    job of a step to report on it."""
    return derived_locator(record.createdAt, f"{JobType.TABLES_BOOTSTRAP}#{record.version}#{cursor}")


def deploy(ctx: CallContext, package_bytes: bytes, *, overwrite: bool = False) -> TenantDeployment:
    """A new version of an existing tenant's configuration; bootstrap resources are ignored.
    `overwrite=true` keeps the current static version locator, so what is bound to it moves to the
    new version; otherwise the new version gets a static locator of its own."""
    tenant = identity.get_tenant(ctx, ctx.tenant)
    package = _read(package_bytes)
    outcome, plugins = _check(package)
    previous = repository.current(ctx.tenant)
    if not outcome.is_success:
        return _failed(tenant.locator, tenant.name, outcome.errors, previous)
    uow, metadata = _deployment(ctx, package, outcome.model, plugins, previous, overwrite=overwrite)
    uow.commit()
    return TenantDeployment(tenant.locator, tenant.name, DeploymentOutcome(True, [], metadata), "queued")


def _deployment(
    ctx: CallContext,
    package: ConfigPackage,
    model: dict[str, Any],
    plugins: dict[str, str],
    previous: CurrentDeployment | None,
    *,
    overwrite: bool,
) -> tuple[Any, DeploymentMetadata]:
    """Stores the new version's files and answers the unit of work that makes it current. On the tenant
    function, a redeployment is only recorded: its publish job makes it current once its code is live
    (`make_current`), so until then the previous version serves, and a publish that fails leaves it current."""
    tenant = ctx.tenant
    version = new_locator()
    replaced = previous.metadata if previous else None
    metadata = DeploymentMetadata(
        latestVersion=version,
        version1=version,
        version2=replaced.latestVersion if replaced else version,
        staticVersionLocator=replaced.staticVersionLocator if overwrite and replaced else version,
        implementedPlugins=plugins,
        implementedAutomationPlugins={},
    )
    repository.store_version_files(tenant, version, _download_form(package, model), model)
    uow = wiring.unit_of_work(ctx)
    in_function = settings().plugin_runner == "lambda"
    repository.add_version(
        uow,
        tenant,
        ConfigVersion(
            version=version,
            staticVersionLocator=metadata.staticVersionLocator,
            previousVersion=replaced.latestVersion if replaced else None,
            implementedPlugins=plugins,
            createdAt=ctx.now,
            createdBy=ctx.user_locator,
            tenantCode=TenantCode(status="publishing") if in_function else None,
        ),
    )
    if in_function:
        # the tenant function gets the version's code (plugins/tenant_code.py, a higher domain's job)
        jobs.enqueue(
            uow,
            JobType.TENANT_CODE_PUBLISH,
            {"version": version},
            locator=derived_locator(ctx.now, f"{JobType.TENANT_CODE_PUBLISH}#{version}"),
        )
    uow.record_event(
        DEPLOY_EVENT,
        {
            "tenantLocator": tenant,
            "version": version,
            "staticVersionLocator": metadata.staticVersionLocator,
            "overwrite": overwrite,
        },
    )
    if in_function and previous is not None:
        repository.record_deployment(uow, tenant, version, previous)
        return uow, metadata
    repository.move_current(uow, tenant, metadata, previous)
    repository.point_static_locator(uow, tenant, metadata.staticVersionLocator, version)
    uow.after_commit(lambda: cache.put(tenant, DeployedConfiguration(version, model)))
    return uow, metadata


def make_current(ctx: CallContext, version: str) -> bool:
    """A deployment on the tenant function whose code is live becomes current (with its static version
    locator), unless the current version is newer (versions are ULIDs: their order is their creation's).
    Answers whether it moved; safe to run again (the publish job's)."""
    found = repository.get_version(ctx.tenant, version)
    if found is None:
        raise codes.not_found("configuration", version)
    for _ in range(MOVE_ATTEMPTS):
        previous = repository.current(ctx.tenant)
        if previous is None or previous.metadata.latestVersion >= version:
            return False
        metadata = DeploymentMetadata(
            latestVersion=version,
            version1=version,
            version2=previous.metadata.latestVersion,
            staticVersionLocator=found.staticVersionLocator,
            implementedPlugins=found.implementedPlugins,
            implementedAutomationPlugins=found.implementedAutomationPlugins,
        )
        uow = wiring.unit_of_work(ctx)
        repository.move_current(uow, ctx.tenant, metadata, previous)
        repository.point_static_locator(uow, ctx.tenant, metadata.staticVersionLocator, version)
        try:
            uow.commit()
        except ConcurrentModification:
            continue
        return True
    raise codes.CONCURRENT_MODIFICATION(f"Other deployments kept moving the current version; {version} is not current")


def _download_form(package: ConfigPackage, model: dict[str, Any]) -> bytes:
    """The package as the download hands it back: the normal-form model, the plugins and other
    files; bootstrap resource files are not configuration (createTenant stores them apart)."""
    files = {path: content for path, content in package.other_files.items() if not path.startswith(_BOOTSTRAP_FOLDER)}
    return write_package(ConfigPackage(model, package.plugins, files))


def _failed(locator: str, name: str, errors: list[str], previous: CurrentDeployment | None) -> TenantDeployment:
    metadata = previous.metadata if previous else None
    return TenantDeployment(
        locator,
        name,
        DeploymentOutcome(False, errors, metadata),
        "failed",
        "not run: the configuration failed validation",
    )


# --- validating and formatting -------------------------------------------------------------------


def validation_report(package_bytes: bytes) -> bytes:
    """A ZIP holding `validation-result.json` ({"isSuccess", "errors"}); nothing is stored."""
    outcome, _ = _check(_read(package_bytes))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        report = {"isSuccess": outcome.is_success, "errors": outcome.errors}
        archive.writestr(VALIDATION_RESULT_FILE, dumps_json(report).encode("utf-8"))
    return buffer.getvalue()


def tenant_validation_report(ctx: CallContext, package_bytes: bytes) -> bytes:
    identity.get_tenant(ctx, ctx.tenant)
    return validation_report(package_bytes)


def formatted(package_bytes: bytes) -> bytes:
    """The package with property names and enum values in the spec's casing (formatConfig)."""
    return _package_call(format_package, package_bytes)


def _read(package_bytes: bytes) -> ConfigPackage:
    return _package_call(read_package, package_bytes)


def _package_call(function: Callable[[bytes], T], package_bytes: bytes) -> T:
    """`function(package_bytes)`, with a package that cannot be read answered as a 400 (413 when
    too large) whose code says why and whose message names the file and line where there is one."""
    try:
        return function(package_bytes)
    except PackageError as error:
        shown = error.errors[:MAX_ERRORS_SHOWN]
        message = error.message if len(error.errors) <= 1 else f"{error.message}. Problems: {'; '.join(shown)}"
        raise error.code(message) from None


def _check(package: ConfigPackage) -> tuple[ValidationOutcome, dict[str, str]]:
    """Validation of the model plus the plugin modules, parsed in a sandboxed process (a module that does
    not parse, or not within the parser's limits, is an error of the package, reported with the others).
    Answers the outcome and the implemented plugins."""
    outcome = validate(package.model)
    errors = list(outcome.errors)
    parsed = python_source.top_level_functions(python_modules(package.plugins))
    errors += [module.error for _, module in sorted(parsed.items()) if module.error]
    plugins: dict[str, str] = {}
    products = outcome.model.get("products")
    try:
        plugins = implemented_plugins(
            {path: module.functions for path, module in parsed.items()}, products if isinstance(products, dict) else {}
        )
    except PackageError as error:
        errors += error.errors
    return ValidationOutcome(not errors, errors, outcome.model), plugins


# --- reading what is deployed --------------------------------------------------------------------


def deployment_metadata(ctx: CallContext) -> DeploymentMetadata:
    return _current(ctx).metadata


def deployment_status(ctx: CallContext) -> tuple[DeploymentMetadata, TenantCode | None, LatestDeployment | None]:
    """What is deployed and, when tenant code runs in the tenant function, where the current version's code
    stands (one more GetItem then) and, when the newest deployment is not current, where its code stands (one
    more)."""
    current = _current(ctx)
    metadata = current.metadata
    if settings().plugin_runner != "lambda":
        return metadata, None, None
    latest = current.latestDeployment
    newest = LatestDeployment(latest, tenant_code(ctx, latest)) if latest and latest != metadata.latestVersion else None
    return metadata, tenant_code(ctx, metadata.latestVersion), newest


def tenant_code(ctx: CallContext, version: str) -> TenantCode | None:
    """Where the version's tenant code stands; None for a version deployed without a tenant function."""
    found = repository.get_version(ctx.tenant, version) if _VERSION.fullmatch(version) else None
    return found.tenantCode if found else None


def mark_tenant_code(
    ctx: CallContext,
    version: str,
    status: TenantCodeStatus,
    *,
    function_version: str | None = None,
    error: str | None = None,
) -> None:
    """Record where the version's tenant code stands (the tenantCode.publish job, the only writer while it is
    `publishing`); its revision moves on, and `live` takes the tenant's next publish sequence number."""
    before = tenant_code(ctx, version)
    repository.set_tenant_code(
        ctx.tenant,
        version,
        TenantCode(
            status=status,
            functionVersion=function_version,
            error=error[:1000] if error else None,
            revision=(before.revision if before else 0) + 1,
            published=repository.next_publish(ctx.tenant)
            if status == "live"
            else (before.published if before else None),
        ),
    )


def _tenant_code_moved() -> DomainError:
    return codes.CONCURRENT_MODIFICATION("The version's tenant code changed meanwhile (a prune or a publish again)")


def prune_tenant_code(ctx: CallContext, version: str, seen: TenantCode) -> bool:
    """The version's code leaves its tenant function (the publish job of another version, keeping the most recently
    published ones): `live` -> `pruned`, on condition that it stands as `seen` (a publish again that made it recent
    meanwhile keeps it). Answers whether it moved; only then may its alias go."""
    if seen.status != "live":
        return False
    try:
        repository.change_tenant_code(
            ctx.tenant,
            version,
            seen.model_copy(update={"status": "pruned", "revision": seen.revision + 1}),
            seen,
            _tenant_code_moved,
        )
    except ConcurrentModification:
        return False
    return True


def publish_again(ctx: CallContext, version: str, *, lost: bool = False) -> TenantCode | None:
    """A call needs the code of a version its tenant function does not have: a `pruned` one (or, with `lost`, a
    `live` one whose alias a prune racing its publish again removed) moves to `publishing` and its
    tenantCode.publish job is enqueued in the same transaction, conditional on the record's revision: however many
    calls race, one wins and one job runs (the job publishes it again from the stored package). Answers where the
    version's code stands now (None: a version deployed without a tenant function, or none)."""
    for _ in range(MOVE_ATTEMPTS):
        found = tenant_code(ctx, version)
        if found is None or found.status not in ("pruned", *(("live",) if lost else ())):
            return found
        again = found.model_copy(update={"status": "publishing", "revision": found.revision + 1, "error": None})
        uow = wiring.unit_of_work(ctx)
        uow.add(repository.tenant_code_change(ctx.tenant, version, again, found, _tenant_code_moved))
        jobs.enqueue(
            uow,
            JobType.TENANT_CODE_PUBLISH,
            {"version": version},
            locator=derived_locator(ctx.now, f"{JobType.TENANT_CODE_PUBLISH}#{version}#{again.revision}"),
        )
        try:
            uow.commit()
        except (ConcurrentModification, AlreadyExists):
            continue  # another call asked first: read where it stands now
        return again
    return tenant_code(ctx, version)


def bootstrap_record(ctx: CallContext) -> BootstrapRecord | None:
    """The bootstrap resources createTenant stored for this tenant (for the tables capability)."""
    return repository.bootstrap(ctx.tenant)


def current_model(ctx: CallContext, *, resolved: bool = False) -> tuple[str, dict[str, Any]]:
    """The current version and its normal-form model (shared: never mutate it); with `resolved`,
    every extend chain applied (what datamodel.py validates records against; computed once)."""
    configuration = _configuration(ctx, _current(ctx).metadata.latestVersion, known=True)
    return configuration.version, configuration.resolved if resolved else configuration.model


def model(ctx: CallContext, version: str, *, resolved: bool = False) -> dict[str, Any]:
    """A deployed version's normal-form model (shared: never mutate it); 404 for an unknown one."""
    configuration = _configuration(ctx, version)
    return configuration.resolved if resolved else configuration.model


def datamodel(
    ctx: CallContext, version: str | None = None, *, resolved: bool = False, by_static_locator: bool = False
) -> dict[str, Any]:
    """The model of the current version, or of `version` (a static version locator when
    `by_static_locator`), as the platform answers it (answer.py); with `resolved`, every extend
    chain applied."""
    if version is None:
        configuration = _configuration(ctx, _current(ctx).metadata.latestVersion, known=True)
    else:
        configuration = _configuration(ctx, _version(ctx, version, by_static_locator))
    return datamodel_answer(configuration.resolved if resolved else configuration.model, configuration.resolved)


def billing_plans(ctx: CallContext, version: str | None = None) -> BillingPlans:
    """The billing settings (plans, payment types, account types' billing, defaults) of the current
    version, or of `version` (404 for an unknown one), typed once per version and process."""
    if version is None:
        return _configuration(ctx, _current(ctx).metadata.latestVersion, known=True).billing_plans
    return _configuration(ctx, version).billing_plans


def download(ctx: CallContext, version: str | None = None, *, by_static_locator: bool = False) -> tuple[str, bytes]:
    """(version, package ZIP) of the current version or of `version`."""
    if version is None:
        version = _current(ctx).metadata.latestVersion
    else:
        version = _version(ctx, version, by_static_locator)
        if repository.get_version(ctx.tenant, version) is None:
            raise codes.not_found("configuration", version)
    package = repository.read_package(ctx.tenant, version)
    if package is None:
        raise codes.not_found("configuration", version)
    return version, package


def difference(ctx: CallContext, config_json: str) -> dict[str, dict[str, dict[str, Any]]]:
    """What deploying `config_json` (a ConfigurationRef) would change, per collection: both sides in
    normal form, so casing and platform defaults do not show up as changes."""
    try:
        config = json.loads(config_json, parse_float=Decimal)
    except ValueError as error:
        raise codes.REQUEST_MALFORMED_JSON(
            f"The config parameter is not JSON: {error}",
            field_errors=[FieldError("config", "must be a ConfigurationRef as JSON")],
        ) from None
    if not isinstance(config, dict):
        raise codes.REQUEST_INVALID(
            "The config parameter must be a JSON object",
            field_errors=[FieldError("config", "must be a ConfigurationRef as JSON")],
        )
    _, deployed = current_model(ctx)
    return diff(validate(config).model, deployed)


def current_pointer_key(ctx: CallContext) -> tuple[str, str]:
    """The (PK, SK) of the tenant's current deployment pointer, for a caller that reads it together with other
    records (accounts.get_account_with) and hands the item to `remember_current`."""
    return repository.current_key(ctx.tenant)


def remember_current(ctx: CallContext, item: dict[str, Any] | None) -> None:
    """The current deployment pointer as another read found it: the request's (CallContext.reads)."""
    current = repository.current_of(item)
    if current is not None:
        ctx.reads.put(_current_read_key(ctx), current, record=repository.current_key(ctx.tenant))


def _current(ctx: CallContext) -> CurrentDeployment:
    """The current deployment pointer, read once per request (CallContext.reads, until it commits)."""
    current = ctx.reads.read(
        _current_read_key(ctx), lambda: repository.current(ctx.tenant), record=repository.current_key(ctx.tenant)
    )
    if current is None:
        identity.get_tenant(ctx, ctx.tenant)
        raise codes.not_found("configuration")
    return current


def _current_read_key(ctx: CallContext) -> tuple[str, str]:
    return "configuration.current", ctx.tenant


def _version(ctx: CallContext, version: str, by_static_locator: bool) -> str:
    """The version a path names: itself, or the latest version of a static version locator."""
    if not _VERSION.fullmatch(version):
        raise codes.not_found("configuration", version)
    if not by_static_locator:
        return version
    latest = repository.latest_of_static(ctx.tenant, version)
    if latest is None:
        raise codes.not_found("configuration", version)
    return latest


def _configuration(ctx: CallContext, version: str, *, known: bool = False) -> DeployedConfiguration:
    """From the cache, else from S3 (after checking the version exists, unless `known`)."""
    cached = cache.get(ctx.tenant, version)
    if cached is not None:
        return cached
    if not _VERSION.fullmatch(version) or not known and repository.get_version(ctx.tenant, version) is None:
        raise codes.not_found("configuration", version)
    model_json = repository.read_model(ctx.tenant, version)
    if model_json is None:
        raise codes.not_found("configuration", version)
    configuration = DeployedConfiguration(version, model_json)
    cache.put(ctx.tenant, configuration)
    return configuration
