"""JSON with exact numbers: money is read as Decimal and written back digit for digit (54.00 stays 54.00),
never through a float."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any


def loads(text: str | bytes) -> Any:
    return json.loads(text, parse_float=Decimal)


def dumps(value: Any, indent: int | None = None) -> str:
    """`value` as JSON; Decimals as the numbers they are. With `indent`, one item a line."""
    return _dump(value, indent, 0)


def _dump(value: Any, indent: int | None, depth: int) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Decimal):
        return str(value) if value.is_finite() else json.dumps(str(value))
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, dict):
        parts = [
            f"{json.dumps(str(key), ensure_ascii=False)}: {_dump(item, indent, depth + 1)}"
            for key, item in value.items()
        ]
        return _join(parts, "{", "}", indent, depth)
    if isinstance(value, list | tuple):
        return _join([_dump(item, indent, depth + 1) for item in value], "[", "]", indent, depth)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _join(parts: list[str], opening: str, closing: str, indent: int | None, depth: int) -> str:
    if indent is None or not parts:
        return opening + ", ".join(parts) + closing
    inner = "\n" + " " * (indent * (depth + 1))
    return opening + inner + ("," + inner).join(parts) + "\n" + " " * (indent * depth) + closing
