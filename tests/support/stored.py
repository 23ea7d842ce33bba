"""What the tests' in-process moto stores, read without a request: for a test's look at many partitions at once
(a Scan of the session's table walks every item every tenant of the process left)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
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
        return {"B": base64.b64decode(value.value)}
    if getattr(value, "type", None) == "BS":
        return {"BS": [base64.b64decode(member) for member in value.value]}
    raise TypeError(f"not a stored value: {value!r}")
