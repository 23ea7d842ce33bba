"""Schedule items from uploaded files: CSV (a header row naming flat data fields) and JSON (an array of
item data objects, or of `{"data": {...}}`). Pure.

CSV cells are text: an empty cell leaves the field out, a boolean field takes `true`/`false` (any case),
every other value goes to the data validator as the text it is (which reads numbers, dates and the rest
from text). A column with a `.` or `[` in its name, or naming a field whose type is a data type or a
list, is nested: CSV takes flat items only (spec part 1, Limits 2).
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Iterable, Iterator
from typing import Any

import simplejson

from chalicelib.core import codes
from chalicelib.core.errors import FieldError
from chalicelib.schedules.models import ScheduleDescription, flat_type

NESTING_MARKS = (".", "[", "]")


def decoded(content: bytes) -> str:
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise codes.SCHEDULE_FILE_INVALID("The file is not UTF-8 text") from None


def csv_rows(content: bytes, limit: int) -> tuple[list[str], list[list[str]]]:
    """The header and at most `limit + 1` rows of a CSV file (blank lines skipped). Decoding and
    splitting stop at that row, so a caller refuses a file of more than `limit` rows for the cost of
    `limit` rows, whatever the file's size."""
    rows = _rows(io.TextIOWrapper(io.BufferedReader(_BytesReader(content)), encoding="utf-8-sig", newline=""))
    header = next(rows, None)
    if header is None:
        raise codes.SCHEDULE_FILE_INVALID("The CSV has no header row")
    return checked_header(header), list(itertools.islice(rows, limit + 1))


class _BytesReader(io.RawIOBase):
    """Bytes read in place (io.BytesIO copies a `bytes` subclass whole)."""

    def __init__(self, content: bytes) -> None:
        super().__init__()
        self._view = memoryview(content)
        self._position = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        taken = self._view[self._position : self._position + len(buffer)]
        buffer[: len(taken)] = taken
        self._position += len(taken)
        return len(taken)


def _rows(lines: Iterable[str]) -> Iterator[list[str]]:
    try:
        for row in csv.reader(lines, strict=True):
            if any(cell.strip() for cell in row):
                yield row
    except csv.Error as error:
        raise codes.SCHEDULE_FILE_INVALID(f"The CSV is malformed: {error}") from None
    except UnicodeDecodeError:
        raise codes.SCHEDULE_FILE_INVALID("The file is not UTF-8 text") from None


def body_rows(text: str) -> list[list[str]]:
    """The rows of a piece of CSV that starts at a row boundary and holds no header."""
    return list(_rows(io.StringIO(text, newline="")))


def checked_header(header: list[str]) -> list[str]:
    names = [name.strip() for name in header]
    if not all(names):
        raise codes.SCHEDULE_FILE_INVALID("A column of the CSV header has no name")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise codes.SCHEDULE_FILE_INVALID(f"The CSV header names {', '.join(repeated)} more than once")
    return names


def check_flat(header: list[str], description: ScheduleDescription) -> None:
    """400 `schedule.nested_column` for a column naming a nested path, an object or a list field."""
    nested = [
        name
        for name in header
        if any(mark in name for mark in NESTING_MARKS)
        or (name in description.properties and not flat_type(description.properties[name]))
    ]
    if nested:
        raise codes.SCHEDULE_NESTED_COLUMN(
            f"CSV uploads take flat items only; nested or list columns: {', '.join(nested)}",
            field_errors=[FieldError(name, "is a nested or list field") for name in nested],
        )


def row_data(header: list[str], row: list[str], description: ScheduleDescription) -> dict[str, Any] | str:
    """The item data of one CSV row, or why the row cannot be one (a wrong number of cells)."""
    if len(row) != len(header):
        return f"has {len(row)} cells where the header has {len(header)}"
    data: dict[str, Any] = {}
    for name, cell in zip(header, row):
        if cell == "":
            continue
        prop = description.properties.get(name)
        base = prop["type"].rstrip("?") if isinstance(prop, dict) and isinstance(prop.get("type"), str) else None
        data[name] = cell.lower() == "true" if base == "boolean" and cell.lower() in ("true", "false") else cell
    return data


def header_length(start: bytes, *, at_end: bool) -> tuple[list[str], int]:
    """The header of a CSV file whose first bytes are `start`, and how many bytes it takes with its line
    break (and a UTF-8 byte order mark); 400 when `start` holds no complete header row."""
    bom = 3 if start.startswith(b"\xef\xbb\xbf") else 0
    ends = row_ends(start[bom:], 1, at_end=at_end)
    rows = body_rows(decoded(start[bom : bom + ends[0]])) if ends else []
    if not rows:
        raise codes.SCHEDULE_FILE_INVALID("The CSV has no header row (or a header longer than a chunk)")
    return checked_header(rows[0]), bom + ends[0]


def json_items(content: bytes) -> list[Any]:
    """The entries of a JSON array file, numbers as Decimal."""
    try:
        value = simplejson.loads(decoded(content), use_decimal=True)
    except (ValueError, RecursionError):
        raise codes.SCHEDULE_FILE_INVALID("The file is not valid JSON") from None
    if not isinstance(value, list):
        raise codes.SCHEDULE_FILE_INVALID("A JSON file of schedule items is an array of item data objects")
    return value


def json_item_data(entry: Any) -> dict[str, Any] | str:
    """The data of one JSON entry (`{...}` or `{"data": {...}}`), or why it is none."""
    if isinstance(entry, dict) and set(entry) == {"data"} and isinstance(entry["data"], dict):
        return dict(entry["data"])
    if isinstance(entry, dict):
        return dict(entry)
    return "is not an object"


def is_json(file_name: str, content_start: bytes) -> bool:
    """A JSON file by its name, else by its first character (`[`)."""
    if file_name.lower().endswith(".json"):
        return True
    if file_name.lower().endswith(".csv"):
        return False
    return content_start.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")


def row_ends(chunk: bytes, max_rows: int, *, at_end: bool) -> list[int]:
    """The byte positions just after each of the first `max_rows` whole CSV rows of `chunk` (which starts at
    a row boundary): a line break ends a row when it is outside a quoted cell (quotes inside cells are
    doubled, so after an even number of quotes). `at_end`: the chunk ends the file, so what follows its
    last line break is a row too."""
    ends: list[int] = []
    inside = False
    position = 0
    while len(ends) < max_rows:
        newline = chunk.find(b"\n", position)
        if newline < 0:
            break
        if chunk.count(b'"', position, newline) % 2:
            inside = not inside
        position = newline + 1
        if not inside:
            ends.append(position)
    last = ends[-1] if ends else 0
    if at_end and len(ends) < max_rows and chunk[last:].strip():
        ends.append(len(chunk))
    return ends
