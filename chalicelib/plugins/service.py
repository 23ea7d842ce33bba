"""Running a tenant's plugins for the flows that validate, rate and underwrite (quotes, transactions)
and precommit (transactions).

The caller builds the request with `contract.build_request(...)` and passes a HostApi that answers
`pas` table lookups for the tenant (backed by the tables domain), the configuration version the
quote or transaction is bound to, and, for rating, the configured charges. A product without the
plugin function gets what DECISIONS.md says: no validation errors, no charges, no flags. A plugin
that fails raises PluginFailure: its `message` belongs in the `validationResult`, and nothing the
caller was about to store should be stored.

The runner is chosen by settings (`PAS_PLUGIN_RUNNER`: `local`, the default, or `lambda`) and is
one per process, so warm plugin processes are shared by every request this process serves.
"""

from __future__ import annotations

import atexit
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.configuration import service as configuration
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError, Unavailable
from chalicelib.plugins.contract import (
    Kind,
    apply_rating,
    function_names,
    precommit_changes,
    underwriting_flags,
    validation_errors,
)
from chalicelib.plugins.models import (
    Charge,
    ElementChange,
    HostApi,
    PluginFailure,
    PluginFlag,
    PluginRunner,
    ValidationItem,
)
from chalicelib.plugins.modules import python_modules
from chalicelib.runtime import observability
from chalicelib.runtime.observability import logger
from chalicelib.sandbox import python_source
from chalicelib.settings import settings

MAX_CACHED_VERSIONS = 32
RETRY_AFTER_SECONDS = 10
"""Retry-After of a call whose version's code is being published (again): about what a publish takes."""


def validate(ctx: CallContext, version: str, request: Mapping[str, Any], host: HostApi) -> list[ValidationItem]:
    """The validation plugin's errors (none without a plugin)."""
    called = call(ctx, version, "validate", request, host)
    return validation_errors(called[1], request, function=called[0]) if called else []


def rate(
    ctx: CallContext,
    version: str,
    request: Mapping[str, Any],
    host: HostApi,
    charge_types: Mapping[str, Mapping[str, Any]],
) -> list[Charge]:
    """The rating plugin's charges for the request's segment (none without a plugin).
    `charge_types`: the configured charges, the model's `charges` collection."""
    called = call(ctx, version, "rate", request, host)
    return apply_rating(called[1], request, charge_types, function=called[0]) if called else []


def underwrite(ctx: CallContext, version: str, request: Mapping[str, Any], host: HostApi) -> list[PluginFlag]:
    """The underwriting plugin's flags (none without a plugin)."""
    called = call(ctx, version, "underwrite", request, host)
    return underwriting_flags(called[1], request, function=called[0]) if called else []


def precommit(ctx: CallContext, version: str, request: Mapping[str, Any], host: HostApi) -> list[ElementChange]:
    """The element changes the precommit plugin makes to a transaction's segment (none without a plugin)."""
    called = call(ctx, version, "precommit", request, host)
    return precommit_changes(called[1], request, function=called[0]) if called else []


def call(
    ctx: CallContext, version: str, kind: Kind, request: Mapping[str, Any], host: HostApi
) -> tuple[str, dict[str, Any]] | None:
    """(function, answer) of the product's `kind` function in configuration `version`, or None when
    the version has none. Raises PluginFailure when the plugin fails."""
    modules = deployed_modules(ctx, version)
    function = next((name for name in function_names(kind, request["productName"]) if name in modules.functions), None)
    if function is None:
        return None
    with observability.timed("PluginCall", {"kind": kind}, function=function, version=version) as call_outcome:
        try:
            result = runner().call(ctx.tenant, version, modules.files, function, request, host)
        except DomainError as error:
            if error.entry is not codes.TENANT_CODE_NOT_READY:
                raise
            raise not_ready(ctx, version, error) from None
        if isinstance(result, PluginFailure):
            call_outcome.update(outcome="failed", reason=result.reason)
    if isinstance(result, PluginFailure):
        logger().warning(
            "plugin failed",
            extra={
                "tenant": ctx.tenant,
                "version": version,
                "function": function,
                "reason": result.reason,
                "detail": result.detail,
            },
        )
        raise result
    return function, result


def not_ready(ctx: CallContext, version: str, error: DomainError) -> DomainError:
    """What a plugin call or a render answers when the tenant function has no code for `version`
    (`tenantCode.not_ready`, `error`): a version pruned out of the function (or whose alias a racing prune took) is
    published again (configuration.publish_again: one job however many calls race), and while its code is being
    published the answer carries Retry-After."""
    found = configuration.publish_again(ctx, version, lost=True)
    if found is None or found.status != "publishing":
        return error
    again = " again (newer versions had pushed it out)" if found.revision > 1 else ""
    return Unavailable(
        f"{error.message}; it is being published{again}: retry in {RETRY_AFTER_SECONDS} s",
        codes.TENANT_CODE_NOT_READY,
        retry_after_seconds=RETRY_AFTER_SECONDS,
    )


@dataclass(frozen=True)
class DeployedModules:
    files: dict[str, bytes]
    functions: frozenset[str]


_modules: OrderedDict[tuple[str, str], DeployedModules] = OrderedDict()
_runner: PluginRunner | None = None
_lock = threading.Lock()


def deployed_modules(ctx: CallContext, version: str) -> DeployedModules:
    """The plugin modules of a deployed version and the functions they define (parsed in a sandboxed
    process, as the deployment did): read from its package once per process (a version never changes),
    least recently used versions forgotten first."""
    key = (ctx.tenant, version)
    with _lock:
        if key in _modules:
            _modules.move_to_end(key)
            return _modules[key]
    _, package = configuration.download(ctx, version)
    files = python_modules(package)
    parsed = python_source.top_level_functions({path: source for path, source in files.items() if path.endswith(".py")})
    found = DeployedModules(files, frozenset(name for module in parsed.values() for name in module.functions))
    with _lock:
        _modules[key] = found
        while len(_modules) > MAX_CACHED_VERSIONS:
            _modules.popitem(last=False)
    return found


def runner() -> PluginRunner:
    """This process's runner, built on first use as settings say."""
    global _runner
    with _lock:
        if _runner is None:
            if settings().plugin_runner == "lambda":
                from chalicelib.plugins.lambda_runner import LambdaRunner

                _runner = LambdaRunner(settings().plugin_function_name)
            else:
                from chalicelib.plugins.local import LocalProcessRunner

                local = LocalProcessRunner()
                atexit.register(local.close)
                _runner = local
        return _runner


def use_runner(replacement: PluginRunner | None) -> None:
    """Replace this process's runner (tests, benchmarks); None: back to the one settings choose."""
    global _runner
    with _lock:
        _runner = replacement
