"""Test data built through the services, never through raw table writes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from itertools import count

from chalicelib.core.context import SYSTEM, CallContext
from chalicelib.core.ids import new_locator

_sequence = count(1)


def system_ctx() -> CallContext:
    from chalicelib.runtime import wiring

    return CallContext(principal=SYSTEM, request_id=new_locator(), now=wiring.clock().now())


def sign_in(user_name: str, password: str) -> str:
    from chalicelib.core.clock import SystemClock
    from chalicelib.identity import service

    token, _ = service.sign_in(user_name, password, SystemClock().now(), new_locator())
    return token


def new_tenant(name: str = "Test insurer", *, test_clock: bool = False) -> str:
    from chalicelib.identity import service

    return service.create_tenant(system_ctx(), name=name, test_clock=test_clock).locator


def unique_name(prefix: str = "user") -> str:
    return f"{prefix}{next(_sequence)}-{new_locator().lower()}@example.com"


def new_role(permissions: list[str]) -> str:
    from chalicelib.identity import service

    role = service.create_role(
        system_ctx(), name=f"role-{new_locator().lower()}", description="test role", permissions=permissions
    )
    return role.name


def new_user(permissions: list[str], tenants: list[str], password: str | None = None) -> tuple[str, str]:
    """A user holding `permissions` (through a fresh role) on `tenants`; answers (locator, bearer token)."""
    from chalicelib.identity import service
    from chalicelib.identity.models import UserFields

    ctx = system_ctx()
    roles = [new_role(permissions)] if permissions else []
    profile = service.create_user(
        ctx,
        UserFields(
            userName=unique_name(), firstName="Test", lastName="User", password=password, roles=roles, tenants=tenants
        ),
        enable_user=True,
    )
    token = service.create_token(
        ctx,
        profile.user.locator,
        name="test",
        permissions=profile.permissions,
        tenants=tenants,
        expires_at=datetime.now(timezone.utc) + timedelta(days=365 * 20),
    )
    return profile.user.locator, token


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
