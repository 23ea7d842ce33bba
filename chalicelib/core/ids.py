"""Locators: ULIDs (sortable by creation) for records, UUIDs for tenants and users."""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime

from ulid import ULID


def new_locator() -> str:
    return str(ULID())


def derived_locator(moment: datetime, seed: str) -> str:
    """A ULID of `moment` whose random part is derived from `seed`: the same seed, the same locator (a
    job a retried step enqueues again is the same job)."""
    milliseconds = int(moment.timestamp() * 1000)
    return str(ULID.from_bytes(milliseconds.to_bytes(6, "big") + hashlib.sha256(seed.encode()).digest()[:10]))


def new_uuid_locator() -> str:
    """A UUID-shaped locator that still sorts by creation time (a ULID in UUID form)."""
    return str(ULID().to_uuid())


def new_tenant_locator() -> str:
    return str(uuid.uuid4())


def is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text.lower()
    except ValueError:
        return False
