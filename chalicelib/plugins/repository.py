"""What the plugins domain keeps through storage: the tenant function's code objects in S3
(`tenants/{t}/code/{version}.zip`, and the renderer libraries' layer, `tenant-code/{layer}-{sha256}.zip`) and the
function itself, through the Lambda control plane (storage/tenant_functions.py) and its invocations
(storage/functions.py)."""

from __future__ import annotations

from collections.abc import Callable

from chalicelib.settings import settings
from chalicelib.storage import blobs, functions, tenant_functions
from chalicelib.storage.functions import Invocation
from chalicelib.storage.tenant_functions import FunctionSpec, Published, Refused, Retry

__all__ = [
    "FunctionSpec",
    "Invocation",
    "Published",
    "Refused",
    "Retry",
    "aliases",
    "alias_version",
    "delete_alias",
    "function_version",
    "invoke",
    "layer",
    "prune",
    "publish",
    "read_code",
    "store_code",
]


def code_path(name: str) -> str:
    return f"code/{name}.zip"


def store_code(tenant: str, name: str, zipped: bytes) -> tuple[str, str]:
    """(bucket, key) of the code object `name` of the tenant."""
    return settings().bucket_name, blobs.put(tenant, code_path(name), zipped, "application/zip")


def read_code(tenant: str, name: str) -> bytes | None:
    return blobs.get(tenant, code_path(name))


def publish(
    spec: FunctionSpec, bucket: str, key: str, code_sha256: str, alias: str, verify: Callable[[str], None]
) -> Published:
    return tenant_functions.publish(spec, bucket, key, code_sha256, alias, verify)


def layer(name: str, content_sha256: str, build: Callable[[], bytes]) -> str:
    return tenant_functions.layer(name, content_sha256, build)


def alias_version(function_name: str, alias: str) -> str | None:
    return tenant_functions.alias_version(function_name, alias)


def function_version(function_name: str, version: str) -> dict[str, object] | None:
    return tenant_functions.function_version(function_name, version)


def aliases(function_name: str) -> dict[str, str]:
    return tenant_functions.aliases(function_name)


def delete_alias(function_name: str, alias: str) -> None:
    tenant_functions.delete_alias(function_name, alias)


def prune(function_name: str, spare: Callable[[str], bool] = lambda alias: False) -> list[str]:
    return tenant_functions.prune(function_name, spare)


def invoke(function_name: str, payload: bytes, qualifier: str | None = None) -> Invocation:
    return functions.invoke(function_name, payload, qualifier)
