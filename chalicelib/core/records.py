"""What every stored record shares: it is one table item, which DynamoDB caps at 400 KB."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, Self, TypeVar

from chalicelib.core import codes

MAX_RECORD_BYTES = 300_000

T = TypeVar("T")


def packed(values: Iterable[T], size: Callable[[T], int], limit: int) -> list[list[T]]:
    """`values` in order, in consecutive groups whose sizes, each with one byte of separator, stay within `limit`
    (a value larger than `limit` stands alone): the pages a record's overflow is written in."""
    groups: list[list[T]] = []
    used = 0
    for value in values:
        length = size(value) + 1
        if not groups or used + length > limit:
            groups.append([])
            used = 0
        groups[-1].append(value)
        used += length
    return groups


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
