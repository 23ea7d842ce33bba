"""Responses: JSON through simplejson so Decimal stays an exact number, never a float."""

from __future__ import annotations

import base64
import gzip
import hashlib
from datetime import date, datetime
from typing import Any, Generic, TypeVar

import simplejson
from chalice import Response
from pydantic import BaseModel

from chalicelib.core.clock import isoformat
from chalicelib.core.errors import DomainError, TooManyRequests, Unavailable
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


class Static(Binary):
    """An answer the same for the whole process (the API's description, the docs page and its files):
    built once (keep the instance), sent with a validator and `Cache-Control: no-cache` (a browser keeps it
    and asks again with If-None-Match, answered 304 without a body), gzip-compressed to a request whose
    Accept-Encoding takes gzip. The ETag is weak: the plain and the compressed bodies share it."""

    def __init__(self, body: str, content_type: str | None = None):
        super().__init__(body, content_type)
        plain = body.encode("utf-8")
        self.etag = f'W/"{hashlib.sha256(plain).hexdigest()[:32]}"'
        self.compressed = gzip.compress(plain, compresslevel=6, mtime=0)


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


def static_response(value: Static, request_id: str, accept_encoding: str | None, if_none_match: str | None) -> Response:
    headers: dict[str, str | list[str]] = {
        "X-Request-Id": request_id,
        "Content-Type": value.content_type,
        "ETag": value.etag,
        "Cache-Control": "public, no-cache",
        "Vary": "Accept-Encoding",
    }
    if if_none_match is not None and _names_etag(if_none_match, value.etag):
        return Response(body="", status_code=304, headers=headers)
    if not takes_gzip(accept_encoding):
        return Response(body=value.body, status_code=200, headers=headers)
    return _Base64Response(body=value.compressed, status_code=200, headers={**headers, "Content-Encoding": "gzip"})


def _names_etag(if_none_match: str, etag: str) -> bool:
    """If-None-Match (RFC 9110 13.1.2) names `etag` by weak comparison, or is `*`."""
    named = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in named or etag.removeprefix("W/") in named


def takes_gzip(accept_encoding: str | None) -> bool:
    """Accept-Encoding (RFC 9110 12.5.3) takes gzip: named, or `*`, with a q-value above 0, and gzip not
    refused by name."""
    weights: dict[str, float] = {}
    for entry in (accept_encoding or "").split(","):
        name, *parameters = (part.strip() for part in entry.split(";"))
        weight = 1.0
        for parameter in parameters:
            key, _, number = parameter.partition("=")
            if key.strip().lower() == "q":
                try:
                    weight = float(number)
                except ValueError:
                    weight = 0.0
        if name:
            weights[name.lower()] = weight
    return weights.get("gzip", weights.get("*", 0.0)) > 0


class _Base64Response(Response):
    """A body of bytes answered base64-encoded whatever its Content-Type: Chalice encodes only the app's
    binary media types (application/json is none), and API Gateway, whose binary media types are `*/*`
    (infra/template.json), decodes it; so do `chalice local` and chalice's test client."""

    def to_dict(self, binary_types: list[str] | None = None) -> dict[str, Any]:
        answer: dict[str, Any] = super().to_dict(None)
        answer["body"] = base64.b64encode(self.body).decode("ascii")
        answer["isBase64Encoded"] = True
        return answer


def json_response(body: str, status: int, request_id: str) -> Response:
    return Response(body=body, status_code=status, headers={"Content-Type": JSON, "X-Request-Id": request_id})


def error_response(error: DomainError, request_id: str) -> Response:
    status = status_of(error)
    body: dict[str, Any] = {"httpStatus": status, "code": error.code, "message": error.message, "requestId": request_id}
    if error.field_errors:
        body["fieldErrors"] = [{"field": f.field, "message": f.message} for f in error.field_errors]
    response = json_response(to_json(body), status, request_id)
    if isinstance(error, TooManyRequests | Unavailable) and error.retry_after_seconds is not None:
        response.headers["Retry-After"] = str(error.retry_after_seconds)
    return response
