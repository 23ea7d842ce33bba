"""The uploads API contract (our extension, DECISIONS.md "Uploads": API Gateway takes at most 10 MB a request)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import Field

from chalicelib.core.messages import Input, Response
from chalicelib.uploads.models import NewUpload
from chalicelib.uploads.purposes import Purpose

SHA256_EXAMPLE = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


class UploadRequest(Input):
    purpose: Purpose
    """What the file is for: a configuration package (createTenant, validateConfig, or a tenant's deploy and
    deployments/validate), a table, a schedule file, a migration or a document."""
    tenantLocator: UUID | None = None
    """The tenant of the operation; required but for a configuration package for createTenant or validateConfig."""
    size: Annotated[int, Field(ge=1)]
    """The file's length in bytes: the URL takes a body of exactly this length."""
    sha256: Annotated[str, Field(pattern=r"^[0-9a-fA-F]{64}$", examples=[SHA256_EXAMPLE])]
    """The SHA-256 of the file, in hex."""
    contentType: (
        Annotated[
            str,
            Field(
                min_length=1, max_length=200, pattern=r"^[\x21-\x7e]+(; ?[\x21-\x7e]+)*$", examples=["application/zip"]
            ),
        ]
        | None
    ) = None
    """The Content-Type the PUT sends (application/octet-stream when left out)."""


class UploadResponse(Response):
    uploadLocator: str
    """Name it as `?uploadLocator=` of the operation, with an empty body."""
    url: str
    """Where to send the file, within 15 minutes."""
    method: Literal["PUT"]
    headers: dict[str, str]
    """The headers the request must carry as they are (they are signed): Content-Length, Content-Type and
    x-amz-checksum-sha256."""
    expiresAt: datetime
    """Until then the URL takes the file, and an operation may use the upload."""

    @classmethod
    def of(cls, made: NewUpload) -> UploadResponse:
        return cls(
            uploadLocator=made.intent.locator,
            url=made.url,
            method="PUT",
            headers=made.headers,
            expiresAt=made.intent.expiresAt,
        )
