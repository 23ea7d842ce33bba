"""The event stream: fetch one, fetch by request, the paged stream and its token, schedules, access."""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from urllib.parse import urlencode

import pytest

from chalicelib.runtime import wiring
from tests.builders import bearer, new_tenant, new_user, system_ctx


def record(tenant, clock, *events):
    """Commit one unit of work holding `events` ((type, data) pairs) in `tenant`, then move the clock on a
    second. Answers the events as the API shows them, in stream order."""
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    for event_type, data in events:
        uow.record_event(event_type, data)
    written = uow.commit()
    clock.advance(seconds=1)
    return [shown(item) for item in sorted(written, key=lambda item: item["GSI1SK"])]


def shown(item):
    fields = ("locator", "userLocator", "requestId", "timestamp", "type", "data")
    return {name: item[name] for name in fields}


def stream(api, token, tenant, **params):
    query = f"?{urlencode(params)}" if params else ""
    return api.http.get(f"/event/{tenant}/events/list{query}", headers=bearer(token))


def error_code(response):
    return response.json_body["code"]


def read_all(api, token, tenant, **first):
    """Every page of the stream until an empty one; answers (events, pages seen, last token)."""
    response = stream(api, token, tenant, **first)
    events, pages = [], 0
    while True:
        assert response.status_code == 200, response.body
        body = response.json_body
        if not body["events"]:
            return events, pages, body["pagingToken"]
        events += body["events"]
        pages += 1
        size = {"pageSize": first["pageSize"]} if "pageSize" in first else {}
        response = stream(api, token, tenant, pagingToken=body["pagingToken"], **size)


# --- fetch one, fetch by request ------------------------------------------------------------------


def test_an_event_is_fetched_by_its_locator_with_every_field(api, admin_token, tenant, clock):
    [event] = record(tenant, clock, ("policy.quote.create", {"quoteLocator": "Q1", "amount": Decimal("12.10")}))

    response = api.http.get(f"/event/{tenant}/events/{event['locator']}", headers=bearer(admin_token))

    assert response.status_code == 200, response.body
    assert json.loads(response.body, parse_float=Decimal) == event
    assert event["timestamp"] == "2026-01-15T09:30:00.000Z"
    assert '"amount":12.10' in response.body.decode()  # the exact decimal, not a float


def test_an_unknown_event_answers_404(api, admin_token, tenant):
    response = api.http.get(f"/event/{tenant}/events/01ARZ3NDEKTSV4RRFFQ69G5FAV", headers=bearer(admin_token))

    assert response.status_code == 404
    assert error_code(response) == "event.not_found"


def test_the_events_of_one_request_are_fetched_together_in_stream_order(api, admin_token, tenant, clock):
    mine = record(
        tenant,
        clock,
        ("policy.quote.create", {"n": 1}),
        ("policy.quote.price", {"n": 2}),
        ("policy.quote.validate", {"n": 3}),
    )
    record(tenant, clock, ("policy.quote.create", {"n": 4}))

    response = api.http.get(f"/event/{tenant}/events/request/{mine[0]['requestId']}", headers=bearer(admin_token))

    assert response.status_code == 200, response.body
    assert response.json_body == mine


def test_an_unknown_request_has_no_events(api, admin_token, tenant):
    response = api.http.get(f"/event/{tenant}/events/request/01ARZ3NDEKTSV4RRFFQ69G5FAV", headers=bearer(admin_token))

    assert response.status_code == 200
    assert response.json_body == []


# --- the stream -----------------------------------------------------------------------------------


def test_the_stream_pages_in_completion_order_without_gaps_or_duplicates(api, admin_token, tenant, clock):
    written = []
    for n in range(7):
        written += record(tenant, clock, (f"test.step{n % 2}", {"n": n}))
    written += record(tenant, clock, ("test.batch", {"n": 7}), ("test.batch", {"n": 8}))

    events, pages, _ = read_all(api, admin_token, tenant, pageSize=3)

    assert events == written
    assert pages == 3
    assert [e["data"]["n"] for e in events[:7]] == list(range(7))


def test_a_page_is_one_query(api, admin_token, tenant, clock, ddb_calls):
    record(tenant, clock, ("test.a", {}), ("test.b", {}))
    first = stream(api, admin_token, tenant, pageSize=1).json_body

    for params in ({"pageSize": 1}, {"pagingToken": first["pagingToken"]}, {"type": "test.a"}):
        ddb_calls.clear()
        response = stream(api, admin_token, tenant, **params)
        assert response.status_code == 200, response.body
        assert ddb_calls.count("Query") == 1, (params, ddb_calls)
        assert "Scan" not in ddb_calls


def test_the_token_of_the_last_page_polls_for_new_events(api, admin_token, tenant, clock):
    record(tenant, clock, ("test.a", {"n": 1}))
    _, _, token = read_all(api, admin_token, tenant)

    again = stream(api, admin_token, tenant, pagingToken=token)
    assert again.status_code == 200
    assert again.json_body["events"] == []
    newer = record(tenant, clock, ("test.a", {"n": 2}))
    polled = stream(api, admin_token, tenant, pagingToken=again.json_body["pagingToken"])

    assert polled.json_body["events"] == newer


def test_an_empty_stream_answers_a_token_that_later_finds_the_first_event(api, admin_token, tenant, clock):
    empty = stream(api, admin_token, tenant)
    assert empty.status_code == 200
    assert empty.json_body["events"] == []

    first = record(tenant, clock, ("test.a", {}))

    assert stream(api, admin_token, tenant, pagingToken=empty.json_body["pagingToken"]).json_body["events"] == first


def test_the_type_filter_reads_only_that_type_across_pages(api, admin_token, tenant, clock):
    wanted = []
    for n in range(5):
        wanted += record(tenant, clock, ("policy.quote.issue", {"n": n}))
        record(tenant, clock, ("policy.quote.create", {"n": n}))

    events, pages, _ = read_all(api, admin_token, tenant, type="policy.quote.issue", pageSize=2)

    assert events == wanted
    assert pages == 3
    assert stream(api, admin_token, tenant, type="no.such.type").json_body["events"] == []


def test_the_time_range_includes_its_start_and_excludes_its_end(api, admin_token, tenant, clock):
    written = [record(tenant, clock, ("test.tick", {"n": n}))[0] for n in range(5)]
    start, end = written[1]["timestamp"], written[4]["timestamp"]

    events, _, token = read_all(api, admin_token, tenant, startTimestamp=start, endTimestamp=end, pageSize=1)

    assert events == written[1:4]
    record(tenant, clock, ("test.tick", {"n": 5}))
    assert stream(api, admin_token, tenant, pagingToken=token).json_body["events"] == []  # the end stays


def test_a_start_without_an_offset_is_utc_and_an_end_alone_bounds_the_stream(api, admin_token, tenant, clock):
    written = [record(tenant, clock, ("test.tick", {"n": n}))[0] for n in range(3)]

    from_second = stream(api, admin_token, tenant, startTimestamp="2026-01-15T09:30:01")
    before_second = stream(api, admin_token, tenant, endTimestamp="2026-01-15T09:30:01Z")

    assert from_second.json_body["events"] == written[1:]
    assert before_second.json_body["events"] == written[:1]


def test_a_start_after_the_end_is_refused(api, admin_token, tenant):
    response = stream(
        api, admin_token, tenant, startTimestamp="2026-01-15T10:00:00Z", endTimestamp="2026-01-15T09:00:00Z"
    )

    assert response.status_code == 400
    assert response.json_body["fieldErrors"][0]["field"] == "startTimestamp"


def test_the_page_size_defaults_to_20_and_is_bounded_by_1_and_100(api, admin_token, tenant, clock):
    record(tenant, clock, *[("test.bulk", {"n": n}) for n in range(21)])

    assert len(stream(api, admin_token, tenant).json_body["events"]) == 20
    assert len(stream(api, admin_token, tenant, pageSize=100).json_body["events"]) == 21
    for size in (0, 101, -1, "many"):
        response = stream(api, admin_token, tenant, pageSize=size)
        assert response.status_code == 400, size
        assert response.json_body["fieldErrors"][0]["field"] == "pageSize"


@pytest.mark.parametrize(
    "params", [{"type": "test.a"}, {"startTimestamp": "2026-01-15T09:30:00Z"}, {"endTimestamp": "2026-01-15T09:30:00Z"}]
)
def test_a_paging_token_cannot_be_combined_with_a_filter(api, admin_token, tenant, params):
    token = stream(api, admin_token, tenant).json_body["pagingToken"]

    response = stream(api, admin_token, tenant, pagingToken=token, **params)

    assert response.status_code == 400
    assert error_code(response) == "event.paging_token_with_filters"


def test_a_paging_token_is_refused_by_another_tenant(api, admin_token, tenant, clock):
    record(tenant, clock, ("test.a", {}), ("test.b", {}))
    token = stream(api, admin_token, tenant, pageSize=1).json_body["pagingToken"]
    other = new_tenant()

    response = stream(api, admin_token, other, pagingToken=token)

    assert response.status_code == 400
    assert error_code(response) == "event.invalid_paging_token"


def _decoded(token):
    return json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))


def _encoded(fields):
    return base64.urlsafe_b64encode(json.dumps(fields).encode()).rstrip(b"=").decode()


def test_a_tampered_paging_token_is_refused(api, admin_token, tenant, clock):
    record(tenant, clock, ("test.a", {}), ("test.b", {}))
    token = stream(api, admin_token, tenant, pageSize=1).json_body["pagingToken"]
    fields = _decoded(token)
    assert fields["after"]  # the token carries the position it resumes after

    rewound = _encoded({**fields, "after": None})
    retyped = _encoded({**fields, "type": "test.b"})
    for bad in (rewound, retyped, token[:-2], "not-a-token", _encoded(["a", "list"])):
        response = stream(api, admin_token, tenant, pagingToken=bad)
        assert response.status_code == 400, bad
        assert error_code(response) == "event.invalid_paging_token"


# --- scheduled policy events ----------------------------------------------------------------------


def test_scheduled_events_of_an_unknown_policy_answer_404(api, admin_token, tenant):
    response = api.http.get(
        f"/event/{tenant}/events/schedules/policy/01ARZ3NDEKTSV4RRFFQ69G5FAV", headers=bearer(admin_token)
    )

    assert response.status_code == 404
    assert error_code(response) == "policy.not_found"


# --- access ---------------------------------------------------------------------------------------


def test_every_event_endpoint_needs_a_token(api, tenant):
    for path in ("list", "request/R1", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "schedules/policy/P1"):
        response = api.http.get(f"/event/{tenant}/events/{path}")
        assert response.status_code == 401, path


def test_a_user_without_the_tenant_is_forbidden(api, tenant):
    _, token = new_user(["events.read"], [new_tenant()])

    for path in ("list", "request/R1", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "schedules/policy/P1"):
        response = api.http.get(f"/event/{tenant}/events/{path}", headers=bearer(token))
        assert response.status_code == 403, path
        assert error_code(response) == "auth.tenant_forbidden"


def test_events_read_is_needed_and_events_list_opens_only_the_stream(api, tenant, clock):
    [event] = record(tenant, clock, ("test.a", {}))
    _, reader = new_user(["events.read"], [tenant])
    _, lister = new_user(["events.list"], [tenant])
    _, stranger = new_user(["accounts.read"], [tenant])
    one, by_request = f"{event['locator']}", f"request/{event['requestId']}"

    def status(token, path):
        return api.http.get(f"/event/{tenant}/events/{path}", headers=bearer(token)).status_code

    assert [status(reader, p) for p in ("list", one, by_request, "schedules/policy/P1")] == [200, 200, 200, 404]
    assert [status(lister, p) for p in ("list", one, by_request, "schedules/policy/P1")] == [200, 403, 403, 403]
    assert [status(stranger, p) for p in ("list", one, by_request, "schedules/policy/P1")] == [403] * 4
    denied = api.http.get(f"/event/{tenant}/events/{one}", headers=bearer(stranger))
    assert error_code(denied) == "auth.permission_denied"


def test_events_of_one_tenant_never_show_in_another(api, admin_token, tenant, clock):
    [event] = record(tenant, clock, ("test.secret", {"n": 1}))
    other = new_tenant()
    record(other, clock, ("test.secret", {"n": 2}))

    fetched = api.http.get(f"/event/{other}/events/{event['locator']}", headers=bearer(admin_token))
    by_request = api.http.get(f"/event/{other}/events/request/{event['requestId']}", headers=bearer(admin_token))
    other_stream, _, _ = read_all(api, admin_token, other)
    typed, _, _ = read_all(api, admin_token, other, type="test.secret")

    assert fetched.status_code == 404
    assert error_code(fetched) == "event.not_found"
    assert by_request.json_body == []
    assert [e["data"] for e in other_stream] == [{"n": 2}]
    assert [e["data"] for e in typed] == [{"n": 2}]


# --- the settle window ---------------------------------------------------------------------------


@pytest.fixture
def settle_window(monkeypatch):
    """The deployed default: the stream lists only events committed at least 2 s ago."""
    from chalicelib import settings

    monkeypatch.setenv("PAS_EVENT_SETTLE_MS", "2000")
    settings.reload()
    yield
    monkeypatch.undo()
    settings.reload()


def commit_at(tenant, clock, moment, event_type):
    """One event stamped at `moment` (a writer whose clock read `moment` when it committed)."""
    clock.set(moment)
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    uow.record_event(event_type, {})
    return shown(uow.commit()[0])


def test_a_poller_never_skips_an_event_committed_after_a_later_stamped_one(
    api, admin_token, tenant, clock, settle_window
):
    from datetime import timedelta

    start = clock.now()
    first = commit_at(tenant, clock, start, "test.first")
    clock.set(start + timedelta(seconds=3))
    page = stream(api, admin_token, tenant).json_body
    assert page["events"] == [first]

    late_stamped = commit_at(tenant, clock, start + timedelta(seconds=4, milliseconds=500), "test.later")
    clock.set(start + timedelta(seconds=5))
    assert stream(api, admin_token, tenant, pagingToken=page["pagingToken"]).json_body["events"] == []
    earlier_stamped = commit_at(tenant, clock, start + timedelta(seconds=4), "test.earlier")  # committed last
    clock.set(start + timedelta(seconds=6, milliseconds=501))
    polled = stream(api, admin_token, tenant, pagingToken=page["pagingToken"]).json_body

    assert polled["events"] == [earlier_stamped, late_stamped]


def test_fetching_by_locator_and_by_request_is_not_delayed(api, admin_token, tenant, clock, settle_window):
    event = commit_at(tenant, clock, clock.now(), "test.now")

    assert stream(api, admin_token, tenant).json_body["events"] == []
    fetched = api.http.get(f"/event/{tenant}/events/{event['locator']}", headers=bearer(admin_token))
    assert fetched.status_code == 200 and fetched.json_body["locator"] == event["locator"]


# --- a test-clock tenant: business time ------------------------------------------------------------------


def commit_in_business_time(tenant, business, event_type):
    """One event of a unit of work working at the business time `business` (a request or a due entry of a
    test-clock tenant), committed at the real time the clock shows."""
    from dataclasses import replace

    uow = wiring.unit_of_work(replace(system_ctx().for_tenant(tenant), now=business))
    uow.record_event(event_type, {})
    return shown(uow.commit()[0])


def test_a_test_clock_tenants_events_take_its_business_time_and_the_stream_sorts_and_filters_by_it(
    api, admin_token, clock
):
    from datetime import datetime, timezone

    sandbox = new_tenant(test_clock=True)
    later = commit_in_business_time(sandbox, datetime(2027, 3, 1, tzinfo=timezone.utc), "test.later")
    clock.advance(seconds=1)
    earlier = commit_in_business_time(sandbox, datetime(2026, 7, 1, tzinfo=timezone.utc), "test.earlier")

    assert (earlier["timestamp"], later["timestamp"]) == ("2026-07-01T00:00:00.000Z", "2027-03-01T00:00:00.000Z")
    assert stream(api, admin_token, sandbox).json_body["events"] == [earlier, later]
    assert stream(
        api, admin_token, sandbox, startTimestamp="2026-06-01T00:00:00Z", endTimestamp="2027-03-01T00:00:00Z"
    ).json_body["events"] == [earlier]


def test_a_test_clock_tenants_stream_settles_by_real_commit_time(api, admin_token, clock, settle_window):
    from datetime import datetime, timedelta, timezone

    sandbox = new_tenant(test_clock=True)
    clock.advance(seconds=3)
    event = commit_in_business_time(sandbox, datetime(2027, 3, 1, tzinfo=timezone.utc), "test.late")
    shown_now = stream(api, admin_token, sandbox).json_body["events"]
    clock.advance(seconds=2, milliseconds=1)
    settled = stream(api, admin_token, sandbox).json_body["events"]

    assert shown_now == []  # committed less than 2 s ago, however far its business time
    assert settled == [event] and event["timestamp"] == "2027-03-01T00:00:00.000Z"
    assert datetime.fromisoformat(event["timestamp"]) - clock.now() > timedelta(days=300)
