"""Composition root: the process-wide collaborators, built lazily, replaceable in tests."""
from __future__ import annotations

from typing import Any, Protocol

from chalicelib.core.clock import Clock, SystemClock
from chalicelib.core.context import CallContext
from chalicelib.storage.unit_of_work import UnitOfWork


class JobQueue(Protocol):
    def send(self, body: str) -> None: ...


class PasswordHasher(Protocol):
    """argon2-cffi's PasswordHasher: `verify` raises on a mismatch."""

    def hash(self, password: str) -> str: ...

    def verify(self, hash: str, password: str) -> bool: ...


_overrides: dict[str, Any] = {}
_defaults: dict[str, Any] = {}


def clock() -> Clock:
    """Real time: authentication, token expiry, job leases, the event stream's commit order."""
    return _overrides.get("clock") or _defaults.setdefault("clock", SystemClock())


def clock_for(tenant: str) -> Clock:
    """The tenant's business time: its test clock where it has one, else real time (runtime/tenant_clock.py:
    no DynamoDB call for a tenant this process knows to be an ordinary one)."""
    from chalicelib.runtime import tenant_clock

    return tenant_clock.clock_for(tenant)


def job_queue() -> JobQueue:
    if "job_queue" in _overrides:
        return _overrides["job_queue"]
    if "job_queue" not in _defaults:
        from chalicelib.storage.queues import SqsJobQueue

        _defaults["job_queue"] = SqsJobQueue()
    return _defaults["job_queue"]


def password_hasher() -> PasswordHasher | None:
    """The hasher that replaces the identity domain's own argon2id one (tests count password checks
    through it); None when none was wired."""
    return _overrides.get("password_hasher")


def unit_of_work(ctx: CallContext, scope: str | None = None) -> UnitOfWork:
    """A new unit of work in the tenant's key scope (or `scope`, for system records). Its events take the
    business time `ctx.now` on a test-clock tenant, else their real commit time (storage/unit_of_work.py)."""
    from chalicelib.runtime import tenant_clock
    from chalicelib.storage import keys, table
    from chalicelib.storage.unit_of_work import TransactionUnitOfWork

    if scope is not None:
        return TransactionUnitOfWork(ctx, table.gateway(), clock(), scope)
    return TransactionUnitOfWork(ctx, table.gateway(), clock(), keys.tenant_scope(ctx.tenant),
                                 business_time=lambda: tenant_clock.has_test_clock(ctx.tenant))


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
