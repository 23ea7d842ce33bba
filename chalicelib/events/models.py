"""Events: what happened, who caused it, in which request, at what time."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


class Event(BaseModel):
    locator: str
    type: str
    data: dict[str, Any]
    requestId: str
    userLocator: str
    timestamp: datetime


@dataclass(frozen=True)
class StreamPage:
    events: list[Event]
    paging_token: str


class TriggerState(StrEnum):
    NONE = "NONE"
    NORMAL = "NORMAL"
    PAUSED = "PAUSED"
    COMPLETE = "COMPLETE"
    ERROR = "ERROR"
    BLOCKED = "BLOCKED"


class ScheduledPolicyEvent(BaseModel):
    """A custom event scheduled on a policy (configured by CustomEventRef.schedule)."""

    policyLocator: str
    transactionLocator: str
    customEventId: str
    triggerState: TriggerState
    nextEventTime: datetime | None = None
