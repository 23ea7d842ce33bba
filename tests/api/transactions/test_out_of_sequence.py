"""Out of sequence: a change effective before an issued later one is issued inside an aggregate (the later
one reversed, the new one, the later one reapplied keeping its static locator), and the policy ends up as
issuing them in sequence would have left it: the same coverage and, per charge type, the same money."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from tests.api.transactions.support import (
    AUGUST,
    END,
    MID_MARCH,
    amounts,
    create,
    issued_policy,
    issued_transaction,
    modify,
    params,
    policy_path,
    segment_of_policy,
    segment_shown_last,
    step,
    transaction_path,
    vehicle_of,
)
from tests.support.api import call, event_types, ok

D = Decimal


def _change(api, token, tenant, policy_locator, effective, value):
    policy = ok(call(api, "GET", policy_path(tenant, policy_locator), token))
    static = vehicle_of(segment_of_policy(api, token, tenant, policy))["staticLocator"]
    return ok(create(api, token, tenant, policy_locator, "change", [params(effective), modify(static, value=value)]))


def _issued_change(api, token, tenant, policy_locator, effective, value):
    draft = _change(api, token, tenant, policy_locator, effective, value)
    return draft, step(api, token, tenant, draft["locator"], "issue")


def _charges(api, token, tenant, locators):
    return [
        charge
        for locator in locators
        for charge in ok(call(api, "GET", transaction_path(tenant, locator, "/price"), token))["charges"]
    ]


def _totals(charges):
    total = defaultdict(Decimal)
    for charge in charges:
        total[charge["chargeType"]] += D(str(charge["amount"]))
    return dict(total)


def _value_at(api, token, tenant, policy_locator, date):
    snapshot = ok(call(api, "GET", policy_path(tenant, policy_locator, f"/snapshot?date={date}"), token))
    return vehicle_of(snapshot["transaction"]["segment"])["data"]["value"]


def test_a_change_before_an_issued_later_one_is_issued_in_an_aggregate_that_equals_issuing_in_sequence(
    api, admin_token, tenant, account, policy, ddb_calls
):
    later, _ = _issued_change(api, admin_token, tenant, policy["locator"], AUGUST, "25000")
    earlier = _change(api, admin_token, tenant, policy["locator"], MID_MARCH, "60000")
    ddb_calls.clear()
    response = step(api, admin_token, tenant, earlier["locator"], "issue")
    issued = ok(response)

    assert ddb_calls.count("TransactWriteItems") == 1
    assert issued["transactionState"] == "issued"
    aggregate = ok(call(api, "GET", transaction_path(tenant, issued["aggregateTransactionLocator"]), admin_token))
    parts = aggregate["aggregatedTransactions"]
    assert [(p["transactionCategory"], p["transactionState"]) for p in parts] == [
        ("reversal", "issued"),
        ("change", "issued"),
        ("change", "issued"),
    ]
    reversal, new, reapplied = parts
    assert new["locator"] == earlier["locator"]
    assert (reapplied["staticLocator"], reapplied["reapplicationOfLocator"]) == (
        later["staticLocator"],
        later["locator"],
    )
    assert reapplied["effectiveTime"] == AUGUST
    assert (
        ok(call(api, "GET", transaction_path(tenant, later["locator"]), admin_token))["transactionState"] == "reversed"
    )
    assert "policy.change.issue" in event_types(api, admin_token, tenant, response)

    # the same two changes issued in sequence on a policy of their own
    other = issued_policy(api, admin_token, tenant, account)
    first, _ = _issued_change(api, admin_token, tenant, other["locator"], MID_MARCH, "60000")
    second, _ = _issued_change(api, admin_token, tenant, other["locator"], AUGUST, "25000")

    out_of_sequence = _charges(
        api, admin_token, tenant, [policy["issuedTransactionLocator"], later["locator"], *(p["locator"] for p in parts)]
    )
    in_sequence = _charges(
        api, admin_token, tenant, [other["issuedTransactionLocator"], first["locator"], second["locator"]]
    )
    # 1 + 15/31 months at 100, 4 + 16/31 months at 200, 6 months at 150; tax: 3.09 + 10.74 + 25
    assert _totals(out_of_sequence) == _totals(in_sequence) == {"premium": D("1951.62"), "tax": D("38.83")}
    for date in ("2026-03-01T05:00:00Z", "2026-05-01T04:00:00Z", "2026-09-01T04:00:00Z"):
        assert _value_at(api, admin_token, tenant, policy["locator"], date) == _value_at(
            api, admin_token, tenant, other["locator"], date
        )
    assert _value_at(api, admin_token, tenant, policy["locator"], "2026-09-01T04:00:00Z") == D("25000.00")
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["issuedTransactionLocator"] == aggregate["locator"]
    listed = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/issuedTransactions/list"), admin_token))
    assert later["locator"] not in [t["locator"] for t in listed["items"]]


def test_affected_transactions_say_beforehand_what_issuing_reverses_and_invalidates(api, admin_token, tenant, policy):
    later, _ = _issued_change(api, admin_token, tenant, policy["locator"], AUGUST, "25000")
    earlier = ok(create(api, admin_token, tenant, policy["locator"], "change", [params(MID_MARCH)]))
    branch = ok(create(api, admin_token, tenant, policy["locator"], "change", [params(AUGUST)]))

    expected = [
        {"locator": later["locator"], "action": "reversed"},
        {"locator": branch["locator"], "action": "invalidated"},
    ]
    assert (
        ok(call(api, "GET", transaction_path(tenant, earlier["locator"], "/affectedTransactions"), admin_token))
        == expected
    )
    assert (
        ok(call(api, "GET", transaction_path(tenant, earlier["locator"], "/affectedTransactions/list"), admin_token))
        == expected
    )


def test_a_change_before_a_reinstatement_leaves_the_policy_on_the_segment_its_snapshot_shows(
    api, admin_token, tenant, policy
):
    issued_transaction(api, admin_token, tenant, policy["locator"], "cancel", params(AUGUST))
    issued_transaction(api, admin_token, tenant, policy["locator"], "reinstate", [])

    earlier, response = _issued_change(api, admin_token, tenant, policy["locator"], MID_MARCH, "60000")

    aggregate = ok(call(api, "GET", transaction_path(tenant, ok(response)["aggregateTransactionLocator"]), admin_token))
    assert [p["transactionCategory"] for p in aggregate["aggregatedTransactions"]] == [
        "reversal",
        "reversal",
        "change",
        "cancellation",
        "reinstatement",
    ]
    reinstated = aggregate["aggregatedTransactions"][-1]
    restored = ok(call(api, "GET", transaction_path(tenant, reinstated["locator"], "/segment"), admin_token))
    assert (restored["startTime"], restored["endTime"]) == (AUGUST, END)
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["latestSegmentLocator"] == segment_shown_last(api, admin_token, tenant, after) == restored["locator"]


def test_the_price_of_an_aggregate_shows_each_part_with_its_charges(api, admin_token, tenant, policy):
    later, _ = _issued_change(api, admin_token, tenant, policy["locator"], AUGUST, "25000")
    earlier, response = _issued_change(api, admin_token, tenant, policy["locator"], MID_MARCH, "60000")
    aggregate = ok(response)["aggregateTransactionLocator"]

    price = ok(call(api, "GET", transaction_path(tenant, aggregate, "/price"), admin_token))

    parts = price.pop("aggregatedTransactions")
    assert price == {
        "locator": aggregate,
        "policyLocator": policy["locator"],
        "effectiveTime": MID_MARCH,
        "transactionState": "issued",
        "transactionCategory": "aggregate",
        "charges": [],
    }
    assert [(p["transactionCategory"], amounts(p["charges"])) for p in parts] == [
        # the later change reversed: its charges negated
        (
            "reversal",
            [
                ("premium", D("-900.00"), True),
                ("premium", D("600.00"), True),
                ("tax", D("-25"), True),
                ("tax", D("12.50"), True),
            ],
        ),
        # 10 + 16/31 months at 200; the issuance's segment kept for 1 + 15/31 months
        (
            "change",
            [
                ("premium", D("-1051.61"), True),
                ("premium", D("2103.23"), False),
                ("tax", D("-21.91"), True),
                ("tax", D("25"), False),
            ],
        ),
        # the later change reapplied: 6 months at 150; the new segment kept for 4 + 16/31 months
        (
            "change",
            [
                ("premium", D("-1200.00"), True),
                ("premium", D("900.00"), False),
                ("tax", D("-14.26"), True),
                ("tax", D("25"), False),
            ],
        ),
    ]
    assert parts[1]["locator"] == earlier["locator"]
    for part in parts:
        assert ok(call(api, "GET", transaction_path(tenant, part["locator"], "/price"), admin_token)) == part


def test_the_parts_of_an_aggregate_that_make_no_segment_answer_the_one_they_leave_in_force(
    api, admin_token, tenant, policy
):
    _issued_change(api, admin_token, tenant, policy["locator"], AUGUST, "25000")
    _, response = _issued_change(api, admin_token, tenant, policy["locator"], MID_MARCH, "60000")
    aggregate = ok(call(api, "GET", transaction_path(tenant, ok(response)["aggregateTransactionLocator"]), admin_token))
    reversal, _, reapplied = aggregate["aggregatedTransactions"]

    def segment_of(locator):
        return ok(call(api, "GET", transaction_path(tenant, locator, "/segment"), admin_token))

    # the later change reversed: the issuance's segment in force again; after the aggregate, the reapplied one's
    assert segment_of(reversal["locator"])["locator"] == policy["latestSegmentLocator"]
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert segment_of(aggregate["locator"]) == segment_of(reapplied["locator"])
    assert segment_of(aggregate["locator"])["locator"] == after["latestSegmentLocator"]


def test_drafts_built_on_a_transaction_issued_out_of_sequence_are_the_policys_one_branch(
    api, admin_token, tenant, policy
):
    _issued_change(api, admin_token, tenant, policy["locator"], AUGUST, "25000")
    earlier = _change(api, admin_token, tenant, policy["locator"], MID_MARCH, "60000")
    chained = ok(
        create(
            api,
            admin_token,
            tenant,
            policy["locator"],
            "change",
            [params(AUGUST)],
            f"?baseLocator={earlier['locator']}",
        )
    )

    issued = ok(step(api, admin_token, tenant, earlier["locator"], "issue"))

    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["issuedTransactionLocator"] == issued["aggregateTransactionLocator"]
    assert after["branchHeadTransactionLocators"] == [chained["locator"]]
