"""GET /event/{t}/events/schedules/policy/{policyLocator}: the configured custom events scheduled on a
policy, with their trigger state and next time. The policy runs 2026-02-01 to 2027-02-01 in New York;
the clock stands at 2026-01-15 09:30 UTC."""

from __future__ import annotations

from datetime import datetime, timezone

from tests.api.policies.support import issue, new_account, policies_model, policies_tenant
from tests.support.api import assert_error, call, ok

CUSTOM_EVENTS = {
    "welcome": {"type": "notice", "schedule": {"anchor": "policyStart", "offset": {"days": 1}}},
    "monthlyCheck": {
        "type": "check",
        "schedule": {
            "anchor": "termStart",
            "alignment": "monthStart",
            "offset": {"days": 1},
            "cadence": {"durationBasis": "months", "intervalDuration": 1, "limit": 6},
        },
    },
    "renewalNotice": {
        "type": "notice",
        "schedule": {"anchor": "policyEnd", "offset": {"days": -30}, "suppressOnStatuses": ["pending"]},
    },
    "segmentReview": {"type": "check", "schedule": {"anchor": "segmentStart", "offset": {"weeks": -1}}},
    "unscheduled": {"type": "notice"},
}


def schedules(api, token, tenant, policy):
    return ok(call(api, "GET", f"/event/{tenant}/events/schedules/policy/{policy}", token))


def by_id(items):
    return {item["customEventId"]: item for item in items}


def test_each_scheduled_custom_event_shows_its_state_and_next_time(api, admin_token):
    model = policies_model()
    model["customEvents"] = CUSTOM_EVENTS
    tenant = policies_tenant(api, admin_token, model)
    issued = issue(tenant, new_account(api, admin_token, tenant))

    items = by_id(schedules(api, admin_token, tenant, issued.policyLocator))

    assert set(items) == {"welcome", "monthlyCheck", "renewalNotice", "segmentReview"}
    assert items["welcome"] == {
        "policyLocator": issued.policyLocator,
        "transactionLocator": issued.transactionLocator,
        "customEventId": "welcome",
        "eventId": "welcome",
        "triggerState": "NORMAL",
        "nextEventTime": "2026-02-02T05:00:00.000Z",
    }
    assert (items["monthlyCheck"]["triggerState"], items["monthlyCheck"]["nextEventTime"]) == (
        "NORMAL",
        "2026-03-01T05:00:00.000Z",
    )
    assert (items["renewalNotice"]["triggerState"], items["renewalNotice"]["nextEventTime"]) == (
        "BLOCKED",
        "2027-01-02T05:00:00.000Z",
    )  # the policy is still pending
    assert (items["segmentReview"]["triggerState"], items["segmentReview"]["nextEventTime"]) == (
        "NORMAL",
        "2026-01-25T05:00:00.000Z",
    )  # a week before the only segment's start


def test_later_the_past_events_are_complete_and_recurring_ones_move_on(api, admin_token, clock):
    model = policies_model()
    model["customEvents"] = CUSTOM_EVENTS
    tenant = policies_tenant(api, admin_token, model)
    issued = issue(tenant, new_account(api, admin_token, tenant))
    clock.set(datetime(2026, 5, 20, tzinfo=timezone.utc))

    items = by_id(schedules(api, admin_token, tenant, issued.policyLocator))

    assert (items["welcome"]["triggerState"], items["welcome"].get("nextEventTime")) == ("COMPLETE", None)
    assert items["monthlyCheck"]["nextEventTime"] == "2026-06-01T04:00:00.000Z"
    assert items["renewalNotice"]["triggerState"] == "NORMAL"
    assert (items["segmentReview"]["triggerState"], items["segmentReview"].get("nextEventTime")) == ("COMPLETE", None)
    clock.set(datetime(2026, 9, 1, 5, tzinfo=timezone.utc))
    assert (
        by_id(schedules(api, admin_token, tenant, issued.policyLocator))["monthlyCheck"]["triggerState"] == "COMPLETE"
    )  # six events: Mar to Aug


def test_a_policy_whose_configuration_schedules_nothing_has_no_scheduled_events(api, admin_token):
    tenant = policies_tenant(api, admin_token)
    issued = issue(tenant, new_account(api, admin_token, tenant))

    assert schedules(api, admin_token, tenant, issued.policyLocator) == []


def test_another_tenants_policy_is_not_found(api, admin_token):
    model = policies_model()
    model["customEvents"] = CUSTOM_EVENTS
    tenant = policies_tenant(api, admin_token, model)
    issued = issue(tenant, new_account(api, admin_token, tenant))
    other = policies_tenant(api, admin_token, model)

    response = call(api, "GET", f"/event/{other}/events/schedules/policy/{issued.policyLocator}", admin_token)

    assert_error(response, 404, "policy.not_found")
