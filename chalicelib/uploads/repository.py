"""Upload intents (one item each, storage/keys.py) and their objects in the blob bucket."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from chalicelib.core import codes
from chalicelib.storage import blobs, keys, table
from chalicelib.storage.keys import Key
from chalicelib.uploads.models import UploadIntent

KEPT_SECONDS = 24 * 3600
"""How long an intent's item outlives its expiry (DynamoDB's TTL then sweeps it), as the bucket's lifecycle
rule keeps its object a day."""


def _scope(tenant: str | None) -> str:
    return keys.tenant_scope(tenant) if tenant else keys.SYSTEM_SCOPE


def _key(tenant: str | None, user: str, locator: str) -> Key:
    return keys.tenant_upload(tenant, locator) if tenant else keys.user_upload(user, locator)


def _object_key(intent: UploadIntent) -> str:
    return keys.upload_object(intent.tenantLocator, intent.createdBy, intent.locator)


def add(intent: UploadIntent) -> None:
    item: dict[str, Any] = {
        **_key(intent.tenantLocator, intent.createdBy, intent.locator).as_dict(),
        "entity": "upload",
        **intent.model_dump(exclude_none=True),
        "ttl": int(intent.expiresAt.timestamp()) + KEPT_SECONDS,
    }
    table.gateway().write(_scope(intent.tenantLocator), table.put_new(item))


def get(tenant: str | None, user: str, locator: str) -> UploadIntent | None:
    """The intent of `tenant` (or, for none, of `user`) with this locator."""
    item = table.gateway().get(_scope(tenant), _key(tenant, user, locator))
    return UploadIntent.model_validate(item) if item is not None else None


def claim(intent: UploadIntent, at: datetime, request_id: str) -> UploadIntent:
    """Marks the intent used by `request_id`, on its version: of parallel requests one wins, the others get
    409 `upload.already_used`."""
    table.gateway().write(
        _scope(intent.tenantLocator),
        table.update(
            _key(intent.tenantLocator, intent.createdBy, intent.locator),
            {"usedAt": at, "usedBy": request_id},
            expected_version=intent.version,
            on_failure=lambda: codes.UPLOAD_ALREADY_USED(f"Upload {intent.locator} was used by another request"),
        ),
    )
    return intent.model_copy(update={"usedAt": at, "usedBy": request_id, "version": intent.version + 1})


def release(claimed: UploadIntent) -> None:
    """Unused again (the operation that claimed it failed), on the version its claim left."""
    table.gateway().write(
        _scope(claimed.tenantLocator),
        table.update(
            _key(claimed.tenantLocator, claimed.createdBy, claimed.locator),
            {},
            remove=("usedAt", "usedBy"),
            expected_version=claimed.version,
        ),
    )


def upload_url(intent: UploadIntent, expires_seconds: int) -> tuple[str, dict[str, str]]:
    checksum = base64.b64encode(bytes.fromhex(intent.sha256)).decode("ascii")
    return blobs.upload_url(_object_key(intent), intent.size, checksum, intent.contentType, expires_seconds)


def object_size(intent: UploadIntent) -> int | None:
    return blobs.object_size(_object_key(intent))


def object_chunks(intent: UploadIntent) -> Iterator[bytes]:
    return blobs.read_chunks(_object_key(intent), intent.size)


def delete_object(intent: UploadIntent) -> None:
    blobs.delete(_object_key(intent))
