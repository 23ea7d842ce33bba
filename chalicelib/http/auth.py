"""Who is calling: a bearer token resolved to a Principal by the identity domain."""
from __future__ import annotations

from datetime import datetime

from chalicelib.core.context import Principal
from chalicelib.core.errors import Unauthenticated
from chalicelib.http.request import header
from chalicelib.identity import service as identity


def authenticate(now: datetime) -> Principal:
    value = header("authorization")
    if not value:
        raise Unauthenticated("Missing Authorization header", code="auth.token_missing")
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("The Authorization header must be 'Bearer <token>'", code="auth.token_invalid")
    return identity.authenticate(token.strip(), now)
