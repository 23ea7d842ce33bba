"""What the tests' in-process moto stores, read (and, for a copied tenant's objects, written) without a request: for a
test's look at many partitions at once (a Scan of the session's table walks every item every tenant of the process
left), and for tests/support/snapshots.py's copies, whose S3 objects went through botocore and moto's request handling
(two to four PutObject a copied tenant, most of a copy's CPU once its items were inserted directly)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from chalicelib.settings import settings


def in_process_table() -> Any | None:
    """moto's table of the settings, when the tests' DynamoDB is moto in this process (no endpoint URL)."""
    if settings().aws_endpoint_url is not None:
        return None
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    try:
        return dynamodb_backends[DEFAULT_ACCOUNT_ID][settings().region].get_table(settings().table_name)
    except Exception:  # noqa: BLE001  no such table in this process: not moto's in-process mock
        return None


def items_under(prefix: str) -> Iterator[dict[str, Any]]:
    """Every item whose partition key starts with `prefix`, in botocore's low-level form (as a Scan with
    `begins_with(PK, :prefix)` answers them, binary values as bytes)."""
    from local.lean_moto import wire_form

    table = in_process_table()
    assert table is not None and table.range_key_attr is not None, "the tests' in-process moto table"
    for hash_key, partition in list(table.items.items()):
        if hash_key.type == "S" and hash_key.value.startswith(prefix):
            for item in list(partition.values()):
                yield wire_form(item.attrs, _binary)


def _binary(value: Any) -> Any:
    if getattr(value, "type", None) == "B":
        return {"B": _bytes(value.value)}
    if getattr(value, "type", None) == "BS":
        return {"BS": [_bytes(member) for member in value.value]}
    raise TypeError(f"not a stored value: {value!r}")


def _bytes(stored: Any) -> bytes:
    """A binary value as moto keeps it: the bytes (a TransactWriteItems' values, codec.Document's), or their
    base64 text."""
    return stored if isinstance(stored, bytes) else base64.b64decode(stored)


def in_process_bucket() -> Any | None:
    """moto's S3 backend holding the settings' bucket, when the tests' S3 is moto in this process (no endpoint
    URL)."""
    if settings().aws_endpoint_url is not None:
        return None
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    try:
        backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
        backend.get_bucket(settings().bucket_name)
    except Exception:  # noqa: BLE001  no such bucket in this process: not moto's in-process mock
        return None
    return backend


@dataclass(frozen=True)
class PutShape:
    """What a PutObject left on moto's object besides its key and body: the request's metadata headers (Content-Type,
    x-amz-meta-*, x-amz-content-sha256: what botocore sent, which depends on its signing), its checksum algorithm,
    its storage class; whether the payload hash was the body's own (a signed request: then it is the new body's)."""

    metadata: tuple[tuple[str, str], ...]
    checksum_algorithm: str | None
    storage_class: str
    payload_hash_of_body: bool


def put_shape(backend: Any, key: str) -> PutShape:
    """The shape of the PutObject that stored `key` in the settings' bucket (moto's object as it holds it)."""
    stored = backend.get_object(settings().bucket_name, key)
    metadata = dict(stored._metadata)
    return PutShape(
        tuple(sorted(metadata.items())),
        stored.checksum_algorithm,
        stored.storage_class,
        metadata.get("x-amz-content-sha256") == hashlib.sha256(stored.value).hexdigest(),
    )


def put_object(backend: Any, key: str, body: bytes, shape: PutShape) -> None:
    """`body` stored at `key` of the settings' bucket as a PutObject of `shape` stores it (moto's S3 responses'
    `put_object`: the backend's put, the headers' metadata, the bucket's ACL, no tags, the checksum of the body),
    without botocore's and moto's request handling (tests/architecture/test_test_shortcuts.py compares the two)."""
    from moto.s3.utils import compute_checksum

    bucket = settings().bucket_name
    checksum = None
    if shape.checksum_algorithm:
        computed = compute_checksum(body, algorithm=shape.checksum_algorithm)
        checksum = computed.decode("utf-8") if isinstance(computed, bytes) else computed
    stored = backend.put_object(bucket, key, body, storage=shape.storage_class, checksum_value=checksum)
    metadata = dict(shape.metadata)
    if shape.payload_hash_of_body:
        metadata["x-amz-content-sha256"] = hashlib.sha256(body).hexdigest()
    stored.set_metadata(metadata)
    stored.set_acl(backend.get_bucket(bucket).acl)
    stored.website_redirect_location = None
    if shape.checksum_algorithm:
        stored.checksum_algorithm = shape.checksum_algorithm
    backend.put_object_tagging(stored, {})
