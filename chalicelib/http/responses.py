"""Responses: JSON through simplejson so Decimal stays an exact number, never a float."""
from __future__ import annotations

from datetime import date, datetime
from typing import Any, Generic, TypeVar

import simplejson
from chalice import Response
from pydantic import BaseModel

from chalicelib.core.clock import isoformat
from chalicelib.core.errors import DomainError, TooManyRequests
from chalicelib.http.errors import status_of

JSON = "application/json"
T = TypeVar("T")


class Binary:
    """A file answer; `media_type` is what the route's description says it answers."""

    media_type = "application/octet-stream"

    def __init__(self, body: bytes | str, content_type: str | None = None, filename: str | None = None):
        self.body = body
        self.content_type = content_type or self.media_type
        self.filename = filename


class ZipFile(Binary):
    media_type = "application/zip"


class FieldErrorBody(BaseModel):
    field: str
    message: str


class ErrorBody(BaseModel):
    """Every error answer (DECISIONS.md, "Errors")."""

    httpStatus: int
    code: str
    message: str
    requestId: str
    fieldErrors: list[FieldErrorBody] | None = None


class SecretAnswer(Generic[T]):
    """An answer that carries a secret (a new token): sent once and never stored. A replay of its
    `X-Idempotency-Key` answers 409 naming `created` (what the request created, without the secret)."""

    def __init__(self, value: T, created: str):
        self.value = value
        self.created = created


def to_json(value: Any) -> str:
    return simplejson.dumps(_plain(value), use_decimal=True, default=_default, separators=(",", ":"))


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="python", by_alias=True, exclude_none=True)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return isoformat(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")


def render(value: Any, request_id: str, status: int = 200) -> Response:
    headers: dict[str, str | list[str]] = {"X-Request-Id": request_id}
    if value is None:
        return Response(body="", status_code=status, headers=headers)
    if isinstance(value, Binary):
        headers["Content-Type"] = value.content_type
        if value.filename:
            headers["Content-Disposition"] = f'attachment; filename="{value.filename}"'
        return Response(body=value.body, status_code=status, headers=headers)
    return json_response(to_json(value), status, request_id)


def json_response(body: str, status: int, request_id: str) -> Response:
    return Response(body=body, status_code=status, headers={"Content-Type": JSON, "X-Request-Id": request_id})


def error_response(error: DomainError, request_id: str) -> Response:
    status = status_of(error)
    body: dict[str, Any] = {"httpStatus": status, "code": error.code, "message": error.message,
                            "requestId": request_id}
    if error.field_errors:
        body["fieldErrors"] = [{"field": f.field, "message": f.message} for f in error.field_errors]
    response = json_response(to_json(body), status, request_id)
    if isinstance(error, TooManyRequests):
        response.headers["Retry-After"] = str(error.retry_after_seconds)
    return response
