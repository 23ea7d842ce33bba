"""Locators: ULIDs (sortable by creation) for records, UUIDs for tenants and users."""
from __future__ import annotations

import uuid

from ulid import ULID


def new_locator() -> str:
    return str(ULID())


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
