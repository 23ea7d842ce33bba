"""Who is calling, for which tenant, in which request, at what time."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypeVar

from chalicelib.core import codes
from chalicelib.core.permissions import grants_any, tenant_allowed

T = TypeVar("T")
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
    creates: str | None = None
    """The entity a create route makes: its guard keeps the locator of the record of that entity its commit
    writes, so a replay whose answer was lost answers that record (`@endpoint(creates=...)`)."""

    def name_for(self, user_locator: str) -> str:
        """What names the guard's request in the records it makes, so that a replay finds them (hashed: no client
        text in it)."""
        return hashlib.sha256(f"{user_locator}\n{self.operation}\n{self.key}".encode()).hexdigest()


class ReadCache:
    """What one request (or one job run) has read, by key, so that each record is read at most once:
    the configuration's current version, an account, a policy root. The services that read those
    records own their keys (`(domain, tenant, locator)`) and name the stored record each entry is (`record`:
    its (PK, SK)); when a unit of work commits it forgets the entries of the records it wrote (and every
    entry that names none), so a read after a write sees the write and a record the request did not write
    is not read again. A record a caller changes is a copy (models are changed with model_copy), so what is
    cached stays what storage answered."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, ...], Any] = {}
        self._records: dict[tuple[str, ...], tuple[str, str] | None] = {}

    def read(self, key: tuple[str, ...], reader: Callable[[], T], *, record: tuple[str, str] | None = None) -> T:
        """The value cached under `key`, else `reader()` (cached unless None: a record not found is
        looked for again)."""
        if key in self._entries:
            return self._entries[key]  # type: ignore[no-any-return]
        value = reader()
        if value is not None:
            self.put(key, value, record=record)
        return value

    def get(self, key: tuple[str, ...]) -> Any:
        return self._entries.get(key)

    def put(self, key: tuple[str, ...], value: Any, *, record: tuple[str, str] | None = None) -> None:
        self._entries[key] = value
        self._records[key] = record

    def forget(self, written: Iterable[tuple[str, str]]) -> None:
        """Drop the entries of the `written` records, and those that name no record."""
        changed = set(written)
        for key in [key for key, record in self._records.items() if record is None or record in changed]:
            del self._entries[key], self._records[key]

    def clear(self) -> None:
        self._entries.clear()
        self._records.clear()


@dataclass(frozen=True)
class CallContext:
    principal: Principal
    request_id: str
    now: datetime
    tenant_locator: str | None = None
    idempotency: IdempotencyClaim | None = None
    reads: ReadCache = field(default_factory=ReadCache, compare=False, repr=False)
    """The request's reads (shared by `for_tenant` copies): each record read once per request."""

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
