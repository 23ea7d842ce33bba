"""Test clocks through the API (DECISIONS.md "Test clocks"): createTenant?testClock=true, GET /clock/{tenant},
POST /clock/{tenant}/advance and its refusals; business time from the tenant's clock, authentication on
real time."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

import pytest

from chalicelib.clock import service as clock_service
from chalicelib.runtime.job_types import JobType
from tests.support.api import assert_error, call, event_types, ok
from tests.support.clock import request_advance
from tests.support.configs import configured_tenant

CREATED = "2026-01-15T09:30:00.000Z"
"""The real time of the tests (the FixedClock): where a test clock starts."""


@pytest.fixture
def sandbox(api, admin_token) -> str:
    """A fresh tenant with a test clock."""
    return configured_tenant(api, admin_token, test_clock=True)


def clock_of(api, token, tenant):
    return ok(call(api, "GET", f"/clock/{tenant}", token))


def test_a_tenant_created_with_a_test_clock_shows_it_standing_at_its_creation(api, admin_token, sandbox, clock):
    clock.advance(hours=5)  # real time goes on; the test clock does not

    assert clock_of(api, admin_token, sandbox) == {
        "tenantLocator": sandbox,
        "testClock": True,
        "now": CREATED,
        "status": "ready",
    }


def test_a_tenant_without_a_test_clock_shows_the_real_time(api, admin_token, clock):
    tenant = configured_tenant(api, admin_token)
    clock.advance(hours=5)

    assert clock_of(api, admin_token, tenant) == {
        "tenantLocator": tenant,
        "testClock": False,
        "now": "2026-01-15T14:30:00.000Z",
        "status": "ready",
    }


def test_an_advance_answers_the_clock_advancing_then_runs_and_leaves_it_ready_at_its_target(
    api, admin_token, sandbox, jobs
):
    response = request_advance(api, admin_token, sandbox, "2026-06-01T00:00:00Z")

    assert ok(response) == {
        "tenantLocator": sandbox,
        "testClock": True,
        "now": CREATED,
        "status": "advancing",
        "advancingTo": "2026-06-01T00:00:00.000Z",
    }
    assert clock_of(api, admin_token, sandbox)["status"] == "advancing"
    assert event_types(api, admin_token, sandbox, response) == ["clock.advance.start"]
    assert [m.job_type for m in jobs.sent] == [JobType.CLOCK_ADVANCE]

    jobs.drain()

    assert clock_of(api, admin_token, sandbox) == {
        "tenantLocator": sandbox,
        "testClock": True,
        "now": "2026-06-01T00:00:00.000Z",
        "status": "ready",
    }
    assert event_types(api, admin_token, sandbox, response) == ["clock.advance.start", "clock.advance.finish"]


def test_records_made_after_an_advance_carry_the_tenants_time_and_the_token_still_works(
    api, admin_token, sandbox, jobs, clock
):
    """Business time is the tenant's clock; the token is checked on real time (the FixedClock, where the
    session token of the administrator is valid), however far the tenant's clock went."""
    request_advance(api, admin_token, sandbox, "2029-03-01T12:00:00+01:00")
    jobs.drain()

    account = ok(
        call(
            api,
            "POST",
            f"/policy/{sandbox}/accounts",
            admin_token,
            {
                "type": "PersonAccount",
                "data": {
                    "firstName": "Ada",
                    "lastName": "Lovelace",
                    "email": "ada@example.com",
                    "address": {"line1": "12 St James's Square", "city": "London"},
                },
            },
        )
    )

    assert account["createdAt"] == "2029-03-01T11:00:00.000Z"
    assert clock.now() == datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)  # real time did not move
    ordinary = configured_tenant(api, admin_token)
    other = ok(
        call(
            api,
            "POST",
            f"/policy/{ordinary}/accounts",
            admin_token,
            {
                "type": "PersonAccount",
                "data": {
                    "firstName": "Ada",
                    "lastName": "Lovelace",
                    "email": "ada@example.com",
                    "address": {"line1": "12 St James's Square", "city": "London"},
                },
            },
        )
    )
    assert other["createdAt"] == CREATED


@pytest.mark.parametrize("to", ["2026-01-15T09:30:00Z", "2026-01-15T10:29:59+01:00", "2025-12-31T00:00:00Z"])
def test_an_advance_to_the_clocks_now_or_before_is_refused_and_changes_nothing(api, admin_token, sandbox, jobs, to):
    assert_error(request_advance(api, admin_token, sandbox, to), 400, "clock.not_forward")

    assert clock_of(api, admin_token, sandbox)["status"] == "ready"
    assert jobs.sent == []


def test_a_tenant_without_a_test_clock_cannot_be_advanced(api, admin_token, jobs):
    tenant = configured_tenant(api, admin_token)

    assert_error(request_advance(api, admin_token, tenant, "2030-01-01T00:00:00Z"), 409, "clock.not_a_test_clock")
    assert jobs.sent == []


def test_a_clock_that_is_advancing_cannot_be_advanced_again(api, admin_token, sandbox, jobs):
    ok(request_advance(api, admin_token, sandbox, "2026-03-01T00:00:00Z"))

    assert_error(request_advance(api, admin_token, sandbox, "2027-01-01T00:00:00Z"), 409, "clock.advancing")
    assert len(jobs.sent) == 1

    jobs.drain()
    ok(request_advance(api, admin_token, sandbox, "2027-01-01T00:00:00Z"))  # once ready, it can


def test_of_two_parallel_advances_one_wins_and_the_other_answers_409(api, admin_token, sandbox, jobs, monkeypatch):
    """Both read the clock ready before either marked it advancing: the conditional write lets one through."""
    before = clock_service.read(sandbox)
    ok(request_advance(api, admin_token, sandbox, "2026-03-01T00:00:00Z"))
    monkeypatch.setattr(clock_service, "read", lambda tenant: before)

    assert_error(request_advance(api, admin_token, sandbox, "2026-04-01T00:00:00Z"), 409, "clock.advancing")

    monkeypatch.undo()
    assert clock_of(api, admin_token, sandbox)["advancingTo"] == "2026-03-01T00:00:00.000Z"
    assert len(jobs.sent) == 1
    # (requests really sent at once: tests/e2e/test_parallel_writes.py, through the local stack)


@pytest.mark.parametrize("body", [{}, {"to": "soon"}, {"to": "2027-01-01T00:00:00Z", "from": "now"}, []])
def test_a_body_that_is_no_advance_is_refused(api, admin_token, sandbox, body):
    assert_error(call(api, "POST", f"/clock/{sandbox}/advance", admin_token, body), 400, "request.invalid")


def test_test_clocks_are_refused_where_the_stage_does_not_allow_them(api, admin_token, monkeypatch):
    from chalicelib.identity import service as identity
    from chalicelib.settings import reload

    tenants = len(identity.list_tenant_locators())
    monkeypatch.setenv("PAS_TEST_CLOCKS", "false")
    reload()
    try:
        from tests.support.configs import package, policy_model

        response = api.http.post(
            "/config/createTenant?testClock=true",
            body=package(policy_model()),
            headers={"Authorization": f"Bearer {admin_token}", "Content-Type": "application/zip"},
        )
        assert_error(response, 403, "clock.test_clocks_disabled")
        assert len(identity.list_tenant_locators()) == tenants
        configured_tenant(api, admin_token)  # an ordinary tenant still can be made
    finally:
        monkeypatch.undo()
        reload()


def test_reading_the_clock_of_an_ordinary_tenant_costs_no_call_once_the_process_knows_it(api, admin_token, ddb_calls):
    """The fact that a tenant has no test clock is kept by the process: its requests read no clock item.
    A test-clock tenant's requests read its clock (one GetItem) each time."""
    tenant = configured_tenant(api, admin_token)
    sandbox = configured_tenant(api, admin_token, test_clock=True)
    path = "/policy/{}/accounts/list"

    def gets(tenant_locator):
        ddb_calls.clear()
        ok(call(api, "GET", path.format(tenant_locator), admin_token))
        return Counter(ddb_calls)["GetItem"]

    known = gets(tenant)
    clock_service.forget(tenant)  # as a process that never saw the tenant
    assert gets(tenant) == known + 1
    assert gets(tenant) == known
    assert gets(sandbox) == known + 1
    assert gets(sandbox) == known + 1


def test_creating_a_tenant_with_a_test_clock_honours_an_idempotency_key(api, admin_token):
    from chalicelib.core.ids import new_locator
    from tests.support.configs import package, policy_model

    headers = {
        "Authorization": f"Bearer {admin_token}",
        "Content-Type": "application/zip",
        "X-Idempotency-Key": f"sandbox-{new_locator()}",
    }
    body = package(policy_model())  # once: a ZIP stamps its files with the time it is made
    first = api.http.post("/config/createTenant?testClock=true", body=body, headers=headers)
    again = api.http.post("/config/createTenant?testClock=true", body=body, headers=headers)

    created = ok(first)
    assert ok(again) == created
    assert clock_of(api, admin_token, created["locator"])["testClock"] is True
