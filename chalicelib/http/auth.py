"""Who is calling: a bearer token resolved to a Principal by the identity domain."""
from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from chalicelib.core import codes
from chalicelib.core.context import Principal
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import current_request, header

if TYPE_CHECKING:
    from chalicelib.identity import service as identity
else:
    (identity,) = lazy_modules("chalicelib.identity", "service")

PASSWORD_CHANGE_ROUTE = ("PATCH", "/auth/users/{locator}/passwordreset")


def authenticate(now: datetime) -> Principal:
    value = header("authorization")
    if not value:
        raise codes.AUTH_TOKEN_MISSING("Missing Authorization header")
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise codes.AUTH_TOKEN_INVALID("The Authorization header must be 'Bearer <token>'")
    principal = identity.authenticate(token.strip(), now)
    if identity.password_change_only(principal) and not _is_own_password_change(principal):
        raise codes.AUTH_PASSWORD_CHANGE_REQUIRED(
            "Change your temporary password first (PATCH /auth/users/{your locator}/passwordreset)")
    return principal


def _is_own_password_change(principal: Principal) -> bool:
    request = current_request()
    route = (request.method, (request.context or {}).get("resourcePath"))
    return route == PASSWORD_CHANGE_ROUTE and (request.uri_params or {}).get("locator") == principal.user_locator


def source_ip() -> str | None:
    """The caller's address as API Gateway saw it (never a header the client could set)."""
    return ((current_request().context or {}).get("identity") or {}).get("sourceIp")
