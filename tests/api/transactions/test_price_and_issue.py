"""Pricing and issuing transactions through the API, with exact charges: a change effective on a whole
month and one a fraction of a month (after the switch to summer time) into the policy, a cancellation,
a reinstatement at the cancellation time, a renewal; and what issuing writes (segments, terms, the policy
root, invalidated branches, events) in one TransactWriteItems."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

from tests.api.transactions.support import (
    AUGUST,
    END,
    MID_MARCH,
    amounts,
    create,
    modify,
    params,
    policy_path,
    segment_of_policy,
    step,
    transaction_path,
    vehicle_of,
)
from tests.support.api import assert_error, call, event_types, events_of, ok

D = Decimal


def _priced_change(api, token, tenant, policy, effective, value="25000"):
    static = vehicle_of(segment_of_policy(api, token, tenant, policy))["staticLocator"]
    body = [params(effective), modify(static, value=value)]
    draft = ok(create(api, token, tenant, policy["locator"], "change", body))
    return draft, ok(step(api, token, tenant, draft["locator"], "price"))


def test_a_change_on_a_whole_month_rates_its_segment_and_reverses_what_it_replaces(api, admin_token, tenant, policy):
    draft, priced = _priced_change(api, admin_token, tenant, policy, AUGUST)

    assert (priced["transactionState"], priced["transactionCategory"]) == ("priced", "change")
    # six months at 150 and the tax amount of the new segment; six months of 100 and half the tax taken back
    assert amounts(priced["charges"]) == [
        ("premium", D("-600.00"), True),
        ("premium", D("900.00"), False),
        ("tax", D("-12.50"), True),
        ("tax", D("25"), False),
    ]
    original = {c["chargeType"]: c["locator"] for c in issued_charges(api, admin_token, tenant, policy)}
    assert {
        c["chargeType"]: c["reversalOfLocator"] for c in priced["charges"] if c.get("reversalOfLocator")
    } == original
    assert ok(call(api, "GET", transaction_path(tenant, draft["locator"], "/price"), admin_token)) == priced


def test_a_change_a_fraction_of_a_month_in_prorates_by_the_month_it_falls_in(api, admin_token, tenant, policy):
    _, priced = _priced_change(api, admin_token, tenant, policy, MID_MARCH)

    # kept: 1 + 15/31 months of 100 = 148.39; new: 10 + 16/31 months of 150 = 1577.42; tax kept 3.09
    assert amounts(priced["charges"]) == [
        ("premium", D("-1051.61"), True),
        ("premium", D("1577.42"), False),
        ("tax", D("-21.91"), True),
        ("tax", D("25"), False),
    ]


def issued_charges(api, token, tenant, policy):
    """The charges of the policy's issuance transaction."""
    return ok(call(api, "GET", transaction_path(tenant, policy["issuedTransactionLocator"], "/price"), token))[
        "charges"
    ]


def test_issuing_a_change_writes_its_segment_and_moves_the_policy_on_in_one_transaction(
    api, admin_token, tenant, policy, ddb_calls
):
    draft, _ = _priced_change(api, admin_token, tenant, policy, AUGUST)
    ddb_calls.clear()
    response = step(api, admin_token, tenant, draft["locator"], "issue")
    issued = ok(response)

    assert (issued["transactionState"], issued["issuedTime"]) == ("issued", "2026-01-15T09:30:00.000Z")
    assert event_types(api, admin_token, tenant, response) == [
        "policy.change.underwrite",
        "policy.change.accept",
        "policy.change.issue",
    ]
    assert ddb_calls.count("TransactWriteItems") == 1
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["issuedTransactionLocator"] == draft["locator"]
    assert after["branchHeadTransactionLocators"] == [draft["locator"]]
    assert after["endTime"] == END
    segment = segment_of_policy(api, admin_token, tenant, after)
    assert (segment["transactionLocator"], segment["startTime"], segment["endTime"]) == (draft["locator"], AUGUST, END)
    assert vehicle_of(segment)["data"]["value"] == D("25000.00")
    listed = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/issuedTransactions/list"), admin_token))
    assert [t["locator"] for t in listed["items"]] == [policy["issuedTransactionLocator"], draft["locator"]]


def test_issuing_one_branch_invalidates_the_others(api, admin_token, tenant, policy):
    first, _ = _priced_change(api, admin_token, tenant, policy, AUGUST)
    second = ok(create(api, admin_token, tenant, policy["locator"], "change", [params(MID_MARCH)]))

    ok(step(api, admin_token, tenant, first["locator"], "issue"))

    invalidated = ok(call(api, "GET", transaction_path(tenant, second["locator"]), admin_token))
    assert invalidated["transactionState"] == "invalidated"
    assert_error(step(api, admin_token, tenant, second["locator"], "issue"), 409, "transaction.invalid_state")
    assert ok(call(api, "GET", policy_path(tenant, policy["locator"], "/branches"), admin_token)) == {}


def test_issuing_a_head_leaves_one_branch_the_drafts_based_on_it(api, admin_token, tenant, policy):
    first, _ = _priced_change(api, admin_token, tenant, policy, MID_MARCH)
    second = ok(create(api, admin_token, tenant, policy["locator"], "change", [params(AUGUST)]))
    chained = ok(
        create(
            api, admin_token, tenant, policy["locator"], "change", [params(AUGUST)], f"?baseLocator={first['locator']}"
        )
    )
    assert ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))[
        "branchHeadTransactionLocators"
    ] == [second["locator"], chained["locator"]]

    ok(step(api, admin_token, tenant, first["locator"], "issue"))

    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["issuedTransactionLocator"] == first["locator"]
    assert after["branchHeadTransactionLocators"] == [chained["locator"]]
    assert (
        ok(call(api, "GET", transaction_path(tenant, second["locator"]), admin_token))["transactionState"]
        == "invalidated"
    )
    ok(step(api, admin_token, tenant, chained["locator"], "issue"))
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["branchHeadTransactionLocators"] == [chained["locator"]] == [after["issuedTransactionLocator"]]


def test_cancel_then_reinstate_at_the_cancellation_time_gives_everything_back(api, admin_token, tenant, policy):
    cancellation = ok(create(api, admin_token, tenant, policy["locator"], "cancel", params(AUGUST)))
    response = step(api, admin_token, tenant, cancellation["locator"], "issue")
    cancelled = ok(response)
    assert event_types(api, admin_token, tenant, response) == [
        "policy.cancellation.update",
        "policy.cancellation.validate",
        "policy.cancellation.price",
        "policy.cancellation.underwrite",
        "policy.cancellation.accept",
        "policy.cancellation.issue",
        "policy.status.update",
    ]
    priced = ok(call(api, "GET", transaction_path(tenant, cancelled["locator"], "/price"), admin_token))
    assert amounts(priced["charges"]) == [("premium", D("-600.00"), True), ("tax", D("-12.50"), True)]
    gap = segment_of_policy(
        api, admin_token, tenant, ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    )
    assert (gap["segmentType"], gap["startTime"], gap["endTime"]) == ("gap", AUGUST, END)

    reinstatement = ok(create(api, admin_token, tenant, policy["locator"], "reinstate", []))
    assert reinstatement["effectiveTime"] == AUGUST
    ok(step(api, admin_token, tenant, reinstatement["locator"], "issue"))
    restored = ok(call(api, "GET", transaction_path(tenant, reinstatement["locator"], "/price"), admin_token))

    assert amounts(restored["charges"]) == [("premium", D("600.00"), True), ("tax", D("12.50"), True)]
    segment = segment_of_policy(
        api, admin_token, tenant, ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    )
    assert (segment["segmentType"], segment["startTime"]) == ("coverage", AUGUST)
    assert vehicle_of(segment)["data"]["value"] == D("12000.50")


def test_a_renewal_opens_the_next_term_and_moves_the_policy_end(api, admin_token, tenant, policy):
    renewal = ok(create(api, admin_token, tenant, policy["locator"], "renew", []))
    priced = ok(step(api, admin_token, tenant, renewal["locator"], "price"))
    assert amounts(priced["charges"]) == [("premium", D("1200.00"), False), ("tax", D("25"), False)]

    response = step(api, admin_token, tenant, renewal["locator"], "issue")
    ok(response)

    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["endTime"] == "2028-02-01T05:00:00.000Z"
    assert after["latestTermLocator"] == renewal["termLocator"]
    terms = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/terms/list"), admin_token))["items"]
    assert [(t["number"], t["startTime"], t["endTime"]) for t in terms] == [
        (0, "2026-02-01T05:00:00.000Z", END),
        (1, END, "2028-02-01T05:00:00.000Z"),
    ]
    assert terms[1]["previousTermLocator"] == terms[0]["locator"]
    assert "policy.renewal.issue" in event_types(api, admin_token, tenant, response)


def test_the_round_trips_of_a_change_do_not_grow_with_earlier_transactions(api, admin_token, tenant, policy, ddb_calls):
    counts = []
    for month, value in (
        ("2026-04-01T04:00:00Z", "13000"),
        ("2026-06-01T04:00:00Z", "14000"),
        ("2026-09-01T04:00:00Z", "15000"),
    ):
        current = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
        static = vehicle_of(segment_of_policy(api, admin_token, tenant, current))["staticLocator"]
        ddb_calls.clear()
        draft = ok(
            create(api, admin_token, tenant, policy["locator"], "change", [params(month), modify(static, value=value)])
        )
        created = list(ddb_calls)
        ddb_calls.clear()
        ok(step(api, admin_token, tenant, draft["locator"], "issue"))
        counts.append((created, sorted(ddb_calls)))
    assert counts[0] == counts[1] == counts[2]
    assert counts[0][1].count("TransactWriteItems") == 1


def test_the_events_of_a_transaction_name_the_policy_and_the_transaction(api, admin_token, tenant, policy):
    draft, _ = _priced_change(api, admin_token, tenant, policy, AUGUST)
    response = step(api, admin_token, tenant, draft["locator"], "underwrite")
    (event,) = events_of(api, admin_token, tenant, response)
    assert (event["type"], event["data"]) == (
        "policy.change.underwrite",
        {"policyLocator": policy["locator"], "transactionLocator": draft["locator"], "underwritingStatus": "info"},
    )


def test_an_issued_cancellation_sets_the_policy_statuses_and_says_so(api, admin_token, tenant, policy, clock):
    clock.set(datetime(2026, 3, 1, 12, tzinfo=timezone.utc))
    cancellation = ok(create(api, admin_token, tenant, policy["locator"], "cancel", params(AUGUST)))
    response = step(api, admin_token, tenant, cancellation["locator"], "issue")
    ok(response)

    status_events = [e for e in events_of(api, admin_token, tenant, response) if e["type"] == "policy.status.update"]
    assert [e["data"] for e in status_events] == [
        {
            "policyLocator": policy["locator"],
            "newStatuses": {"listCompleted": True, "items": ["cancelPending"]},
            "removedStatuses": {"listCompleted": True, "items": []},
        }
    ]
    fetched = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert fetched["statuses"] == ["onRisk", "cancelPending"]
    clock.set(datetime(2026, 8, 1, 4, tzinfo=timezone.utc))
    assert ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))["statuses"] == ["cancelled"]

    reinstatement = ok(create(api, admin_token, tenant, policy["locator"], "reinstate", []))
    response = step(api, admin_token, tenant, reinstatement["locator"], "issue")
    ok(response)
    (event,) = [e for e in events_of(api, admin_token, tenant, response) if e["type"] == "policy.status.update"]
    assert (event["data"]["newStatuses"]["items"], event["data"]["removedStatuses"]["items"]) == (
        ["onRisk"],
        ["cancelled"],
    )
    assert ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))["statuses"] == ["onRisk"]


def test_a_transaction_whose_base_is_no_longer_the_latest_is_refused_or_rebased(api, admin_token, tenant, policy):
    first = ok(create(api, admin_token, tenant, policy["locator"], "change", [params(MID_MARCH)]))
    static = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
    chained = ok(
        create(
            api,
            admin_token,
            tenant,
            policy["locator"],
            "change",
            [params(AUGUST), modify(static, value="25000")],
            f"?baseLocator={first['locator']}",
        )
    )
    ok(step(api, admin_token, tenant, first["locator"], "discard"))

    stale = step(api, admin_token, tenant, chained["locator"], "issue")
    assert_error(stale, 409, "transaction.stale_base")
    assert event_types(api, admin_token, tenant, stale) == []

    rebased = ok(step(api, admin_token, tenant, chained["locator"], "issue", "?autoRebase=true"))
    assert (rebased["transactionState"], rebased["baseTransactionLocator"]) == (
        "issued",
        policy["issuedTransactionLocator"],
    )
    priced = ok(call(api, "GET", transaction_path(tenant, chained["locator"], "/price"), admin_token))
    assert amounts(priced["charges"]) == [
        ("premium", D("-600.00"), True),
        ("premium", D("900.00"), False),
        ("tax", D("-12.50"), True),
        ("tax", D("25"), False),
    ]


def test_the_round_trips_of_a_change_do_not_grow_with_the_elements(api, admin_token, tenant, account, ddb_calls):
    from tests.api.quotes.support import vehicle
    from tests.api.transactions.support import issued_policy

    counts = []
    for vehicles in (1, 12):
        policy = issued_policy(
            api,
            admin_token,
            tenant,
            account,
            elements=[vehicle(vin=f"1HGCM82633A{index:06d}") for index in range(vehicles)],
        )
        static = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
        ddb_calls.clear()
        draft = ok(
            create(
                api, admin_token, tenant, policy["locator"], "change", [params(AUGUST), modify(static, value="25000")]
            )
        )
        ok(step(api, admin_token, tenant, draft["locator"], "issue"))
        counts.append(sorted(ddb_calls))
    assert counts[0] == counts[1]


def test_an_issue_invalidating_more_branches_than_one_write_holds_writes_the_rest_after(
    api, admin_token, tenant, policy, ddb_calls, monkeypatch
):
    """With a write of 40 records instead of DynamoDB's 100: the same steps, 41 branches instead of 101."""
    from chalicelib.storage import unit_of_work

    monkeypatch.setattr(unit_of_work, "MAX_TRANSACTION_ITEMS", 40)
    branches = [
        ok(create(api, admin_token, tenant, policy["locator"], "change", [params(AUGUST)]))["locator"]
        for _ in range(41)
    ]
    ddb_calls.clear()
    ok(step(api, admin_token, tenant, branches[0], "issue"))

    assert ddb_calls.count("TransactWriteItems") == 2
    states = {
        ok(call(api, "GET", transaction_path(tenant, locator), admin_token))["transactionState"]
        for locator in branches[1:]
    }
    assert states == {"invalidated"}


def test_a_renewal_may_last_another_term_length_than_the_policys(api, admin_token, tenant, policy):
    """What the auto-renewal job asks for (its plan's newTermDuration), through the service."""
    from chalicelib.transactions import service
    from tests.builders import system_ctx

    renewal = service.create_transaction(
        system_ctx().for_tenant(tenant), policy["locator"], [], route="renew", term_duration=D(6)
    )
    priced = ok(step(api, admin_token, tenant, renewal.locator, "price"))
    segment = ok(call(api, "GET", transaction_path(tenant, renewal.locator, "/segment"), admin_token))

    assert (segment["startTime"], segment["endTime"]) == (END, "2027-08-01T04:00:00.000Z")
    assert amounts(priced["charges"]) == [("premium", D("600.00"), False), ("tax", D("25"), False)]
