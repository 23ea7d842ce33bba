"""Composition root: the process-wide collaborators, built lazily, replaceable in tests, and the ports the
runtime needs of the domains above it (the tenant's clock), which app.py wires."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from chalicelib.core.clock import Clock, SystemClock
from chalicelib.core.context import CallContext
from chalicelib.storage.unit_of_work import UnitOfWork as UnitOfWork  # services' unit of work (storage is not theirs)


class JobQueue(Protocol):
    def send(self, body: str) -> None: ...

    def send_batch(self, bodies: list[str]) -> None:
        """1 to 10 messages in one call (SQS's SendMessageBatch)."""
        ...


class PasswordHasher(Protocol):
    """argon2-cffi's PasswordHasher: `verify` raises on a mismatch."""

    def hash(self, password: str) -> str: ...

    def verify(self, hash: str, password: str) -> bool: ...


class TenantClocks(Protocol):
    """Where a tenant's business time comes from (chalicelib/clock/service.py is the one: DECISIONS.md "Test
    clocks"); the runtime asks it for requests (`clock_for`), units of work and jobs."""

    def clock_for(self, tenant: str) -> Clock:
        """The tenant's clock: the real one (`clock()`) for an ordinary tenant, else its test clock's position."""
        ...

    def has_test_clock(self, tenant: str) -> bool: ...

    def business_now(self, tenant: str, caused_at: datetime | None) -> datetime:
        """The business time of work (a job) that `caused_at` caused."""
        ...


_tenant_clocks: list[Callable[[], TenantClocks]] = []


def wire_tenant_clocks(tenant_clocks: Callable[[], TenantClocks]) -> None:
    """Wire the tenant clocks (app.py); asked for on each use, so the clock domain may load on first use."""
    _tenant_clocks[:] = [tenant_clocks]


def tenant_clocks() -> TenantClocks:
    if not _tenant_clocks:
        raise RuntimeError("no tenant clocks are wired: import app (the composition root) first, which wires them")
    return _tenant_clocks[0]()


_overrides: dict[str, Any] = {}
_defaults: dict[str, Any] = {}


def clock() -> Clock:
    """Real time: authentication, token expiry, job leases, the event stream's commit order."""
    found: Clock = _overrides.get("clock") or _defaults.setdefault("clock", SystemClock())
    return found


def clock_for(tenant: str) -> Clock:
    """The tenant's business time: its test clock where it has one, else real time (clock/service.py: no
    DynamoDB call for a tenant this process knows to be an ordinary one)."""
    return tenant_clocks().clock_for(tenant)


def job_queue() -> JobQueue:
    if "job_queue" not in _overrides and "job_queue" not in _defaults:
        from chalicelib.storage.queues import SqsJobQueue

        _defaults["job_queue"] = SqsJobQueue()
    found: JobQueue = _overrides["job_queue"] if "job_queue" in _overrides else _defaults["job_queue"]
    return found


def password_hasher() -> PasswordHasher | None:
    """The hasher that replaces the identity domain's own argon2id one (tests count password checks
    through it); None when none was wired."""
    return _overrides.get("password_hasher")


def unit_of_work(ctx: CallContext, scope: str | None = None) -> UnitOfWork:
    """A new unit of work in the tenant's key scope (or `scope`, for system records). Its events take the
    business time `ctx.now` on a test-clock tenant, else their real commit time (storage/unit_of_work.py)."""
    from chalicelib.storage import keys, table
    from chalicelib.storage.unit_of_work import TransactionUnitOfWork

    if scope is not None:
        return TransactionUnitOfWork(ctx, table.gateway(), clock(), scope)
    return TransactionUnitOfWork(
        ctx,
        table.gateway(),
        clock(),
        keys.tenant_scope(ctx.tenant),
        business_time=lambda: tenant_clocks().has_test_clock(ctx.tenant),
    )


def nested_unit_of_work(outer: UnitOfWork) -> UnitOfWork:
    """A unit of work whose commit moves its writes and events into `outer` (storage/unit_of_work.py
    NestedUnitOfWork): a part that may fail while it is built, dropped to leave `outer` untouched."""
    from chalicelib.storage.unit_of_work import NestedUnitOfWork

    return NestedUnitOfWork(outer)


def system_unit_of_work(ctx: CallContext) -> UnitOfWork:
    """A unit of work over system records (users, roles, tokens, the tenant registry)."""
    from chalicelib.storage.keys import SYSTEM_SCOPE

    return unit_of_work(ctx, SYSTEM_SCOPE)


def invoke_function(function_name: str, payload: bytes, qualifier: str | None = None) -> Any:
    """Invoke a Lambda function and wait for its answer (storage.functions.invoke: the per-tenant plugin
    functions of production)."""
    from chalicelib.storage import functions

    return functions.invoke(function_name, payload, qualifier)


def override(**collaborators: Any) -> None:
    """Replace collaborators (clock=FixedClock(...), job_queue=InlineJobQueue(), password_hasher=...) until
    reset()."""
    unknown = set(collaborators) - {"clock", "job_queue", "password_hasher"}
    if unknown:
        raise TypeError(f"cannot override {sorted(unknown)}")
    _overrides.update(collaborators)


def reset() -> None:
    _overrides.clear()
    _defaults.clear()
