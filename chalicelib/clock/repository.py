"""Persistence of test clocks: one item per test-clock tenant (`storage/keys.tenant_clock`), holding its
position; an ordinary tenant has none. Every write is conditional on the clock as read (its version)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib.clock.models import ClockState, ClockStatus
from chalicelib.core import codes
from chalicelib.storage import codec, keys, table
from chalicelib.storage.table import WriteOp

ENTITY = "testClock"


def get(tenant: str) -> ClockState | None:
    """The tenant's test clock as stored now (one consistent GetItem), or None for an ordinary tenant."""
    item = table.gateway().get(keys.tenant_scope(tenant), keys.tenant_clock(tenant))
    return ClockState.model_validate(codec.without_keys(item)) if item else None


def start(tenant: str, at: datetime) -> WriteOp:
    """A new test clock for `tenant`, standing at `at`."""
    clock = ClockState(tenantLocator=tenant, now=at, createdAt=at)
    return table.put_new(
        {**keys.tenant_clock(tenant).as_dict(), "entity": ENTITY, **clock.model_dump()},
        lambda: codes.CONFLICT_ALREADY_EXISTS("The tenant has a test clock already"),
    )


def begin_advance(clock: ClockState, to: datetime, advance_locator: str) -> WriteOp:
    """The clock advancing to `to`, on condition that it is still as read (else 409 `clock.advancing`:
    another advance began first)."""
    return _rewrite(
        clock,
        {
            "status": ClockStatus.ADVANCING.value,
            "advancingTo": to,
            "advanceStartedAt": clock.now,
            "advanceLocator": advance_locator,
        },
        lambda: codes.CLOCK_ADVANCING("Another advance of this clock began first"),
    )


def moved(clock: ClockState, at: datetime) -> WriteOp:
    """The advancing clock's position at `at` (its progress), on condition that it is still as read."""
    return _rewrite(clock, {"now": at})


def finish_advance(clock: ClockState) -> WriteOp:
    """The clock at its advance's target and ready again, on condition that it is still as read."""
    assert clock.advancingTo is not None
    return _rewrite(
        clock,
        {"now": clock.advancingTo, "status": ClockStatus.READY.value},
        remove=("advancingTo", "advanceStartedAt", "advanceLocator"),
    )


def _rewrite(
    clock: ClockState, changes: dict[str, Any], on_failure: Any = None, remove: tuple[str, ...] = ()
) -> WriteOp:
    return table.update(
        keys.tenant_clock(clock.tenantLocator),
        changes,
        expected_version=clock.version,
        remove=remove,
        on_failure=on_failure,
    )
