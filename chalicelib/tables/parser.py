"""Uploaded table files: a ZIP holding one CSV, the CSV checked against a table's columns and parsed
to each column's dataType; and the canonical text of values, which makes lookup keys.

Rows are numbered as a spreadsheet shows them: the header is row 1. Every problem names its row and
column; up to MAX_REPORTED are reported at once (`fieldErrors` field `rows[<row>].<column>`).
"""

from __future__ import annotations

import csv
import io
import re
import uuid
import zipfile
from collections.abc import Callable, Sequence
from datetime import date
from decimal import Context, Decimal
from pathlib import PurePosixPath
from typing import Any

from chalicelib.core import codes
from chalicelib.core.clock import isoformat, parse_datetime
from chalicelib.core.errors import DomainError, ErrorCode, FieldError
from chalicelib.tables.models import Column, ParsedRow, TableSchema

MAX_UNCOMPRESSED_BYTES = 256 * 1024 * 1024
MAX_REPORTED = 20
MAX_KEY_BYTES = 1000
"""A joined key ends up in a sort key, which DynamoDB caps at 1,024 bytes."""


_INTEGER = re.compile(r"[+-]?\d+")
_INTEGER_BOUNDS = {"int": 2**31, "long": 2**63}
_DYNAMODB_DIGITS = 38
_IGNORED_NAMES = frozenset({".DS_Store"})
_EXACT = Context(prec=100)
"""Normalising never rounds what a stored number may hold (38 digits)."""


def read_zip(data: bytes) -> tuple[str, bytes]:
    """(file name, content) of the one CSV file in an uploaded ZIP; directories, `__MACOSX/` and
    `.DS_Store` entries are ignored."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        raise codes.TABLE_FILE_NOT_ZIP("The uploaded file is not a ZIP archive") from None
    with archive:
        entries = [
            info
            for info in archive.infolist()
            if not info.is_dir()
            and not info.filename.startswith("__MACOSX/")
            and PurePosixPath(info.filename).name not in _IGNORED_NAMES
        ]
        if len(entries) != 1 or not entries[0].filename.lower().endswith(".csv"):
            names = ", ".join(info.filename for info in entries) or "nothing"
            raise codes.TABLE_FILE_INVALID(f"The ZIP must hold exactly one .csv file; it holds {names}")
        (entry,) = entries
        if entry.file_size > MAX_UNCOMPRESSED_BYTES:
            raise codes.TABLE_FILE_TOO_LARGE(
                f"The CSV inflates to {entry.file_size} bytes; at most {MAX_UNCOMPRESSED_BYTES} are allowed"
            )
        try:
            with archive.open(entry) as stream:
                content = stream.read(MAX_UNCOMPRESSED_BYTES + 1)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as error:
            raise codes.TABLE_FILE_INVALID(f"{entry.filename}: the ZIP entry is corrupt ({error})") from None
    if len(content) > MAX_UNCOMPRESSED_BYTES:
        raise codes.TABLE_FILE_TOO_LARGE(f"The CSV inflates to more than {MAX_UNCOMPRESSED_BYTES} bytes")
    return PurePosixPath(entry.filename).name, content


def parse_csv(content: bytes, schema: TableSchema, table: str) -> list[ParsedRow]:
    """The data rows of a CSV whose header names exactly the schema's columns (any order), each
    value parsed to its column's dataType. Blank rows are skipped. An empty cell is "" in a string
    column and null elsewhere; key and range-start cells must not be empty."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise codes.TABLE_FILE_INVALID(f"The CSV is not UTF-8 text (byte {error.start})") from None
    records = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(records, None)
        if header is None:
            raise codes.TABLE_COLUMNS_MISMATCH("The CSV is empty: a header row naming the columns is required")
        columns = _columns_of_header([name.strip() for name in header], schema, table)
        required = frozenset({c.name for c in schema.key_columns} | {schema.rangeStart or ""})
        rows: list[ParsedRow] = []
        problems: list[FieldError] = []
        for number, record in enumerate(records, start=2):
            if not any(cell.strip() for cell in record):
                continue
            if len(record) != len(columns):
                problems.append(
                    FieldError(
                        f"rows[{number}]", f"row {number}: has {len(record)} cells; the header has {len(columns)}"
                    )
                )
            else:
                rows.append(ParsedRow(number, _parse_record(number, record, columns, required, problems)))
            if len(problems) >= MAX_REPORTED:
                break
    except csv.Error as error:
        raise codes.TABLE_FILE_INVALID(f"The CSV is malformed at line {records.line_num}: {error}") from None
    if problems:
        raise invalid(problems, codes.TABLE_INVALID_VALUE, "values that do not fit their column")
    return rows


def invalid(problems: list[FieldError], code: ErrorCode, what: str) -> DomainError:
    """One 400 for several problems (at most MAX_REPORTED are looked for): the message names the
    first, fieldErrors list them all."""
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return code(f"The CSV has {what}: {problems[0].message}{more}", field_errors=problems)


def _columns_of_header(header: list[str], schema: TableSchema, table: str) -> list[Column]:
    expected = [c.name for c in schema.columns]
    twice = sorted({name for name in header if header.count(name) > 1})
    missing = [name for name in expected if name not in header]
    unknown = [name for name in header if name not in expected]
    if twice or missing or unknown:
        problems = [
            f"missing {', '.join(missing)}" if missing else "",
            f"unknown {', '.join(repr(name) for name in unknown)}" if unknown else "",
            f"repeated {', '.join(twice)}" if twice else "",
        ]
        raise codes.TABLE_COLUMNS_MISMATCH(
            f"The CSV header does not match the columns of {schema.kind.value} {table} "
            f"({', '.join(expected)}): {'; '.join(p for p in problems if p)}",
            field_errors=[FieldError("rows[1]", "the header row names the columns")],
        )
    return [schema.column(name) for name in header]


def _parse_record(
    number: int, record: list[str], columns: list[Column], required: frozenset[str], problems: list[FieldError]
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for column, cell in zip(columns, record):
        try:
            value = parse_value(cell, column.dataType)
            if value is None and column.name in required:
                raise ValueError("a value is required")
            values[column.name] = value
        except ValueError as error:
            problems.append(
                FieldError(f"rows[{number}].{column.name}", f"row {number}, column '{column.name}': {error}")
            )
    return values


def parse_value(text: str, data_type: str) -> Any:
    """`text` as a value of `data_type`, in the form it is stored and answered: str for string, date
    (ISO), datetime (ISO UTC with Z) and guid; int for int and long; Decimal; bool. An empty cell is
    "" for string, None otherwise. ValueError saying what is wrong (long input is shortened)."""
    if data_type == "string":
        return text
    value = text.strip()
    if not value:
        return None
    parse = _PARSERS.get(data_type)
    if parse is None:
        raise ValueError(f"the column's dataType {data_type!r} is not supported")
    shown = repr(value if len(value) <= 40 else value[:37] + "...")
    try:
        return parse(value, data_type)
    except _Unfit as unfit:
        raise ValueError(f"{shown} {unfit}") from None
    except (ValueError, ArithmeticError):
        raise ValueError(f"{shown} is not a {data_type}") from None


class _Unfit(ValueError):
    """A value of the right form that still cannot be stored (out of range, too precise)."""


def _integer(value: str, data_type: str) -> int:
    if not _INTEGER.fullmatch(value):
        raise ValueError(value)
    number = int(value)
    if not -_INTEGER_BOUNDS[data_type] <= number < _INTEGER_BOUNDS[data_type]:
        raise _Unfit(f"is out of range for {data_type}")
    return number


def _decimal(value: str, _: str) -> Decimal:
    number = Decimal(value)
    if not number.is_finite():
        raise ValueError(value)
    if (
        len(number.normalize(_EXACT).as_tuple().digits) > _DYNAMODB_DIGITS
        or number
        and not (-130 < number.adjusted() < 126)
    ):
        raise _Unfit("has more digits or a larger magnitude than a stored number may")
    return number


def _boolean(value: str, _: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise ValueError(value)
    return value.lower() == "true"


_PARSERS: dict[str, Callable[[str, str], Any]] = {
    "int": _integer,
    "long": _integer,
    "decimal": _decimal,
    "boolean": _boolean,
    "date": lambda value, _: date.fromisoformat(value).isoformat(),
    "datetime": lambda value, _: isoformat(parse_datetime(value)),
    "guid": lambda value, _: str(uuid.UUID(value)),
}


def canonical(value: Any) -> str:
    """The one text of a parsed value (1.50 and 1.5 are both "1.5", booleans are "true"/"false"),
    for keys and for the options of constraint tables."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        text = format(value.normalize(_EXACT), "f")
        return "0" if text in ("-0", "0") else text
    return str(value)


def normalised(value: Any, data_type: str) -> str:
    """The canonical text of a value a caller gives (a filter, a data value): text is read as
    `data_type` where it can be, and kept as it is where it cannot (then it matches nothing typed)."""
    if isinstance(value, str):
        try:
            return canonical(parse_value(value, data_type))
        except ValueError:
            return value
    return canonical(value)


def join_key(parts: Sequence[str]) -> str:
    """Key values joined so that different lists never give the same text: `\\` and `|` are escaped,
    `|` separates."""
    return "|".join(part.replace("\\", "\\\\").replace("|", "\\|") for part in parts)


def row_key(values: dict[str, Any], schema: TableSchema) -> str:
    """The joined key of a parsed row."""
    return join_key([canonical(values[c.name]) for c in schema.key_columns])


def query_key(key: Sequence[str], schema: TableSchema) -> str:
    """The joined key of a lookup's `key` values (one per key column, in order), parsed as the row
    values were; 400 when they do not fit the key columns."""
    columns = schema.key_columns
    if len(key) != len(columns):
        names = ", ".join(c.name for c in columns) or "none"
        raise codes.TABLE_KEY_INVALID(
            f"The key needs {len(columns)} value(s), one per key column ({names}); {len(key)} given",
            field_errors=[FieldError("key", f"needs {len(columns)} value(s)")],
        )
    parts = []
    for index, (text, column) in enumerate(zip(key, columns)):
        try:
            parts.append(canonical(parse_value(text, column.dataType)))
        except ValueError as error:
            raise codes.TABLE_KEY_INVALID(
                f"key[{index}] (column '{column.name}'): {error}",
                field_errors=[FieldError(f"key[{index}]", str(error))],
            ) from None
    return join_key(parts)
