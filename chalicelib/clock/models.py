"""What the clock domain answers: a tenant's time."""
from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel


class TenantTime(BaseModel):
    tenantLocator: str
    testClock: bool
    now: datetime
    status: Literal["ready", "advancing"] = "ready"
    advancingTo: datetime | None = None
