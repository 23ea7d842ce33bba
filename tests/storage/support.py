"""Helpers of the storage tests: items in a tenant's key space."""

from __future__ import annotations

from typing import Any

from chalicelib.storage import keys
from chalicelib.storage.keys import Key


def key(tenant: str, record: str, sk: str = keys.ROOT) -> Key:
    return Key(f"{keys.tenant_scope(tenant)}TEST#{record}", sk)


def item(tenant: str, record: str, sk: str = keys.ROOT, **attributes: Any) -> dict[str, Any]:
    return {**key(tenant, record, sk).as_dict(), "entity": "test", **attributes}
