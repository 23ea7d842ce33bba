"""The event stream (spec part 1, "Events")."""
from __future__ import annotations

from chalice import Blueprint

from chalicelib.events import service
from chalicelib.events.schemas import (
    EventResponse,
    EventStreamQuery,
    EventStreamResponse,
    ScheduledPolicyEventResponse,
)
from chalicelib.http.endpoint import endpoint
from chalicelib.http.request import query_as, request_context

bp = Blueprint(__name__)


@bp.route("/event/{tenantLocator}/events/list", methods=["GET"])
@endpoint("events.read", "events.list")
def list_events(tenantLocator: str) -> EventStreamResponse:
    query = query_as(EventStreamQuery)
    page = service.stream(request_context(), start=query.startTimestamp, end=query.endTimestamp,
                          event_type=query.type, page_size=query.pageSize, paging_token=query.pagingToken)
    return EventStreamResponse(pagingToken=page.paging_token, events=[EventResponse.of(e) for e in page.events])


@bp.route("/event/{tenantLocator}/events/request/{locator}", methods=["GET"])
@endpoint("events.read")
def fetch_request_events(tenantLocator: str, locator: str) -> list[EventResponse]:
    return [EventResponse.of(e) for e in service.events_of_request(request_context(), locator)]


@bp.route("/event/{tenantLocator}/events/schedules/policy/{policyLocator}", methods=["GET"])
@endpoint("events.read")
def fetch_scheduled_policy_events(tenantLocator: str, policyLocator: str) -> list[ScheduledPolicyEventResponse]:
    return [ScheduledPolicyEventResponse.of(e)
            for e in service.scheduled_policy_events(request_context(), policyLocator)]


@bp.route("/event/{tenantLocator}/events/{locator}", methods=["GET"])
@endpoint("events.read")
def fetch_event(tenantLocator: str, locator: str) -> EventResponse:
    return EventResponse.of(service.get_event(request_context(), locator))
