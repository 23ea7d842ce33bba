"""How a parsed table version is laid out for one-read lookups, and how a lookup reads it back.

- Lookup table: one item per key holding the row's other columns (`values`).
- Range table: one item per key holding every range of that key, sorted by start (`ranges`), so a
  range lookup is one read and a bisection. A key with more ranges than fit in one item spreads them
  over chunks; chunk 0 names where the others start (`chunkStarts`).
- The items of a version are spread over `shards` partitions by a stable hash of the key, so a large
  upload does not write into one partition.
- Constraint table: all rows, small enough to keep whole.
"""

from __future__ import annotations

import bisect
import json
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from chalicelib.core import codes
from chalicelib.core.errors import ErrorCode, FieldError
from chalicelib.tables.models import ParsedRow, TableSchema
from chalicelib.tables.parser import MAX_KEY_BYTES, MAX_REPORTED, canonical, invalid, row_key

KEYS_PER_SHARD = 5000
MAX_SHARDS = 32
MAX_ITEM_BYTES = 300_000
"""A stored item's budget (DynamoDB allows 400 KB, with the key and attribute names)."""


_Problems = list[tuple[ErrorCode, FieldError]]
"""(code, problem) pairs; the first problem's code is the answer's."""


@dataclass(frozen=True)
class RangeKey:
    """The ranges of one key, in chunks: `chunks[0]` is stored with `chunk_starts` (the start of
    every later chunk), later chunks on their own."""

    chunks: tuple[tuple[dict[str, Any], ...], ...]
    chunk_starts: tuple[Decimal, ...]


def shard_count(keys: int) -> int:
    return max(1, min(MAX_SHARDS, math.ceil(keys / KEYS_PER_SHARD)))


def shard_of(joined_key: str, shards: int) -> int:
    return zlib.crc32(joined_key.encode("utf-8")) % shards


def lookup_rows(rows: list[ParsedRow], schema: TableSchema) -> dict[str, dict[str, Any]]:
    """Joined key -> the row's non-key columns; 400 naming both rows when a key repeats."""
    key_names = {c.name for c in schema.key_columns}
    by_key: dict[str, dict[str, Any]] = {}
    first_row: dict[str, int] = {}
    problems: _Problems = []
    for row in rows:
        joined = _checked_key(row, schema, problems)
        if joined is None:
            continue
        if joined in first_row:
            problems.append(
                (
                    codes.TABLE_DUPLICATE_KEY,
                    FieldError(
                        f"rows[{row.number}]",
                        (f"row {row.number}: the key {_shown_key(row, schema)} is already on row {first_row[joined]}"),
                    ),
                )
            )
        else:
            first_row[joined] = row.number
            values = {name: value for name, value in row.values.items() if name not in key_names}
            if _size(values) > MAX_ITEM_BYTES:
                problems.append(
                    (
                        codes.TABLE_ROW_TOO_LARGE,
                        FieldError(
                            f"rows[{row.number}]", (f"row {row.number}: the row is larger than {MAX_ITEM_BYTES} bytes")
                        ),
                    )
                )
            by_key[joined] = values
        if len(problems) >= MAX_REPORTED:
            break
    _raise_if_any(problems, "rows that cannot be stored")
    return by_key


def range_rows(rows: list[ParsedRow], schema: TableSchema) -> dict[str, RangeKey]:
    """Joined key -> its ranges [start, end) sorted by start (an empty end is open); 400 naming the
    rows when a range is empty or reversed, or when two ranges of one key overlap."""
    start, end = schema.rangeStart or "", schema.rangeEnd
    key_names = {c.name for c in schema.key_columns}
    grouped: dict[str, list[ParsedRow]] = {}
    problems: _Problems = []
    for row in rows:
        joined = _checked_key(row, schema, problems)
        if joined is None:
            continue
        low, high = row.values[start], row.values.get(end) if end else None
        if high is not None and not low < high:
            problems.append(
                (
                    codes.TABLE_INVALID_RANGE,
                    FieldError(
                        f"rows[{row.number}].{end}",
                        (
                            f"row {row.number}: the range [{low}, {high}) is empty; "
                            "its end must be greater than its start"
                        ),
                    ),
                )
            )
        else:
            grouped.setdefault(joined, []).append(row)
    laid_out: dict[str, RangeKey] = {}
    for joined, members in grouped.items():
        members.sort(key=lambda row: row.values[start])
        for before, after in zip(members, members[1:]):
            before_end = before.values.get(end) if end else None
            if before_end is None or after.values[start] < before_end:
                problems.append(
                    (
                        codes.TABLE_OVERLAPPING_RANGES,
                        FieldError(
                            f"rows[{after.number}].{start}",
                            (
                                f"row {after.number}: the range starting at {after.values[start]} overlaps "
                                "the range of row "
                                f"{before.number} ({_shown_range(before, start, end)}) for the key "
                                f"{_shown_key(after, schema)}"
                            ),
                        ),
                    )
                )
        ranges = [{name: value for name, value in row.values.items() if name not in key_names} for row in members]
        laid_out[joined] = _chunked(ranges, start)
    _raise_if_any(problems[:MAX_REPORTED], "ranges that cannot be stored")
    return laid_out


def _chunked(ranges: list[dict[str, Any]], start: str) -> RangeKey:
    chunks: list[list[dict[str, Any]]] = [[]]
    used = 0
    for entry in ranges:
        size = _size(entry)
        if chunks[-1] and used + size > MAX_ITEM_BYTES:
            chunks.append([])
            used = 0
        chunks[-1].append(entry)
        used += size
    return RangeKey(tuple(tuple(chunk) for chunk in chunks), tuple(chunk[0][start] for chunk in chunks[1:]))


def chunk_for(chunk_starts: Sequence[Decimal], bound: Decimal) -> int:
    """Which chunk of a key holds the range a bound may fall in."""
    return bisect.bisect_right(list(chunk_starts), bound)


def find_range(ranges: Sequence[dict[str, Any]], bound: Decimal, schema: TableSchema) -> dict[str, Any] | None:
    """The range with start <= bound < end (no end: open-ended), or None."""
    start, end = schema.rangeStart or "", schema.rangeEnd
    position = bisect.bisect_right([entry[start] for entry in ranges], bound) - 1
    if position < 0:
        return None
    found = ranges[position]
    high = found.get(end) if end else None
    return found if high is None or bound < high else None


def constraint_values(
    rows: Sequence[Mapping[str, Any]], schema: TableSchema, filters: Sequence[str]
) -> dict[str, list[Any]]:
    """For the rows whose first columns match `filters` (one per column in the configuration's
    order; an empty filter matches anything), the values of every column: distinct, in row order,
    where the column says makeDistinct, else one per row."""
    matching = [
        row
        for row in rows
        if all(
            not wanted or canonical(row.get(column.name)) == wanted for wanted, column in zip(filters, schema.columns)
        )
    ]
    answer: dict[str, list[Any]] = {}
    for column in schema.columns:
        values = [row.get(column.name) for row in matching]
        if column.makeDistinct:
            seen: dict[str, Any] = {}
            for value in values:
                seen.setdefault(canonical(value), value)
            values = list(seen.values())
        answer[column.name] = values
    return answer


def _raise_if_any(problems: _Problems, what: str) -> None:
    if problems:
        raise invalid([problem for _, problem in problems], problems[0][0], what)


def _checked_key(row: ParsedRow, schema: TableSchema, problems: _Problems) -> str | None:
    joined = row_key(row.values, schema)
    if len(joined.encode("utf-8")) > MAX_KEY_BYTES:
        problems.append(
            (
                codes.TABLE_KEY_INVALID,
                FieldError(
                    f"rows[{row.number}]",
                    (f"row {row.number}: the key values are longer than {MAX_KEY_BYTES} bytes together"),
                ),
            )
        )
        return None
    return joined


def _shown_key(row: ParsedRow, schema: TableSchema) -> str:
    return "(" + ", ".join(canonical(row.values[c.name]) for c in schema.key_columns) + ")"


def _shown_range(row: ParsedRow, start: str, end: str | None) -> str:
    high = row.values.get(end) if end else None
    return f"[{row.values[start]}, {'open' if high is None else high})"


def _size(value: Any) -> int:
    return len(json.dumps(value, default=str))
