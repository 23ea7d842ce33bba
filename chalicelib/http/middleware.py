"""The app's HTTP middleware: every request observed (`observe_requests`), and Chalice's own answers
rewritten into our error body.

Chalice answers some requests itself, before or after the view, with `{"Code", "Message"}`: 405 for a
method the path does not have, 415 for a Content-Type the route does not declare, 500 for what it
cannot route, and 400 when a view answers a binary type (a ZIP) to a request whose `Accept` header
names none (Python's urllib sends no Accept at all). Here the first three get the error body of
DECISIONS.md, and the file is answered as the view gave it: the deployed API declares `*/*` as binary
media type, so API Gateway delivers binary answers whatever the client accepts (infra/README.md).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from chalice import Response

from chalicelib.core import codes
from chalicelib.core.ids import new_locator
from chalicelib.http.request import request_id as current_request_id
from chalicelib.http.request import reset_request_id, set_request_id
from chalicelib.http.responses import json_response, to_json
from chalicelib.runtime import observability

MAX_ECHOED = 100
"""Characters of a request's own text (a Content-Type) an error message repeats."""

_offered_file: ContextVar[Response | None] = ContextVar("offered_file", default=None)

_CODES = {
    "MethodNotAllowedError": codes.REQUEST_METHOD_NOT_ALLOWED.code,
    "UnsupportedMediaType": codes.REQUEST_UNSUPPORTED_MEDIA_TYPE.code,
}


def offer_file(response: Response) -> None:
    """Remember the file a view answered, in case Chalice replaces it for want of an Accept header."""
    _offered_file.set(response)


def observe_requests(event: Any, get_response: Callable[[Any], Response]) -> Response:
    """The outermost middleware: gives the request its id (the answer's `requestId` and `X-Request-Id`, the
    correlation id of its log lines, its metrics and the jobs it enqueues), traces it, and emits its metrics:
    `Requests` and `Latency` by `route` (method and resource path) and `status`, and for an error answer
    `Errors` by `route` and `code` (the error body's)."""
    request_id = new_locator()
    resource = (getattr(event, "context", None) or {}).get("resourcePath") or ""
    route = f"{getattr(event, 'method', '') or ''} {resource}"
    started = time.perf_counter()
    token = set_request_id(request_id)
    answered: list[Response] = []
    try:
        with observability.invocation(request_id, getattr(event, "lambda_context", None), route=route):
            try:
                answered.append(observability.traced("api_handler", lambda: get_response(event), route=route))
            finally:
                _emit_request(route, answered[0] if answered else None, (time.perf_counter() - started) * 1000)
    finally:
        reset_request_id(token)
    return answered[0]


def _emit_request(route: str, response: Response | None, elapsed_ms: float) -> None:
    status = response.status_code if response is not None else 500
    observability.emit(
        {"Requests": (1, observability.COUNT), "Latency": (elapsed_ms, observability.MILLISECONDS)},
        {"route": route, "status": str(status)},
        rollups=({"status": str(status)},),
    )
    if status >= 400:
        code = _error_code(response) if response is not None else codes.INTERNAL_ERROR.code
        observability.emit(
            {"Errors": (1, observability.COUNT)},
            {"route": route, "code": code},
            rollups=({"code": code},),
            status=status,
        )


def _error_code(response: Response) -> str:
    """The `code` of an error answer's body (ours, or Chalice's `Code` when one slipped through)."""
    body = response.body
    try:
        parsed = json.loads(body) if isinstance(body, (str, bytes)) else body
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return str(parsed.get("code") or parsed.get("Code") or "unknown")
    return "unknown"


def error_body_response(status: int, code: str, message: str, request_id: str | None = None) -> Response:
    request_id = request_id or current_request_id() or new_locator()
    return json_response(
        to_json({"httpStatus": status, "code": code, "message": message, "requestId": request_id}), status, request_id
    )


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
        answer = error_body_response(
            405, _CODES[chalice_code], f"{method[:MAX_ECHOED]} is not a method of this path; it has {allowed}"
        )
        answer.headers["Allow"] = allowed
        return answer
    if status == 415:
        sent = (event.headers.get("content-type") or "application/json")[:MAX_ECHOED]
        entry = routes.get(resource, {}).get(method)
        accepted = ", ".join(entry.content_types) if entry is not None else "another type"
        return error_body_response(
            415, _CODES[chalice_code], f"This route does not take Content-Type {sent}; send {accepted}"
        )
    return error_body_response(status, _CODES.get(chalice_code, codes.REQUEST_INVALID.code), "The request was refused")
