"""Tenant code on AWS (`PAS_PLUGIN_RUNNER=lambda`, DECISIONS.md "Plugins"): one function per tenant
(`pas-tenant-{tenant}`, settings `plugin_function_name`) runs its plugins and renders its document
templates, one published version and one alias per configuration version.

A configuration deployment records the version's tenant code as `publishing` and enqueues the
`tenantCode.publish` job in the same unit of work, then answers at once; the job (`publish`):

1. builds the function's package from the modules the local sandbox runs (sandbox/runtimes.py): the handler
   (tenant_handler.py), the plugin child, the renderer, and the version's `plugins/python/` files, zipped
   deterministically (the same files give the same bytes and SHA-256), stored in S3;
2. the renderer's libraries (template engines, the PDF converter: the same entries of the same
   environment the local renderer gets at /libs) as a layer version shared by every tenant, published once
   per content (its description carries the content's SHA-256);
3. creates or updates the function (storage/tenant_functions.py: its role grants only its own logs, it sits
   in the VPC subnets of the settings, which have no route out, its memory and timeout are the larger of the
   local sandbox's plugin and renderer limits, with reserved concurrency), publishes the version and points
   the alias at it (first each plugin module is imported in the published version, by invoking it: a module
   that fails to import fails the publish, naming its file and line): the version's tenant code is `live`,
   and a redeployment becomes the tenant's current version now (configuration/service.py `make_current`:
   until then the previous version served every call, and a publish that fails leaves it current; the
   deployment status's `latestDeployment` says why);
4. prunes: the function keeps the code of the `tenant_function_versions_kept` most recently published
   configuration versions (the order of their publish sequence numbers, a publish again included) and always of
   the tenant's current one; every other `live` version becomes `pruned` (a conditional write on its record's
   revision, so a version published again meanwhile stays) and loses its alias, then every function version no
   alias points at is deleted (but those of a publish in flight). Any configuration version may still be called
   (a quote or a policy keeps the version it was made under, and its later transactions run that version's
   plugins; a migration names any deployed version): a plugin call or a render that needs a pruned version
   answers 503 `tenantCode.not_ready` with Retry-After while its publish job, enqueued once however many calls
   race (configuration/service.py `publish_again`), publishes it again from the stored package. A version
   whose code and function configuration an earlier version has already published points its alias at that one
   (storage/tenant_functions.py): the function holds one version per distinct code.

A transient error (throttling, a function still updating, a role IAM has not spread yet, a function version a
racing prune deleted before its alias) makes the job run again; what Lambda refuses for good fails it, and the
version's tenant code is `failed` with Lambda's words. Until the alias exists a call at it finds nothing and
answers 503 `tenantCode.not_ready`: no call runs another version's code, since every call names its version's
alias.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import math
import zipfile
from collections.abc import Mapping
from typing import Any

from chalicelib.configuration import service as configuration
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError, NotFound
from chalicelib.plugins import repository
from chalicelib.plugins import service as plugins
from chalicelib.plugins.lambda_runner import LambdaRunner
from chalicelib.plugins.local import Limits as PluginLimits
from chalicelib.plugins.modules import python_modules
from chalicelib.runtime.observability import logger
from chalicelib.sandbox import runtimes
from chalicelib.settings import settings

HANDLER = "tenant_handler.handler"
LIBRARIES_LAYER = "pas-tenant-libraries"
MB = 1024 * 1024
MAX_UNZIPPED_BYTES = 250 * MB
"""Lambda's limit on a function's unzipped code and layers together."""
MEMORY_MB = math.ceil(max(PluginLimits().memory_bytes, runtimes.RendererLimits().memory_bytes) / MB)
TIMEOUT_SECONDS = math.ceil(max(PluginLimits().timeout_seconds, runtimes.RendererLimits().timeout_seconds))
_SCRIPTS = {
    "tenant_handler.py": runtimes.TENANT_HANDLER_SCRIPT,
    "child.py": runtimes.PLUGIN_SCRIPT,
    "render_child.py": runtimes.RENDERER_SCRIPT,
}
_EPOCH = (1980, 1, 1, 0, 0, 0)


class PublishAgain(Exception):
    """Transient: the job runs again (not a DomainError, so dispatch queues it again)."""


def function_name(tenant: str) -> str:
    return settings().plugin_function_name.format(tenant=tenant)


def function_spec(tenant: str, layers: tuple[str, ...] = ()) -> repository.FunctionSpec:
    current = settings()
    return repository.FunctionSpec(
        name=function_name(tenant),
        handler=HANDLER,
        memory_mb=MEMORY_MB,
        timeout_seconds=TIMEOUT_SECONDS,
        reserved_concurrency=current.tenant_function_concurrency,
        subnet_ids=_listed(current.tenant_function_subnet_ids),
        security_group_ids=_listed(current.tenant_function_security_group_ids),
        boundary_arn=current.tenant_function_boundary_arn,
        layers=layers,
        description=f"tenant code of {tenant}: plugins and document templates",
    )


def _listed(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


# --- the package ---------------------------------------------------------------------------------------


def package(module_files: Mapping[str, bytes]) -> bytes:
    """The function's code: the scripts at the root, the `plugins/python/` files of `module_files` under
    their paths; deterministic (sorted entries, fixed times and modes)."""
    entries = {name: path.read_bytes() for name, path in _SCRIPTS.items()}
    entries.update({path: content for path, content in module_files.items() if path.startswith("plugins/python/")})
    unzipped = sum(map(len, entries.values())) + libraries()[1]
    if unzipped > MAX_UNZIPPED_BYTES:
        largest = max(entries, key=lambda path: len(entries[path]))
        raise codes.TENANT_CODE_UNPUBLISHABLE(
            f"The tenant function's code would take {unzipped // MB} MB unzipped, over Lambda's "
            f"{MAX_UNZIPPED_BYTES // MB} MB (the largest file is {largest})"
        )
    return _zipped(entries.items())


def _zipped(entries: Any) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for name, content in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return buffer.getvalue()


def code_sha256(zipped: bytes) -> str:
    """As Lambda writes a function's CodeSha256: base64 of the SHA-256 of the zip."""
    return base64.b64encode(hashlib.sha256(zipped).digest()).decode("ascii")


@functools.lru_cache(maxsize=1)
def libraries() -> tuple[str, int]:
    """(hex SHA-256 of the renderer libraries' files, their size in bytes), for the layer's identity."""
    digest, size = hashlib.sha256(), 0
    for name, path in runtimes.library_files():
        content = path.read_bytes()
        size += len(content)
        for part in (name.encode(), content):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
    return digest.hexdigest(), size


def libraries_layer() -> bytes:
    """The layer's zip: the libraries under python/, where the Python runtime puts a layer on sys.path."""
    return _zipped((f"python/{name}", path.read_bytes()) for name, path in runtimes.library_files())


# --- the job -------------------------------------------------------------------------------------------


def publish(ctx: CallContext, version: str) -> dict[str, Any]:
    """The `tenantCode.publish` job's work (see the module docstring); safe to run again."""
    status = configuration.tenant_code(ctx, version)
    if status is None:
        return {"status": "none"}
    if status.status == "live":
        return {"status": "live", "current": configuration.make_current(ctx, version)}
    if status.status == "pruned":
        return {"status": "pruned"}  # a message delivered again after a prune: a call publishes it again
    _, package_bytes = configuration.download(ctx, version)
    try:
        zipped = package(python_modules(package_bytes))
    except DomainError as error:
        configuration.mark_tenant_code(ctx, version, "failed", error=error.message)
        raise
    name = function_name(ctx.tenant)
    try:
        bucket, key = repository.store_code(ctx.tenant, version, zipped)
        libraries_sha, _ = libraries()
        layer = repository.layer(LIBRARIES_LAYER, libraries_sha, libraries_layer)
        published = repository.publish(
            function_spec(ctx.tenant, (layer,)),
            bucket,
            key,
            code_sha256(zipped),
            alias=version,
            verify=functools.partial(_check_imports, ctx.tenant),
        )
    except ImportsFailed as error:
        configuration.mark_tenant_code(ctx, version, "failed", error=error.message)
        raise
    except repository.Retry as error:
        logger().warning(
            "tenant code not published yet: running again",
            extra={"tenant": ctx.tenant, "version": version, "reason": str(error)},
        )
        raise PublishAgain(str(error)) from None
    except repository.Refused as error:
        configuration.mark_tenant_code(ctx, version, "failed", error=str(error))
        raise codes.TENANT_CODE_UNPUBLISHABLE(
            f"Lambda refused the code of configuration {version} for {name}: {error}"
        ) from None
    configuration.mark_tenant_code(ctx, version, "live", function_version=published.function_version)
    return {
        "status": "live",
        "functionVersion": published.function_version,
        "current": configuration.make_current(ctx, version),
        **_prune(ctx, name, version),
    }


class ImportsFailed(DomainError):
    def __init__(self, errors: list[str]):
        super().__init__(
            f"Plugin modules of the configuration fail to import: {'; '.join(errors)}"[:1000],
            codes.TENANT_CODE_UNPUBLISHABLE,
        )


def _check_imports(tenant: str, function_version: str) -> None:
    """Every plugin module imports in the published version (child.import_errors), or the publish stops
    before its alias exists: a module failing to import is the deployment's error, not every call's."""
    runner = plugins.runner()
    if not isinstance(runner, LambdaRunner):
        raise codes.SERVICE_UNAVAILABLE("tenant code is published only where plugins run in the tenant function")
    try:
        errors = runner.import_errors(tenant, function_version)
    except NotFound:  # a racing prune deleted the version before its alias: publish again
        raise repository.Retry(f"function version {function_version} was deleted before its alias") from None
    if errors:
        raise ImportsFailed(errors)


def _prune(ctx: CallContext, name: str, published: str) -> dict[str, list[str]]:
    """All but the most recently published kept versions, the current one and the one just published, lose their
    alias (`pruned`), then the function versions no alias points at go (see the module docstring). A Lambda
    failure is logged only: the next publish prunes again. Answers the aliases pruned and the versions deleted."""
    kept_count = settings().tenant_function_versions_kept
    try:
        current = configuration.deployment_metadata(ctx).latestVersion
    except NotFound:
        current = published
    pruned: list[str] = []
    try:
        found = {alias: configuration.tenant_code(ctx, alias) for alias in sorted(repository.aliases(name))}
        live = {alias: code for alias, code in found.items() if code is not None and code.status == "live"}
        recent = sorted(live, key=lambda alias: (live[alias].published or 0, alias))[-kept_count:]
        for alias in sorted(set(live) - {*recent, current, published}):
            if configuration.prune_tenant_code(ctx, alias, live[alias]):
                repository.delete_alias(name, alias)
                pruned.append(alias)
        in_flight = {alias for alias, code in found.items() if code is not None and code.status == "publishing"}
        deleted = repository.prune(name, spare=lambda alias: alias in in_flight or _publishing(ctx, alias))
    except (repository.Retry, repository.Refused) as error:
        logger().warning("old tenant code versions not removed", extra={"tenant": ctx.tenant, "reason": str(error)})
        return {"pruned": pruned, "deleted": []}
    return {"pruned": pruned, "deleted": deleted}


def _publishing(ctx: CallContext, alias: str) -> bool:
    """Whether configuration version `alias`'s code is being published (its function version is about to get
    its alias)."""
    code = configuration.tenant_code(ctx, alias)
    return code is not None and code.status == "publishing"


def gave_up(ctx: CallContext, version: str) -> None:
    """The job's last attempt ran out: the version's code is not live, and will not be without a redeploy."""
    configuration.mark_tenant_code(ctx, version, "failed", error="the publish job gave up after its last attempt")
