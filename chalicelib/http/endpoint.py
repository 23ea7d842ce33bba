"""@endpoint: the one wrapper every route goes through.

It authenticates (on real time), checks tenant access and then the permission, builds the CallContext
(whose `now` is the tenant's clock: clock/service.py, through runtime.wiring), honours
`X-Idempotency-Key`, turns DomainErrors into the error body, and serialises the answer. It is a
decorator rather than middleware because Chalice turns view exceptions into 500s before middleware
sees them.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from chalicelib.core import codes
from chalicelib.core.context import CallContext, Principal
from chalicelib.core.errors import DomainError, ErrorCode
from chalicelib.core.ids import is_uuid, new_locator
from chalicelib.core.permissions import grants
from chalicelib.http import auth, contract, uploads
from chalicelib.http.contract import Contract
from chalicelib.http.middleware import offer_file
from chalicelib.http.request import current_request, header, raw_body, reset_context, set_context
from chalicelib.http.request import request_id as current_request_id
from chalicelib.http.responses import (
    Binary,
    SecretAnswer,
    Static,
    error_response,
    json_response,
    render,
    static_response,
)
from chalicelib.runtime import idempotency, observability, wiring
from chalicelib.runtime.observability import logger
from chalicelib.settings import settings

SELF_SERVICE_SUFFIX = ".custom"
MAX_ECHOED = 200
ANONYMOUS = Principal("", "anonymous", frozenset(), frozenset())

_declared_permissions: set[str] = set()


@dataclass(frozen=True)
class EndpointSpec:
    permissions: tuple[str, ...]
    public: bool = False
    idempotent: bool = False
    status: int = 200
    errors: tuple[ErrorCode, ...] = ()
    """The error codes the route answers beyond those every route may (`catalogue.COMMON`)."""
    replay: Callable[..., Any] | None = None
    """A state move's answer rebuilt from what its committed transaction left (runtime/idempotency.py): the view
    that fetches the record the route moves, called with the same path (a create's: the record it created; and
    the move's `body`, when it takes one: a move whose answer depends on what it was asked, or that a replay
    finishes)."""
    replay_takes_body: bool = False
    creates: str | None = None
    """The entity a create route makes (with `replay`, the fetch of such a record): its guard keeps the created
    record's locator, so a replay of a lost answer answers that record as committed."""


ANY_ROUTE = (
    codes.AUTH_TOKEN_MISSING,
    codes.AUTH_TOKEN_INVALID,
    codes.AUTH_TOKEN_EXPIRED,
    codes.AUTH_TOKEN_REVOKED,
    codes.AUTH_PASSWORD_CHANGE_REQUIRED,
    codes.AUTH_PERMISSION_DENIED,
    codes.REQUEST_TOO_LARGE,
    codes.REQUEST_UNSUPPORTED_MEDIA_TYPE,
    codes.SERVICE_UNAVAILABLE,
    codes.TENANT_CODE_NOT_READY,
)
TENANT_ROUTE = (codes.AUTH_TENANT_FORBIDDEN, codes.TENANT_NOT_FOUND)
JSON_BODY = (
    codes.REQUEST_INVALID,
    codes.REQUEST_BODY_MISSING,
    codes.REQUEST_MALFORMED_JSON,
    codes.REQUEST_MALFORMED_TEXT,
    codes.REQUEST_TOO_DEEP,
    codes.REQUEST_NUMBER_OUT_OF_RANGE,
    codes.REQUEST_DATE_OUT_OF_RANGE,
)
FORM_BODY = (codes.REQUEST_MALFORMED_FORM,)
FILE_BODY = (codes.REQUEST_MALFORMED_MULTIPART, codes.REQUEST_FILE_MISSING)
QUERY = (codes.REQUEST_INVALID, codes.REQUEST_DATE_OUT_OF_RANGE)
BY_UPLOAD = (
    codes.NOT_FOUND["upload"],
    codes.UPLOAD_WRONG_PURPOSE,
    codes.UPLOAD_ALREADY_USED,
    codes.UPLOAD_EXPIRED,
    codes.UPLOAD_NOT_RECEIVED,
    codes.UPLOAD_SIZE_MISMATCH,
    codes.UPLOAD_CHECKSUM_MISMATCH,
    codes.REQUEST_INVALID,
)
"""What a route that takes `?uploadLocator=` in place of its file answers when the upload does not fit."""
IDEMPOTENT = (
    codes.IDEMPOTENCY_INVALID_KEY,
    codes.IDEMPOTENCY_KEY_REUSED,
    codes.IDEMPOTENCY_IN_PROGRESS,
    codes.IDEMPOTENCY_OTHER_CREDENTIAL,
)


def error_codes_of(
    spec: EndpointSpec, contract: Contract, tenant_route: bool, method: str, path_variables: bool
) -> list[ErrorCode]:
    """Every error code the route may answer: those of its own, and those its contract brings (a write
    may lose a race with another request or make a record larger than an item holds; a path variable's
    value, such as one holding an encoded `/`, can make the path another route's or none)."""
    answered: list[ErrorCode] = [] if spec.public else [*ANY_ROUTE]
    if path_variables:
        answered.extend([codes.ROUTE_NOT_FOUND, codes.REQUEST_METHOD_NOT_ALLOWED])
    if method.upper() != "GET" and not spec.public:
        answered.extend([codes.CONCURRENT_MODIFICATION, codes.RECORD_TOO_LARGE])
    if spec.public:
        answered.extend([codes.REQUEST_TOO_LARGE, codes.REQUEST_UNSUPPORTED_MEDIA_TYPE])
    if tenant_route and not spec.public:
        answered.extend(TENANT_ROUTE)
    if contract.body is not None:
        answered.extend(FILE_BODY if contract.body.encoding == "file" else JSON_BODY)
        if contract.body.encoding == "form":
            answered.extend(FORM_BODY)
        if contract.body.encoding == "multipart":
            answered.append(codes.REQUEST_MALFORMED_MULTIPART)
    if contract.query is not None:
        answered.extend(QUERY)
    if contract.upload_purpose is not None:
        answered.extend(BY_UPLOAD)
    if spec.idempotent:
        answered.extend(IDEMPOTENT)
    answered.extend(spec.errors)
    return list(dict.fromkeys(answered))


def declared_permissions() -> list[str]:
    """Every permission some route checks (the route table is complete once app.py is imported)."""
    return sorted(_declared_permissions)


def endpoint(
    *permissions: str,
    public: bool = False,
    idempotent: bool = False,
    status: int = 200,
    errors: Iterable[ErrorCode] = (),
    replay: Callable[..., Any] | None = None,
    creates: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Any one of `permissions` suffices. `group.custom` allows the call only on the caller's own
    `{locator}`. `replay` (with `idempotent`): the fetch route of the record a state move moves, whose view
    answers a replay of a key whose first answer was lost after its change committed; with `creates` (the
    entity a create route makes), the fetch route of the record it created, called with its locator.
    Routes whose body is a file (`body: Upload`) take bodies up to the upload limit instead of the JSON limit.
    The view's `body` and `query` parameters and its return annotation are the rest of its contract
    (`chalicelib.http.contract`); `status` is its answer's status, `errors` the codes it may answer."""
    if not permissions and not public:
        raise ValueError("an endpoint needs a permission or public=True")
    if replay is not None and not idempotent:
        raise ValueError("replay= rebuilds an idempotent route's lost answer: the route needs idempotent=True")
    if creates is not None and replay is None:
        raise ValueError("creates= names what a create route makes, to answer it with replay=: the route needs both")
    replayed = getattr(replay, "__wrapped__", replay)
    spec = EndpointSpec(
        tuple(permissions),
        public,
        idempotent,
        status,
        tuple(errors),
        replayed,
        replayed is not None and "body" in inspect.signature(replayed).parameters,
        creates,
    )
    _declared_permissions.update(permissions)

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(view)
        def wrapper(**path: str) -> Any:
            request_id = current_request_id() or new_locator()
            try:
                return _handle(view, spec, path, request_id)
            except DomainError as error:
                error.message = _shortened_echoes(error.message, path)
                if undeclared_error_seen is not None and not _declares(view, spec, path, error.code):
                    undeclared_error_seen(view.__name__, error.code)
                return error_response(error, request_id)
            except Exception:
                logger().exception("unhandled error", extra={"request_id": request_id})
                return json_response(
                    '{"httpStatus":500,"code":"' + codes.INTERNAL_ERROR.code + '","message":"Internal error",'
                    f'"requestId":"{request_id}"}}',
                    500,
                    request_id,
                )

        wrapper.__endpoint__ = spec  # type: ignore[attr-defined]
        return wrapper

    return decorate


undeclared_error_seen: Callable[[str, str], None] | None = None
"""Told (view name, code) when a route answers an error code its contract does not declare: the tests
set it and fail, so the description of every route stays true."""


def _declares(view: Callable[..., Any], spec: EndpointSpec, path: dict[str, str], code: str) -> bool:
    declared = error_codes_of(
        spec, contract.contract_of(view), "tenantLocator" in path, current_request().method, bool(path)
    )
    return any(entry.code == code for entry in declared)


def _handle(view: Callable[..., Any], spec: EndpointSpec, path: dict[str, str], request_id: str) -> Any:
    current = settings()
    declared = contract.contract_of(view)
    file_body = declared.body is not None and declared.body.encoding == "file"
    limit = current.max_upload_body_bytes if file_body else current.max_json_body_bytes
    if len(raw_body()) > limit:
        purpose = declared.referenced_upload_purpose
        instead = (
            f": make an upload of it with POST /uploads (purpose {purpose}), put the file to "
            "the URL it answers, and send this request with ?uploadLocator= and no body"
            if purpose
            else ""
        )
        raise codes.REQUEST_TOO_LARGE(f"The request body is larger than {limit} bytes{instead}")
    real_now = wiring.clock().now()
    principal = ANONYMOUS if spec.public else auth.authenticate(real_now)
    tenant = path.get("tenantLocator")
    if tenant is not None:
        # a UUID is the same whatever its case (RFC 4122); stored locators are lower case
        tenant = path["tenantLocator"] = tenant.lower()
    if tenant is not None and not spec.public:
        if not principal.may_access(tenant):
            raise codes.AUTH_TENANT_FORBIDDEN("No access to this tenant")
        if not is_uuid(tenant):
            raise codes.not_found("tenant", tenant)
    if not spec.public:
        _check_permission(principal, spec.permissions, path)
    observability.tag(tenant=tenant, operation=view.__name__)
    # business time is the tenant's clock (its test clock, if it has one); authentication was on real time
    now = wiring.clock_for(tenant).now() if tenant is not None and not spec.public else real_now
    ctx = CallContext(principal=principal, request_id=request_id, now=now, tenant_locator=tenant)
    arguments = contract.arguments(declared)
    scope = idempotency.scope_of(tenant)
    key = current_request().headers.get("x-idempotency-key") if spec.idempotent else None
    answer = view
    if key is not None:
        outcome = idempotency.claim_or_replay(
            scope,
            principal.user_locator,
            principal.credential,
            view.__name__,
            key,
            _fingerprint(path),
            rebuildable=spec.replay is not None,
            creates=spec.creates,
        )
        if isinstance(outcome, idempotency.Replay):
            return json_response(outcome.body, outcome.status, request_id)
        claim = outcome.claim if isinstance(outcome, idempotency.Committed) else outcome
        ctx = CallContext(principal=principal, request_id=request_id, now=now, tenant_locator=tenant, idempotency=claim)
        if isinstance(outcome, idempotency.Committed) and spec.replay is not None:
            # the move committed: its answer is the record as it now is
            answer = spec.replay
            arguments = {"body": arguments["body"]} if spec.replay_takes_body and "body" in arguments else {}
            if outcome.created is not None:  # the create committed: its answer is the record it created
                path = {**path, "locator": outcome.created}
    token = set_context(ctx)
    try:
        with contextlib.ExitStack() as files:
            reference = contract.upload_reference(declared)
            if reference is not None:
                arguments["body"] = files.enter_context(
                    uploads.referenced_file(ctx, declared.upload_purpose or "", reference)
                )
            result = answer(**path, **arguments)
    finally:
        reset_context(token)
    secret = result if isinstance(result, SecretAnswer) else None
    response = (
        static_response(result, request_id, header("accept-encoding"), header("if-none-match"))
        if isinstance(result, Static)
        else render(secret.value if secret else result, request_id, spec.status)
    )
    if isinstance(result, Binary):
        offer_file(response)
    if ctx.idempotency is not None and ctx.idempotency.claimed:  # claimed: its transaction committed
        if secret:
            idempotency.remember_secret_created(scope, principal.user_locator, ctx.idempotency, secret.created)
        else:
            idempotency.remember_response(
                scope, principal.user_locator, ctx.idempotency, response.status_code, response.body
            )
    return response


def _shortened_echoes(message: str, path: dict[str, str]) -> str:
    """`message` repeating at most MAX_ECHOED characters of each path variable (a 404 names the locator
    it did not find, and a path variable can be as long as a URL)."""
    for value in sorted(path.values(), key=len, reverse=True):
        if len(value) > MAX_ECHOED:
            message = message.replace(value, value[:MAX_ECHOED] + "...")
    return message


def _check_permission(principal: Principal, permissions: tuple[str, ...], path: dict[str, str]) -> None:
    for permission in permissions:
        if not grants(principal.permissions, permission):
            continue
        if not permission.endswith(SELF_SERVICE_SUFFIX) or path.get("locator") in (None, principal.user_locator):
            return
    raise codes.AUTH_PERMISSION_DENIED(f"Requires one of: {', '.join(permissions)}")


def _fingerprint(path: dict[str, str]) -> bytes:
    request = current_request()
    query = sorted((request.query_params or {}).items())
    return f"{request.method} {sorted(path.items())} {query}\n".encode() + raw_body()
