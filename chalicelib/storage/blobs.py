"""S3 objects under tenant-prefixed keys (`tenants/{t}/...`), and the objects of uploads (`uploads/...`,
storage/keys.py), which clients put through presigned URLs."""

from __future__ import annotations

from collections.abc import Iterator

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
        response = clients.s3().get_object(
            Bucket=settings().bucket_name,
            Key=_tenant_key(tenant_locator, path),
            Range=f"bytes={start}-{start + length - 1}",
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "InvalidRange":
            return b""
        raise
    body: bytes = response["Body"].read()
    return body


# --- objects put by clients through a presigned URL (uploads: keys.upload_object) -------------------

READ_CHUNK_BYTES = 1024 * 1024


def upload_url(
    key: str, size: int, sha256_base64: str, content_type: str, expires_seconds: int
) -> tuple[str, dict[str, str]]:
    """A URL that lets its holder PUT one object at `key`, for `expires_seconds`, and the headers it must send:
    Content-Length, Content-Type and x-amz-checksum-sha256 are signed, so S3 refuses a body of another
    length and stores none whose SHA-256 is not `sha256_base64`."""
    params = {
        "Bucket": settings().bucket_name,
        "Key": key,
        "ContentLength": size,
        "ContentType": content_type,
        "ChecksumSHA256": sha256_base64,
    }
    url: str = clients.s3_presigner().generate_presigned_url(
        "put_object", Params=params, ExpiresIn=expires_seconds, HttpMethod="PUT"
    )
    return url, {"Content-Length": str(size), "Content-Type": content_type, "x-amz-checksum-sha256": sha256_base64}


def object_size(key: str) -> int | None:
    """The stored object's length (HeadObject); None when there is none."""
    from botocore.exceptions import ClientError

    try:
        response = clients.s3().head_object(Bucket=settings().bucket_name, Key=key)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in {"NoSuchKey", "404", "NotFound"}:
            return None
        raise
    size: int = response["ContentLength"]
    return size


def read_chunks(key: str, limit: int) -> Iterator[bytes]:
    """The object's bytes as they stream in, at most `limit` of them (a HeadObject said how many there are)."""
    response = clients.s3().get_object(Bucket=settings().bucket_name, Key=key, Range=f"bytes=0-{max(limit, 1) - 1}")
    body = response["Body"]
    try:
        while chunk := body.read(READ_CHUNK_BYTES):
            yield chunk
    finally:
        body.close()


def delete(key: str) -> None:
    clients.s3().delete_object(Bucket=settings().bucket_name, Key=key)


def remove(tenant_locator: str, path: str) -> None:
    """Deletes the tenant's object at `path` (none there is no error)."""
    delete(_tenant_key(tenant_locator, path))
