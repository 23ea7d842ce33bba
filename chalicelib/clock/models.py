"""The clock domain's entities: a test clock as stored, and a tenant's time as the domain answers it."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel


class ClockStatus(StrEnum):
    READY = "ready"
    ADVANCING = "advancing"


class ClockState(BaseModel):
    """A test clock as stored."""

    tenantLocator: str
    now: datetime
    status: ClockStatus = ClockStatus.READY
    advancingTo: datetime | None = None
    advanceStartedAt: datetime | None = None
    """Where the clock stood when the running advance began: due entries that fell due before it run at it."""
    advanceLocator: str | None = None
    """The advance under way (its jobs' locators derive from it)."""
    createdAt: datetime
    version: int = 1


class TenantTime(BaseModel):
    tenantLocator: str
    testClock: bool
    now: datetime
    status: Literal["ready", "advancing"] = "ready"
    advancingTo: datetime | None = None
