"""The app's HTTP middleware: Chalice's own answers rewritten into our error body.

Chalice answers some requests itself, before or after the view, with `{"Code", "Message"}`: 405 for a
method the path does not have, 415 for a Content-Type the route does not declare, 500 for what it
cannot route, and 400 when a view answers a binary type (a ZIP) to a request whose `Accept` header
names none (Python's urllib sends no Accept at all). Here the first three get the error body of
DECISIONS.md, and the file is answered as the view gave it: the deployed API declares `*/*` as binary
media type, so API Gateway delivers binary answers whatever the client accepts (infra/README.md).
"""
from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from chalice import Response

from chalicelib.core import codes
from chalicelib.core.ids import new_locator
from chalicelib.http.responses import json_response, to_json

MAX_ECHOED = 100
"""Characters of a request's own text (a Content-Type) an error message repeats."""

_offered_file: ContextVar[Response | None] = ContextVar("offered_file", default=None)

_CODES = {"MethodNotAllowedError": codes.REQUEST_METHOD_NOT_ALLOWED.code,
          "UnsupportedMediaType": codes.REQUEST_UNSUPPORTED_MEDIA_TYPE.code}


def offer_file(response: Response) -> None:
    """Remember the file a view answered, in case Chalice replaces it for want of an Accept header."""
    _offered_file.set(response)


def error_body_response(status: int, code: str, message: str, request_id: str | None = None) -> Response:
    request_id = request_id or new_locator()
    return json_response(to_json({"httpStatus": status, "code": code, "message": message, "requestId": request_id}),
                         status, request_id)


def framework_answers_in_our_shape(routes: dict[str, dict[str, Any]]) -> Callable[[Any, Any], Response]:
    """The middleware, for the app whose route table is `routes` (path -> method -> route entry)."""

    def middleware(event: Any, get_response: Callable[[Any], Response]) -> Response:
        token = _offered_file.set(None)
        try:
            response = get_response(event)
            offered = _offered_file.get()
        finally:
            _offered_file.reset(token)
        if not _is_chalice_error(response):
            return response
        if response.body["Code"] == "BadRequest" and offered is not None:
            return offered
        return _in_our_shape(response, event, routes)

    return middleware


def _is_chalice_error(response: Response) -> bool:
    return response.status_code >= 400 and isinstance(response.body, dict) and set(response.body) == {"Code", "Message"}


def _in_our_shape(response: Response, event: Any, routes: dict[str, dict[str, Any]]) -> Response:
    status, chalice_code = response.status_code, response.body["Code"]
    method = getattr(event, "method", "") or ""
    resource = ((getattr(event, "context", None) or {}).get("resourcePath")) or ""
    if status >= 500:
        return error_body_response(500, codes.INTERNAL_ERROR.code, "Internal error")
    if status == 405:
        allowed = response.headers.get("Allow", "")
        answer = error_body_response(405, _CODES[chalice_code], f"{method[:MAX_ECHOED]} is not a method of this path; "
                                                                 f"it has {allowed}")
        answer.headers["Allow"] = allowed
        return answer
    if status == 415:
        sent = (event.headers.get("content-type") or "application/json")[:MAX_ECHOED]
        entry = routes.get(resource, {}).get(method)
        accepted = ", ".join(entry.content_types) if entry is not None else "another type"
        return error_body_response(415, _CODES[chalice_code],
                                   f"This route does not take Content-Type {sent}; send {accepted}")
    return error_body_response(status, _CODES.get(chalice_code, codes.REQUEST_INVALID.code), "The request was refused")
