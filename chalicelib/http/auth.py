"""Who is calling: a bearer token resolved to a Principal by the authenticator wired here.

The identity domain owns tokens and users and sits above the edge, so the edge declares what it needs of it
(`Authenticator`) and the composition root (app.py) wires identity's service in; the edge never imports it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from chalicelib.core import codes
from chalicelib.core.context import Principal
from chalicelib.http.request import current_request, header


class Authenticator(Protocol):
    """What the edge asks of the identity domain (chalicelib/identity/service.py is one)."""

    def authenticate(self, token: str, now: datetime) -> Principal:
        """The principal behind a bearer token at `now`; raises `auth.token_invalid` for a token it does not know."""
        ...

    def password_change_only(self, principal: Principal) -> bool:
        """True for a principal whose token serves only to change its temporary password."""
        ...


_authenticator: list[Callable[[], Authenticator]] = []


def wire(authenticator: Callable[[], Authenticator]) -> None:
    """Wire the authenticator (app.py); it is asked for on each authenticated request, so it may load on the
    first one rather than at a cold start."""
    _authenticator[:] = [authenticator]


def _identity() -> Authenticator:
    if not _authenticator:
        raise RuntimeError("no authenticator is wired: import app (the composition root) first, which wires it")
    return _authenticator[0]()


PASSWORD_CHANGE_ROUTE = ("PATCH", "/auth/users/{locator}/passwordreset")


def authenticate(now: datetime) -> Principal:
    value = header("authorization")
    if not value:
        raise codes.AUTH_TOKEN_MISSING("Missing Authorization header")
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise codes.AUTH_TOKEN_INVALID("The Authorization header must be 'Bearer <token>'")
    identity = _identity()
    principal = identity.authenticate(token.strip(), now)
    if identity.password_change_only(principal) and not _is_own_password_change(principal):
        raise codes.AUTH_PASSWORD_CHANGE_REQUIRED(
            "Change your temporary password first (PATCH /auth/users/{your locator}/passwordreset)"
        )
    return principal


def _is_own_password_change(principal: Principal) -> bool:
    request = current_request()
    route = (request.method, (request.context or {}).get("resourcePath"))
    return route == PASSWORD_CHANGE_ROUTE and (request.uri_params or {}).get("locator") == principal.user_locator


def source_ip() -> str | None:
    """The caller's address as API Gateway saw it (never a header the client could set)."""
    return ((current_request().context or {}).get("identity") or {}).get("sourceIp")
