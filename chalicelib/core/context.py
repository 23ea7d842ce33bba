"""Who is calling, for which tenant, in which request, at what time."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from chalicelib.core import codes
from chalicelib.core.permissions import grants_any, tenant_allowed

SYSTEM_USER_LOCATOR = "00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class Principal:
    user_locator: str
    user_name: str
    permissions: frozenset[str]
    tenants: frozenset[str]
    is_system: bool = False
    profile: Any = field(default=None, compare=False, repr=False)  # the identity record it was built from
    credential: str = field(default="", repr=False)  # a digest of the token presented; idempotency keys bind to it

    def may(self, *permissions: str) -> bool:
        return grants_any(self.permissions, permissions)

    def may_access(self, tenant_locator: str) -> bool:
        return self.is_system or tenant_allowed(self.tenants, tenant_locator)


SYSTEM = Principal(SYSTEM_USER_LOCATOR, "system", frozenset({"*.*"}), frozenset({"any"}), is_system=True)


@dataclass
class IdempotencyClaim:
    """An `X-Idempotency-Key` this request claims: written once, in its first committed unit of work."""

    key: str
    operation: str
    request_hash: str
    credential: str = ""  # the caller's credential: only a request made with it is answered a replay
    claimed: bool = False


@dataclass(frozen=True)
class CallContext:
    principal: Principal
    request_id: str
    now: datetime
    tenant_locator: str | None = None
    idempotency: IdempotencyClaim | None = None

    @property
    def tenant(self) -> str:
        if self.tenant_locator is None:
            raise codes.AUTH_FORBIDDEN("This operation needs a tenant")
        return self.tenant_locator

    @property
    def user_locator(self) -> str:
        return self.principal.user_locator

    def for_tenant(self, tenant_locator: str) -> CallContext:
        return replace(self, tenant_locator=tenant_locator)
