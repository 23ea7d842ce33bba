"""The test clock API contract (our extension; DECISIONS.md "Test clocks")."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator

from chalicelib.clock.models import TenantTime
from chalicelib.core.clock import utc
from chalicelib.core.messages import Input, Response


class ClockAdvanceRequest(Input):
    to: Annotated[datetime, AfterValidator(utc)]
    """Where the clock goes: after its now (a datetime without an offset is UTC)."""


class ClockResponse(Response):
    tenantLocator: str
    testClock: bool
    """False: the tenant's time is the real time, and cannot be moved."""
    now: datetime
    """The tenant's business time (while advancing: how far the advance has come)."""
    status: Literal["ready", "advancing"]
    advancingTo: datetime | None = None
    """While advancing: where to."""

    @classmethod
    def of(cls, time: TenantTime) -> ClockResponse:
        return cls(
            tenantLocator=time.tenantLocator,
            testClock=time.testClock,
            now=time.now,
            status=time.status,
            advancingTo=time.advancingTo,
        )
