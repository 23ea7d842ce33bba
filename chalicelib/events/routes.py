"""The event stream (spec part 1, "Events")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.events import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.events", "schemas", "service")

bp = Blueprint(__name__)


@bp.route("/event/{tenantLocator}/events/list", methods=["GET"])
@endpoint(
    "events.read", "events.list", errors=[codes.EVENT_INVALID_PAGING_TOKEN, codes.EVENT_PAGING_TOKEN_WITH_FILTERS]
)
def list_events(tenantLocator: str, query: schemas.EventStreamQuery) -> schemas.EventStreamResponse:
    page = service.stream(
        request_context(),
        start=query.startTimestamp,
        end=query.endTimestamp,
        event_type=query.type,
        page_size=query.pageSize,
        paging_token=query.pagingToken,
    )
    return schemas.EventStreamResponse(
        pagingToken=page.paging_token, events=[schemas.EventResponse.of_record(e) for e in page.events]
    )


@bp.route("/event/{tenantLocator}/events/request/{locator}", methods=["GET"])
@endpoint("events.read")
def fetch_request_events(tenantLocator: str, locator: str) -> list[schemas.EventResponse]:
    return [schemas.EventResponse.of_record(e) for e in service.events_of_request(request_context(), locator)]


@bp.route("/event/{tenantLocator}/events/schedules/policy/{policyLocator}", methods=["GET"])
@endpoint("events.read", errors=[codes.NOT_FOUND["policy"]])
def fetch_scheduled_policy_events(tenantLocator: str, policyLocator: str) -> list[schemas.ScheduledPolicyEventResponse]:
    return [
        schemas.ScheduledPolicyEventResponse.of(e)
        for e in service.scheduled_policy_events(request_context(), policyLocator)
    ]


@bp.route("/event/{tenantLocator}/events/{locator}", methods=["GET"])
@endpoint("events.read", errors=[codes.NOT_FOUND["event"]])
def fetch_event(tenantLocator: str, locator: str) -> schemas.EventResponse:
    return schemas.EventResponse.of_record(service.get_event(request_context(), locator))
