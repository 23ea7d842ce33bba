"""The events API contract (field names as the spec and the OpenAPI definition spell them)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from chalicelib.core.clock import utc
from chalicelib.core.messages import Response
from chalicelib.events.models import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, ScheduledPolicyEvent, TriggerState

UtcDatetime = Annotated[datetime, AfterValidator(utc)]


class EventStreamQuery(BaseModel):
    """`startTimestamp` is inclusive, `endTimestamp` exclusive. `pagingToken` continues an earlier call and
    cannot be combined with the filters (it carries them)."""

    startTimestamp: UtcDatetime | None = None
    endTimestamp: UtcDatetime | None = None
    type: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    pageSize: int = Field(DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    pagingToken: Annotated[str, StringConstraints(min_length=1, max_length=2000)] | None = None


class EventResponse(Response):
    locator: str
    userLocator: str
    requestId: str
    timestamp: datetime
    type: str
    data: dict[str, Any]


class EventStreamResponse(Response):
    pagingToken: str
    events: list[EventResponse]


class ScheduledPolicyEventResponse(Response):
    """`eventId` is the spec's name, `customEventId` the OpenAPI definition's: both carry the same value."""

    policyLocator: str
    transactionLocator: str
    triggerState: TriggerState
    eventId: str
    customEventId: str
    nextEventTime: datetime | None = None

    @classmethod
    def of(cls, event: ScheduledPolicyEvent) -> ScheduledPolicyEventResponse:
        return cls(**event.model_dump(), eventId=event.customEventId)
