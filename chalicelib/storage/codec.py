"""Python values <-> DynamoDB attribute values. Numbers are Decimal both ways, never float."""

from __future__ import annotations

import json
import zlib
from datetime import date, datetime
from decimal import Decimal, DecimalException
from enum import Enum
from functools import lru_cache
from typing import Any

import simplejson

from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.errors import DomainError

KEY_ATTRIBUTES = frozenset({"PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK"})


@lru_cache(maxsize=1)
def _serializer() -> Any:
    from boto3.dynamodb.types import TypeSerializer

    return TypeSerializer()


@lru_cache(maxsize=1)
def _deserializer() -> Any:
    from boto3.dynamodb.types import TypeDeserializer

    return TypeDeserializer()


def plain(value: Any) -> Any:
    """Reduce a value to what DynamoDB stores: str, Decimal, bool, None, list, dict."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, Decimal)):
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, datetime):
        return isoformat(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Enum):
        return plain(value.value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    if hasattr(value, "model_dump"):
        return plain(value.model_dump(by_alias=True))
    raise TypeError(f"cannot store a {type(value).__name__}")


class Document:
    """A value (an element tree, a transaction's charges) stored as ONE binary attribute holding its JSON, zlib
    compressed when that pays, rather than as nested DynamoDB maps and lists: botocore parses a map node by
    node, and this codec writes, sizes and reads one the same way, where one document is one `json.dumps`
    and one `json.loads` (benchmarks/README.md, "Issue 28 at stop 44"). `deserialize` gives the plain
    value back (numbers Decimal, as a map's), so a reader cannot tell the two shapes apart; a value stored as
    maps before is read as it was."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


STORED_AS_DOCUMENTS: dict[str, tuple[str, ...]] = {"transaction": ("element", "charges"), "segment": ("element",)}
"""By a record's `entity`, the attributes it stores as documents (policies/repository.py writes them so: an element
tree, a transaction's charges). Whoever rewrites such an attribute in a stored record (compliance's anonymization)
writes a Document again (`as_stored`); a map stored before reads the same."""


def as_stored(entity: Any, changes: dict[str, Any]) -> dict[str, Any]:
    """`changes` to a stored record of `entity`, those of its STORED_AS_DOCUMENTS that hold something as Documents."""
    names = STORED_AS_DOCUMENTS.get(entity) if isinstance(entity, str) else None
    if not names:
        return changes
    return {name: Document(value) if name in names and value else value for name, value in changes.items()}


DOCUMENT_JSON = b"\x01"
DOCUMENT_ZLIB = b"\x02"
"""The first byte of a document's binary attribute: its JSON as UTF-8, or zlib-compressed (no other binary
attribute is stored)."""
COMPRESS_FROM = 2048
"""A document's JSON is compressed from this many bytes (smaller ones save too little to pay for it)."""


def _encoded(value: Any) -> bytes:
    try:
        text = simplejson.dumps(
            value,
            default=_json_default,
            use_decimal=False,
            separators=(",", ":"),
            allow_nan=False,
            ensure_ascii=False,
        ).encode("utf-8")
    except ValueError:  # NaN or Infinity in a float
        raise _unstorable_number() from None
    return document_content(text)


def document_content(text: bytes) -> bytes:
    """The binary attribute of a document whose JSON (UTF-8) is `text`: compressed from COMPRESS_FROM bytes."""
    if len(text) < COMPRESS_FROM:
        return DOCUMENT_JSON + text
    return DOCUMENT_ZLIB + zlib.compress(text, 1)


def document_json(content: bytes) -> bytes | None:
    """The JSON (UTF-8) a document's binary attribute holds; None for a binary value that is no document."""
    marker = content[:1]
    if marker == DOCUMENT_ZLIB:
        return zlib.decompress(content[1:])
    return content[1:] if marker == DOCUMENT_JSON else None


def _json_default(value: Any) -> Any:
    """What JSON does not hold, as `plain` reduces it; a Decimal written as the number DynamoDB would store."""
    if isinstance(value, Decimal):
        return simplejson.RawJSON(_serializer()._serialize_n(value))
    if isinstance(value, datetime):
        return isoformat(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (set, frozenset)):
        return list(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(by_alias=True)
    raise TypeError(f"cannot store a {type(value).__name__}")


def _decoded(content: bytes) -> Any:
    text = zlib.decompress(content[1:]) if content[:1] == DOCUMENT_ZLIB else content[1:]
    return json.loads(text, parse_float=Decimal, parse_int=Decimal)


def serialize(item: dict[str, Any]) -> dict[str, Any]:
    try:
        return {str(k): _attribute(v) for k, v in item.items()}
    except DecimalException:
        raise _unstorable_number() from None


def serialize_value(value: Any) -> dict[str, Any]:
    try:
        return _attribute(value)
    except DecimalException:
        raise _unstorable_number() from None


def _attribute(value: Any) -> dict[str, Any]:
    """boto3's TypeSerializer of `plain(value)`, in one pass over the value and without its type probing
    of every value (a third of a billing job's own CPU was serialising its items that way). The exact types
    a stored item is made of are looked up first (an auto-renewal serialises some 800 values a renewal);
    their subclasses (a str enum) and the rest take the checks below."""
    kind = type(value)
    if kind is str:
        return {"S": value}
    if kind is Document:
        return {"B": _encoded(value.value)}
    if kind is dict:
        return {"M": {str(k): _attribute(v) for k, v in value.items()}}
    if kind is Decimal:
        return {"N": _serializer()._serialize_n(value)}  # boto3's: its context's traps, no NaN or Infinity
    if kind is list:
        return {"L": [_attribute(v) for v in value]}
    if kind is bool:
        return {"BOOL": value}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bool):
        return {"BOOL": value}
    if value is None:
        return {"NULL": True}
    if isinstance(value, Decimal):
        return {"N": _serializer()._serialize_n(value)}  # boto3's: its context's traps, no NaN or Infinity
    if isinstance(value, dict):
        return {"M": {str(k): _attribute(v) for k, v in value.items()}}
    if isinstance(value, (list, tuple, set, frozenset)):
        return {"L": [_attribute(v) for v in value]}
    return _attribute(plain(value))  # an int, float, datetime, date, enum or model: one of the above


def _unstorable_number() -> DomainError:
    """DynamoDB stores numbers of at most 38 significant digits, magnitudes from 1E-130 to below 1E+126
    (boto3's serializer traps anything else); only a number a client sent can be another."""
    return codes.REQUEST_NUMBER_OUT_OF_RANGE(
        "A number has more than 38 significant digits or is too large or too small to store"
    )


MAX_ITEM_BYTES = 400 * 1024
"""DynamoDB's limit on one item, as `item_size` counts it."""


def item_size(attributes: dict[str, Any]) -> int:
    """The size DynamoDB counts for serialized attributes (its "Item sizes and formats"): each attribute's name
    and value, a string's UTF-8 bytes, a number's one byte per two significant digits and one more, a list or
    map 3 bytes and each element one more (a map's keys are names), a boolean or null one byte."""
    return sum(len(name.encode("utf-8")) + _value_size(value) for name, value in attributes.items())


def _value_size(value: dict[str, Any]) -> int:
    [(kind, content)] = value.items()
    if kind == "S":
        return len(content.encode("utf-8"))
    if kind == "N":
        significant = content.lstrip("+-").upper().split("E", 1)[0].replace(".", "").strip("0")
        return (len(significant) + 1) // 2 + 1
    if kind == "M":
        return 3 + sum(len(name.encode("utf-8")) + 1 + _value_size(each) for name, each in content.items())
    if kind == "L":
        return 3 + sum(1 + _value_size(each) for each in content)
    if kind in ("SS", "NS", "BS"):
        return sum(_value_size({kind[0]: each}) for each in content)
    if kind == "B":
        return len(content)
    return 1  # BOOL, NULL


def deserialize(item: dict[str, Any]) -> dict[str, Any]:
    return {k: _value(v) for k, v in item.items()}


def _value(attribute: dict[str, Any]) -> Any:
    """boto3's TypeDeserializer, the kinds our items hold read without its method lookup per value (an
    auto-renewal reads some 1,300 values a renewal); the sets and binaries, and anything malformed, by it."""
    if len(attribute) == 1:
        [(kind, content)] = attribute.items()
        if kind == "S":
            return content
        if kind == "M":
            return {k: _value(v) for k, v in content.items()}
        if kind == "N":
            return _deserializer()._deserialize_n(content)
        if kind == "L":
            return [_value(v) for v in content]
        if kind == "BOOL":
            return content
        if kind == "NULL":
            return None
        if kind == "B" and content[:1] in (DOCUMENT_JSON, DOCUMENT_ZLIB):
            return _decoded(content)
    return _deserializer().deserialize(attribute)


def without_keys(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in KEY_ATTRIBUTES}
