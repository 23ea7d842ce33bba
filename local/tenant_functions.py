"""Tenant code under `make run` on the `lambda` runner (`PAS_PLUGIN_RUNNER=lambda make run`).

The deployment's `tenantCode.publish` job runs in the worker as on AWS, against the emulated AWS: the
function, its role, layer, versions and aliases are created in moto's Lambda and IAM, its code in moto's S3.
moto runs no code without docker, so both processes of the stack (the worker's, for jobs that call plugins
or render, and `chalice local`'s, for requests) invoke the tenant functions through the local invoker
(plugins/local_lambda.py), which resolves the alias through moto's Lambda API and runs the published code's
handler in the local sandbox.

moto keeps Lambda in memory, and the stack saves only the table's items and the bucket's objects: at a start
the functions of an earlier run are gone while their versions' tenant code is recorded `live`. The start
publishes each tenant's current version again (`republish_current_versions`, as a redeploy would: a job
per tenant, the code stored already), so its plugin calls answer 503 `tenantCode.not_ready` for a moment
after a start, never another version's code; older versions' code comes back only with a redeploy.
"""

from __future__ import annotations

from chalicelib.plugins.local_lambda import LocalLambda


def use_local_invoker() -> LocalLambda | None:
    """On the `lambda` runner, route this process's plugin calls and renders through a local invoker
    (answered, for the caller to close at exit); on the local runner nothing changes (None)."""
    from chalicelib.documents import rendering
    from chalicelib.plugins import service as plugins
    from chalicelib.plugins.lambda_runner import LambdaRunner
    from chalicelib.settings import settings

    if settings().plugin_runner != "lambda":
        return None
    invoker = LocalLambda()
    plugins.use_runner(LambdaRunner(settings().plugin_function_name, invoke=invoker))
    rendering.use_tenant_function(invoker)
    return invoker


def republish_current_versions(tenants_per_page: int) -> int:
    """Publish again, in this process, the current version of every tenant whose code was live (see the module
    docstring); answers how many were published. A tenant whose code cannot be published again is logged and
    left `failed` (a redeploy publishes it)."""
    import logging

    from chalicelib.configuration import service as configuration
    from chalicelib.core.clock import SystemClock
    from chalicelib.core.context import SYSTEM, CallContext
    from chalicelib.core.errors import DomainError, NotFound
    from chalicelib.core.ids import new_locator
    from chalicelib.identity import service as identity
    from chalicelib.plugins import tenant_code

    published, after = 0, None
    while True:
        tenants, more = identity.tenant_locators_after(after, tenants_per_page)
        for tenant in tenants:
            ctx = CallContext(
                principal=SYSTEM, request_id=new_locator(), now=SystemClock().now(), tenant_locator=tenant
            )
            try:
                metadata, code, _ = configuration.deployment_status(ctx)
            except NotFound:
                continue  # no configuration deployed
            if code is None or code.status != "live":
                continue
            configuration.mark_tenant_code(ctx, metadata.latestVersion, "publishing")
            try:
                tenant_code.publish(ctx, metadata.latestVersion)
            except (DomainError, tenant_code.PublishAgain) as error:
                logging.getLogger("pas.local").exception("publishing the tenant code of %s again failed", tenant)
                configuration.mark_tenant_code(ctx, metadata.latestVersion, "failed", error=str(error))
                continue
            published += 1
        if not more or not tenants:
            return published
        after = tenants[-1]
