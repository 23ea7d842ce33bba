"""Reading the current request: body and query parsed into pydantic models, errors as 400s."""

from __future__ import annotations

from collections.abc import Iterator
from contextvars import ContextVar
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any, TypeVar

import simplejson
from pydantic import BaseModel, ValidationError

from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError, FieldError

M = TypeVar("M", bound=BaseModel)

_EARLIEST = datetime.min.replace(tzinfo=timezone.utc) + timedelta(days=1)
_LATEST = datetime.max.replace(tzinfo=timezone.utc) - timedelta(days=1)

_request: ContextVar[Any] = ContextVar("chalice_request")
_context: ContextVar[CallContext] = ContextVar("call_context")
_request_id: ContextVar[str | None] = ContextVar("request_id", default=None)


def capture_request(event: Any, get_response: Any) -> Any:
    """Chalice HTTP middleware: keeps the current request where @endpoint can read it."""
    token = _request.set(event)
    try:
        return get_response(event)
    finally:
        _request.reset(token)


def current_request() -> Any:
    return _request.get()


def request_id() -> str | None:
    """The id of the request being answered (its answer's `requestId`, its logs' and metrics' correlation
    id), set by the outermost middleware (`middleware.observe_requests`)."""
    return _request_id.get()


def set_request_id(value: str | None) -> Any:
    return _request_id.set(value)


def reset_request_id(token: Any) -> None:
    _request_id.reset(token)


def request_context() -> CallContext:
    """The CallContext that @endpoint built for this request."""
    return _context.get()


def set_context(ctx: CallContext) -> Any:
    return _context.set(ctx)


def reset_context(token: Any) -> None:
    _context.reset(token)


def raw_body() -> bytes:
    return current_request().raw_body or b""


def header(name: str) -> str | None:
    headers = current_request().headers or {}
    return headers.get(name) or headers.get(name.lower())


def content_type() -> str:
    return (header("content-type") or "").split(";")[0].strip().lower()


def json_value() -> Any:
    """The body as JSON, numbers as Decimal; 400 when it is not JSON, or holds what no route can keep
    (see `refuse_unkeepable`)."""
    body = raw_body()
    if not body.strip():
        raise codes.REQUEST_BODY_MISSING("A JSON request body is required")
    try:
        value = simplejson.loads(body, use_decimal=True)
    except RecursionError:
        raise _too_deep() from None
    except (ValueError, UnicodeDecodeError) as error:
        raise codes.REQUEST_MALFORMED_JSON(f"The request body is not valid JSON: {_json_problem(error)}") from None
    refuse_unkeepable(value)
    return value


def refuse_unkeepable(value: Any) -> None:
    """400 for JSON that no route could store or answer: nested deeper than MAX_JSON_DEPTH, a string
    with a lone surrogate (`"\\ud800"` is valid JSON but no UTF-8 text), a number DynamoDB cannot
    hold (NaN, Infinity, beyond its exponent range, more than 38 significant digits)."""
    pending: list[tuple[Any, int, str]] = [(value, 0, "")]
    while pending:
        item, depth, path = pending.pop()
        if isinstance(item, (dict, list)):
            if depth == MAX_JSON_DEPTH:
                raise _too_deep()
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                if isinstance(key, str) and not _is_text(key):
                    raise _not_text(path or "body")
                pending.append((child, depth + 1, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, str):
            if not _is_text(item):
                raise _not_text(path or "body")
        elif isinstance(item, (Decimal, float, int)) and not isinstance(item, bool) and not _is_storable_number(item):
            raise codes.REQUEST_NUMBER_OUT_OF_RANGE(
                "The request body holds a number that cannot be stored",
                field_errors=[
                    FieldError(
                        path or "body",
                        "must be a finite number of at most 38 significant digits, between 1E-130 and 9.9E+125 in size",
                    )
                ],
            )


MAX_JSON_DEPTH = 32
"""Objects and arrays nest at most this deep in a request body: the depth DynamoDB stores a document to."""


def _too_deep() -> DomainError:
    return codes.REQUEST_TOO_DEEP(f"The request body nests objects and arrays more than {MAX_JSON_DEPTH} deep")


def _not_text(path: str) -> DomainError:
    return codes.REQUEST_MALFORMED_TEXT(
        "The request body holds a string that is not Unicode text (a lone surrogate escape)",
        field_errors=[FieldError(path, "must be Unicode text")],
    )


def _is_text(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_storable_number(number: Decimal | float | int) -> bool:
    if isinstance(number, int):
        return abs(number) < 10**38
    if isinstance(number, float) or not number.is_finite():
        return False
    if number.is_zero():
        return True
    significant = "".join(map(str, number.as_tuple().digits)).rstrip("0")
    return len(significant) <= 38 and -130 <= number.adjusted() <= 125


def _json_problem(error: Exception) -> str:
    if isinstance(error, simplejson.JSONDecodeError):
        return f"{error.msg} at line {error.lineno} column {error.colno}"
    return "not UTF-8 text"


def uploaded_file(part: str = "file") -> bytes:
    """An uploaded file: the raw body, or the part named `part` of a `multipart/form-data` body."""
    if content_type() != "multipart/form-data":
        return raw_body()
    boundary = _multipart_boundary()
    for headers, content in _multipart_parts(raw_body(), boundary):
        if _disposition_name(headers) == part:
            return content
    raise codes.REQUEST_FILE_MISSING(f"The multipart body has no part named '{part}'")


def multipart_fields() -> dict[str, str]:
    """The parts of a `multipart/form-data` body as text fields by name (a file part is its content)."""
    fields: dict[str, str] = {}
    for headers, content in _multipart_parts(raw_body(), _multipart_boundary()):
        name = _disposition_name(headers)
        if name is None:
            raise codes.REQUEST_MALFORMED_MULTIPART("A multipart part has no name")
        try:
            fields[name] = content.decode("utf-8")
        except UnicodeDecodeError:
            raise codes.REQUEST_MALFORMED_MULTIPART(f"The multipart part '{name}' is not UTF-8 text") from None
    return fields


def _multipart_boundary() -> bytes:
    for parameter in (header("content-type") or "").split(";")[1:]:
        name, _, value = parameter.strip().partition("=")
        if name.strip().lower() == "boundary" and value.strip().strip('"'):
            return value.strip().strip('"').encode("latin-1")
    raise codes.REQUEST_MALFORMED_MULTIPART("The multipart body has no boundary")


def _multipart_parts(body: bytes, boundary: bytes) -> list[tuple[bytes, bytes]]:
    """(headers, content) of each part (RFC 7578): parts are separated by CRLF--boundary; the first
    delimiter may start the body, the last one is followed by `--`."""
    delimiter = b"--" + boundary
    first = body.find(b"\r\n" + delimiter)
    start = 0 if body.startswith(delimiter) else first + 2
    if first < 0 and start != 0:
        raise codes.REQUEST_MALFORMED_MULTIPART("The multipart body does not match its boundary")
    parts: list[tuple[bytes, bytes]] = []
    position = start + len(delimiter)
    while not body.startswith(b"--", position):
        end = body.find(b"\r\n" + delimiter, position)
        if end < 0:
            raise codes.REQUEST_MALFORMED_MULTIPART("The multipart body is not terminated")
        position += 2 if body.startswith(b"\r\n", position) else 0
        separator = body.find(b"\r\n\r\n", position, end)
        if separator < 0:
            raise codes.REQUEST_MALFORMED_MULTIPART("A multipart part has no header block")
        parts.append((body[position:separator], body[separator + 4 : end]))  # one copy of a file's content
        position = end + 2 + len(delimiter)
    return parts


def _disposition_name(headers: bytes) -> str | None:
    for line in headers.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        if name.strip().lower() != "content-disposition":
            continue
        for parameter in value.split(";")[1:]:
            key, _, text = parameter.strip().partition("=")
            if key.strip().lower() == "name":
                return text.strip().strip('"')
    return None


def query_as(model: type[M]) -> M:
    """Query parameters into `model`; list-typed fields take every repeated value."""
    params = current_request().query_params  # a chalice MultiDict; None without a query string
    values: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        key = field.alias or name
        if params is not None and key in params:
            is_list = getattr(field.annotation, "__origin__", None) is list or "list[" in str(field.annotation)
            values[key] = params.getlist(key) if is_list else params[key]
    return validate(model, values, source="query")


def validate(model: type[M], value: Any, source: str = "body") -> M:
    try:
        parsed = model.model_validate(value)
    except ValidationError as error:
        raise codes.REQUEST_INVALID(f"The request {source} is invalid", field_errors=field_errors(error)) from None
    except OverflowError:  # a validator moved a datetime past year 1 or 9999 (to UTC)
        raise _dates_out_of_range(source, []) from None
    far = list(_far_datetimes(parsed, ""))
    if far:
        raise _dates_out_of_range(source, far)
    return parsed


def _far_datetimes(value: Any, path: str) -> Iterator[str]:
    """The paths of datetimes within a day of datetime's limits: no time zone could show them, and
    arithmetic on them overflows."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        if not _EARLIEST <= moment <= _LATEST:
            yield path or "body"
    elif isinstance(value, BaseModel):
        for name, info in type(value).model_fields.items():
            yield from _far_datetimes(getattr(value, name), f"{path}.{info.alias or name}".lstrip("."))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _far_datetimes(item, f"{path}.{index}".lstrip("."))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _far_datetimes(item, f"{path}.{key}".lstrip("."))


def _dates_out_of_range(source: str, paths: list[str]) -> DomainError:
    return codes.REQUEST_DATE_OUT_OF_RANGE(
        f"The request {source} holds a date at the edge of the calendar (years 1 to 9999)",
        field_errors=[FieldError(path, "must lie a day or more inside the years 1 to 9999") for path in paths],
    )


def field_errors(error: ValidationError) -> list[FieldError]:
    """Pydantic's errors as field paths and messages, never echoing the input value."""
    return [
        FieldError(".".join(str(part) for part in item["loc"]) or "body", item["msg"])
        for item in error.errors(include_input=False, include_url=False)
    ]


def decimal_or_none(text: str | None) -> Decimal | None:
    return Decimal(text) if text is not None else None


def uploaded_file_name(part: str = "file") -> str | None:
    """The `filename` the multipart part named `part` declares (None for a raw body, or without one)."""
    if content_type() != "multipart/form-data":
        return None
    for headers, _ in _multipart_parts(raw_body(), _multipart_boundary()):
        if _disposition_name(headers) == part:
            return _disposition_parameter(headers, "filename")
    return None


def _disposition_parameter(headers: bytes, wanted: str) -> str | None:
    for line in headers.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        if name.strip().lower() != "content-disposition":
            continue
        for parameter in value.split(";")[1:]:
            key, _, text = parameter.strip().partition("=")
            if key.strip().lower() == wanted:
                return text.strip().strip('"')
    return None
