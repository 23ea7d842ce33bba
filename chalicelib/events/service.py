"""Reading the event stream: one event, the events of a request, the paged stream, policy schedules.

The stream's `pagingToken` is opaque to clients: base64url of a JSON object holding the position of the
last event returned, the filters of the first call, and an HMAC-SHA256 (key: the paging secret) over
those and the tenant locator. So a token resumes strictly after the last event it has seen, cannot be
altered, and is refused by every other tenant. A token is returned even when no event was, so a client
can keep it and poll for newer events.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta

from chalicelib.clock import service as clocks
from chalicelib.configuration import service as configuration
from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError
from chalicelib.events import policy_schedule, repository
from chalicelib.events.models import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    Event,
    ScheduledPolicyEvent,
    StreamPage,
    TriggerState,
)
from chalicelib.policies import service as policies
from chalicelib.runtime import wiring
from chalicelib.settings import settings

MAX_LOCATOR_LENGTH = 200
TOKEN_VERSION = 1


def get_event(ctx: CallContext, locator: str) -> Event:
    event = repository.get_event(ctx.tenant, locator) if _plausible(locator) else None
    if event is None:
        raise codes.not_found("event", locator)
    return event


def events_of_request(ctx: CallContext, request_id: str) -> list[Event]:
    """The events recorded by one API request (an empty list for an unknown request)."""
    return repository.events_of_request(ctx.tenant, request_id) if _plausible(request_id) else []


def _plausible(locator: str) -> bool:
    """Locators and request ids are short; a longer one cannot exist (and would not fit in a key)."""
    return 0 < len(locator) <= MAX_LOCATOR_LENGTH


@dataclass(frozen=True)
class _Cursor:
    after: str | None  # stream sort key (or prefix of one) of the last event seen
    until: str | None  # exclusive upper bound: isoformat(endTimestamp)
    type: str | None


def stream(
    ctx: CallContext,
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    event_type: str | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    paging_token: str | None = None,
) -> StreamPage:
    """Events in ascending completion order (a test-clock tenant's: business time, then completion, so its
    time filters select by the events' timestamps too); one Query per page."""
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise codes.REQUEST_INVALID(
            "Invalid page size", field_errors=[FieldError("pageSize", f"must be between 1 and {MAX_PAGE_SIZE}")]
        )
    if paging_token is not None:
        given = [
            name
            for name, value in (("startTimestamp", start), ("endTimestamp", end), ("type", event_type))
            if value is not None
        ]
        if given:
            raise codes.EVENT_PAGING_TOKEN_WITH_FILTERS(
                "A pagingToken carries the filters of the first call; send it alone",
                field_errors=[FieldError(name, "cannot be combined with pagingToken") for name in given],
            )
        cursor = _read_token(ctx.tenant, paging_token)
    else:
        if start is not None and end is not None and start > end:
            raise codes.REQUEST_INVALID(
                "startTimestamp is after endTimestamp",
                field_errors=[FieldError("startTimestamp", "must not be after endTimestamp")],
            )
        # no stored sort key equals a bare timestamp: `after` it means at or after that millisecond
        cursor = _Cursor(
            after=isoformat(start) if start else None, until=isoformat(end) if end else None, type=event_type
        )
    if clocks.has_test_clock(ctx.tenant):  # sorted by business time first: settled by commit time
        events, last = repository.stream(
            ctx.tenant,
            event_type=cursor.type,
            after=cursor.after,
            until=cursor.until,
            limit=page_size,
            committed_before=_settle_line(),
        )
    else:
        events, last = repository.stream(
            ctx.tenant, event_type=cursor.type, after=cursor.after, until=_settled(cursor.until), limit=page_size
        )
    if last is not None:
        cursor = replace(cursor, after=last)
    return StreamPage(events=events, paging_token=_write_token(ctx.tenant, cursor))


def _settled(until: str | None) -> str | None:
    """The stream's upper bound on an ordinary tenant (whose events sort by their commit time): the
    caller's `until`, but never closer to now than the settle window, so an event stamped before a later
    one but committed after it is never skipped by a resuming poller."""
    settled = _settle_line()
    return settled if settled is not None and (until is None or settled < until) else until


def _settle_line() -> str | None:
    """The commit time the stream shows events up to (None: no window). The window is on real time,
    whatever the tenant's (test) clock says: it is about commits becoming visible."""
    window = settings().event_settle_ms
    return isoformat(wiring.clock().now() - timedelta(milliseconds=window)) if window else None


def _signature(tenant: str, fields: dict[str, object]) -> str:
    message = tenant.encode() + b"\n" + json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()
    secret = (settings().paging_secret or "").encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def _write_token(tenant: str, cursor: _Cursor) -> str:
    fields: dict[str, object] = {"v": TOKEN_VERSION, **asdict(cursor)}
    body = json.dumps({**fields, "sig": _signature(tenant, fields)}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(body).rstrip(b"=").decode()


def _read_token(tenant: str, token: str) -> _Cursor:
    invalid = codes.EVENT_INVALID_PAGING_TOKEN("The pagingToken is not valid for this tenant")
    try:
        fields = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError):
        raise invalid from None
    if not isinstance(fields, dict) or not isinstance(fields.get("sig"), str):
        raise invalid
    signature = fields.pop("sig")
    if not hmac.compare_digest(signature, _signature(tenant, fields)) or fields.get("v") != TOKEN_VERSION:
        raise invalid
    return _Cursor(after=fields.get("after"), until=fields.get("until"), type=fields.get("type"))


def scheduled_policy_events(ctx: CallContext, policy_locator: str) -> list[ScheduledPolicyEvent]:
    """The policy's scheduled custom events (the configuration's `customEvents` with a `schedule`, by
    name), each with its trigger state and next time as of now (policy_schedule.py). 404 for an
    unknown policy. The latest term and segment are read only when a schedule is anchored on them."""
    policy = policies.get_policy(ctx, policy_locator)
    configured = (configuration.model(ctx, policy.configVersion).get("customEvents") or {}).items()
    scheduled = [
        (name, ref["schedule"])
        for name, ref in configured
        if isinstance(ref, dict) and isinstance(ref.get("schedule"), dict)
    ]
    if not scheduled:
        return []
    wanted = {schedule.get("anchor") for _, schedule in scheduled}
    anchors = policy_schedule.Anchors(
        policy_start=policy.startTime,
        policy_end=policy.endTime,
        term_start=policies.get_term(ctx, policy.latestTermLocator).startTime
        if "termStart" in wanted
        else policy.startTime,
        segment_start=policies.get_segment(ctx, policy.latestSegmentLocator).startTime
        if "segmentStart" in wanted
        else policy.startTime,
    )
    statuses = [str(status) for status in policies.statuses(ctx, policy)]
    result = []
    for name, schedule in scheduled:
        upcoming = policy_schedule.upcoming(name, schedule, anchors, policy.timezone, ctx.now, statuses)
        result.append(
            ScheduledPolicyEvent(
                policyLocator=policy.locator,
                transactionLocator=policy.issuedTransactionLocator,
                customEventId=name,
                triggerState=TriggerState(upcoming.trigger_state),
                nextEventTime=upcoming.next_time,
            )
        )
    return result
