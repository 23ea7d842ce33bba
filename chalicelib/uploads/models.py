"""An upload intent: the file a caller announced (its purpose, length and SHA-256), where it goes, until when."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel

from chalicelib.uploads.purposes import Purpose


class UploadIntent(BaseModel):
    locator: str
    purpose: Purpose
    tenantLocator: str | None = None
    """None: a configuration package for createTenant or validateConfig, which serves its maker alone."""
    createdBy: str
    size: int
    sha256: str
    """Lower-case hex."""
    contentType: str
    createdAt: datetime
    expiresAt: datetime
    """Until then the URL takes the file and an operation may use it."""
    usedAt: datetime | None = None
    usedBy: str | None = None
    """The request that used it."""
    version: int = 1


@dataclass(frozen=True)
class NewUpload:
    """An intent and where its file goes: the URL, the method and the (signed) headers to send it with."""

    intent: UploadIntent
    url: str
    method: str
    headers: dict[str, str]
