"""What every stored record shares: it is one table item, which DynamoDB caps at 400 KB."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, Self

from chalicelib.core import codes

MAX_RECORD_BYTES = 300_000


class Record(Protocol):
    def model_dump_json(self) -> str: ...


class VersionedRecord(Record, Protocol):
    """An aggregate root: `version` is its optimistic lock, `updatedAt`/`updatedBy` its last change."""

    version: int

    # pragma: no mutate block (a signature, never run: mutants of its defaults change nothing)
    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self: ...


def check_size(record: Record, *, code: str, noun: str) -> None:
    """413 `{code}.too_large` for a record that would not fit in one item."""
    size = len(record.model_dump_json())
    if size > MAX_RECORD_BYTES:
        raise codes.TOO_LARGE[code](f"The {noun} would take {size} bytes; at most {MAX_RECORD_BYTES} are allowed")
