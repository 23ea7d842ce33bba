"""Uploads (DECISIONS.md "Uploads"): an intent answers a presigned URL that takes exactly the announced file
for 15 minutes; an operation that names the upload gets its bytes once they are checked against the intent
(HeadObject for the length, then the SHA-256 of the stream), and uses it up.

The routes that take a file body take `?uploadLocator=` instead (http/contract.py, `Upload.purpose`): the
edge asks `referenced_file` here, through the port app.py wires (http/uploads.py). An operation whose body is
not a file (migration start, spec part 3: its JSON request) calls `referenced_file` itself with
`Purpose.MIGRATION` (migration/service.py), and names the purpose in its query model for the edge's 413 hint."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError
from chalicelib.core.ids import new_locator
from chalicelib.runtime import wiring
from chalicelib.runtime.observability import logger
from chalicelib.settings import settings
from chalicelib.uploads import repository
from chalicelib.uploads.models import NewUpload, UploadIntent
from chalicelib.uploads.purposes import Purpose, permissions_for

URL_SECONDS = 15 * 60
"""How long an upload's URL takes the file, and the upload waits for the operation that uses it."""
DEFAULT_CONTENT_TYPE = "application/octet-stream"


def create_upload(
    ctx: CallContext, purpose: Purpose, tenant: str | None, size: int, sha256: str, content_type: str | None
) -> NewUpload:
    """An intent for one file of `size` bytes whose SHA-256 is `sha256` (hex), and the URL to PUT it to. The
    caller needs access to `tenant` and a permission of the operation the file is for (purposes.py)."""
    allowed = permissions_for(purpose, tenant is not None)
    if allowed is None:
        raise codes.REQUEST_INVALID(
            f"A {purpose} upload is for a tenant",
            field_errors=[FieldError("tenantLocator", f"is required for a {purpose} upload")],
        )
    if tenant is not None and not ctx.principal.may_access(tenant):
        raise codes.AUTH_TENANT_FORBIDDEN("No access to this tenant")
    if not ctx.principal.may(*allowed):
        raise codes.AUTH_PERMISSION_DENIED(
            f"A {purpose} upload{' for a tenant' if tenant else ''} requires one of: {', '.join(allowed)}"
        )
    limit = settings().max_upload_object_bytes
    if size > limit:
        raise codes.UPLOAD_TOO_LARGE(f"The file is {size} bytes; an upload takes at most {limit}")
    now = _real_now()
    intent = UploadIntent(
        locator=new_locator(),
        purpose=purpose,
        tenantLocator=tenant,
        createdBy=ctx.user_locator,
        size=size,
        sha256=sha256.lower(),
        contentType=content_type or DEFAULT_CONTENT_TYPE,
        createdAt=now,
        expiresAt=now + timedelta(seconds=URL_SECONDS),
    )
    repository.add(intent)
    url, headers = repository.upload_url(intent, URL_SECONDS)
    return NewUpload(intent, url, "PUT", headers)


@contextmanager
def referenced_file(ctx: CallContext, purpose: str, locator: str) -> Iterator[bytes]:
    """The file of upload `locator` of the request's tenant (or, outside a tenant, of the caller), for an
    operation of `purpose`, while the operation runs in the `with` block: checked against its intent
    before anything reads it, and claimed for this request (one of parallel requests gets it, the others
    409). If the operation fails the upload is free again; once it succeeds it is used, and its object
    goes. Any mismatch is a 4xx, with the upload left as it was."""
    intent = _usable(ctx, Purpose(purpose), locator)
    content = _verified(intent)
    claimed = repository.claim(intent, _real_now(), ctx.request_id)
    try:
        yield content
    except BaseException:
        _release(claimed)
        raise
    _forget_object(claimed)


def _usable(ctx: CallContext, purpose: Purpose, locator: str) -> UploadIntent:
    intent = repository.get(ctx.tenant_locator, ctx.user_locator, locator)
    if intent is None:
        raise codes.NOT_FOUND["upload"](
            f"No upload {locator}" + (" for this tenant" if ctx.tenant_locator else " of yours for no tenant")
        )
    if intent.purpose != purpose:
        raise codes.UPLOAD_WRONG_PURPOSE(f"Upload {locator} is for a {intent.purpose}, not a {purpose}")
    if intent.usedAt is not None:
        raise codes.UPLOAD_ALREADY_USED(
            f"Upload {locator} was used at {isoformat(intent.usedAt)}; an upload serves one operation"
        )
    if _real_now() >= intent.expiresAt:
        raise codes.UPLOAD_EXPIRED(
            f"Upload {locator} expired at {isoformat(intent.expiresAt)}; make a new one with POST /uploads"
        )
    return intent


def _verified(intent: UploadIntent) -> bytes:
    """The object's bytes once its length (HeadObject, before reading any) and its SHA-256 (over the stream)
    are those of the intent."""
    size = repository.object_size(intent)
    if size is None:
        raise codes.UPLOAD_NOT_RECEIVED(f"No file was put to the URL of upload {intent.locator} yet")
    if size != intent.size:
        raise codes.UPLOAD_SIZE_MISMATCH(
            f"The file of upload {intent.locator} is {size} bytes; the upload announced {intent.size}"
        )
    digest, content = hashlib.sha256(), io.BytesIO()
    for chunk in repository.object_chunks(intent):
        digest.update(chunk)
        content.write(chunk)
    if digest.hexdigest() != intent.sha256:
        raise codes.UPLOAD_CHECKSUM_MISMATCH(
            f"The SHA-256 of the file of upload {intent.locator} is "
            f"{digest.hexdigest()}; the upload announced {intent.sha256}"
        )
    return content.getvalue()  # BytesIO hands over its buffer: the file is in memory once


def _release(claimed: UploadIntent) -> None:
    try:
        repository.release(claimed)
    except Exception:  # the operation's own error is the answer; the upload then stays used
        logger().exception("releasing an upload failed", extra={"upload": claimed.locator})


def _forget_object(used: UploadIntent) -> None:
    try:
        repository.delete_object(used)
    except Exception:  # the operation succeeded; the bucket's lifecycle rule removes the object within a day
        logger().exception("deleting a used upload's object failed", extra={"upload": used.locator})


def _real_now() -> datetime:
    """Uploads run on real time, as S3 checks its URLs: a test-clock tenant's business time is not theirs."""
    return wiring.clock().now()
