"""S3 objects under tenant-prefixed keys (`tenants/{t}/...`)."""
from __future__ import annotations

from chalicelib.settings import settings
from chalicelib.storage import clients


def _tenant_key(tenant_locator: str, path: str) -> str:
    if not tenant_locator or ".." in path.split("/") or path.startswith("/"):
        raise ValueError(f"invalid blob path {path!r}")
    return f"tenants/{tenant_locator}/{path}"


def put(tenant_locator: str, path: str, body: bytes, content_type: str = "application/octet-stream") -> str:
    key = _tenant_key(tenant_locator, path)
    clients.s3().put_object(Bucket=settings().bucket_name, Key=key, Body=body, ContentType=content_type)
    return key


def get(tenant_locator: str, path: str) -> bytes | None:
    from botocore.exceptions import ClientError

    try:
        response = clients.s3().get_object(Bucket=settings().bucket_name, Key=_tenant_key(tenant_locator, path))
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in {"NoSuchKey", "404"}:
            return None
        raise
    body: bytes = response["Body"].read()
    return body


def get_range(tenant_locator: str, path: str, start: int, length: int) -> bytes:
    """`length` bytes of an object from byte `start` on (fewer at its end; none past it)."""
    if length <= 0:
        return b""
    from botocore.exceptions import ClientError

    try:
        response = clients.s3().get_object(Bucket=settings().bucket_name, Key=_tenant_key(tenant_locator, path),
                                           Range=f"bytes={start}-{start + length - 1}")
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "InvalidRange":
            return b""
        raise
    body: bytes = response["Body"].read()
    return body
