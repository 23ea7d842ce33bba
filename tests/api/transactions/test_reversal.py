"""Reversals (PATCH /policies/{locator}/reversal): a reversal transaction undoes issued transactions (their
charges negated, their coverage gone), reapplying the later ones it does not name; bad requests store
nothing; a reversed renewal, or one an earlier cancellation drops, takes its term away."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from tests.api.transactions.support import (
    AUGUST,
    END,
    MID_MARCH,
    START,
    amounts,
    create,
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
from tests.support.api import assert_error, call, event_types, ok

D = Decimal


def _issued_change(api, token, tenant, policy_locator, effective, value):
    policy = ok(call(api, "GET", policy_path(tenant, policy_locator), token))
    static = vehicle_of(segment_of_policy(api, token, tenant, policy))["staticLocator"]
    draft = ok(create(api, token, tenant, policy_locator, "change", [params(effective), modify(static, value=value)]))
    return ok(step(api, token, tenant, draft["locator"], "issue"))


def _reversal(api, token, tenant, policy_locator, base, to, *targets):
    return call(
        api,
        "PATCH",
        policy_path(tenant, policy_locator, "/reversal"),
        token,
        {"baseLocator": base, "toTransaction": to, "reverseTransactions": list(targets)},
    )


def _value_at(api, token, tenant, policy_locator, date):
    snapshot = ok(call(api, "GET", policy_path(tenant, policy_locator, f"/snapshot?date={date}"), token))
    return vehicle_of(snapshot["transaction"]["segment"])["data"]["value"]


def test_reversing_the_latest_change_negates_its_charges_and_gives_the_coverage_back(api, admin_token, tenant, policy):
    change = _issued_change(api, admin_token, tenant, policy["locator"], AUGUST, "25000")
    draft = ok(
        _reversal(
            api,
            admin_token,
            tenant,
            policy["locator"],
            change["locator"],
            policy["issuedTransactionLocator"],
            change["locator"],
        )
    )
    assert (draft["transactionCategory"], draft["transactionState"]) == ("reversal", "draft")

    response = step(api, admin_token, tenant, draft["locator"], "issue")
    issued = ok(response)

    assert issued["transactionState"] == "issued"
    assert "policy.reversal.issue" in event_types(api, admin_token, tenant, response)
    priced = ok(call(api, "GET", transaction_path(tenant, issued["locator"], "/price"), admin_token))
    assert amounts(priced["charges"]) == [
        ("premium", D("-900.00"), True),
        ("premium", D("600.00"), True),
        ("tax", D("-25"), True),
        ("tax", D("12.50"), True),
    ]
    assert (
        ok(call(api, "GET", transaction_path(tenant, change["locator"]), admin_token))["transactionState"] == "reversed"
    )
    assert _value_at(api, admin_token, tenant, policy["locator"], "2026-09-01T04:00:00Z") == D("12000.50")
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["issuedTransactionLocator"] == issued["locator"]
    assert after["latestSegmentLocator"] == policy["latestSegmentLocator"]


def test_reversing_an_earlier_change_reapplies_the_later_one(api, admin_token, tenant, policy):
    earlier = _issued_change(api, admin_token, tenant, policy["locator"], MID_MARCH, "60000")
    later = _issued_change(api, admin_token, tenant, policy["locator"], AUGUST, "25000")
    draft = ok(
        _reversal(
            api,
            admin_token,
            tenant,
            policy["locator"],
            later["locator"],
            policy["issuedTransactionLocator"],
            earlier["locator"],
        )
    )

    issued = ok(step(api, admin_token, tenant, draft["locator"], "issue"))

    fetched = ok(call(api, "GET", transaction_path(tenant, issued["locator"]), admin_token))
    (reapplied,) = fetched["aggregatedTransactions"]
    assert (reapplied["reapplicationOfLocator"], reapplied["staticLocator"]) == (
        later["locator"],
        later["staticLocator"],
    )
    states = {
        t: ok(call(api, "GET", transaction_path(tenant, t), admin_token))["transactionState"]
        for t in (earlier["locator"], later["locator"])
    }
    assert states == {earlier["locator"]: "reversed", later["locator"]: "reversed"}
    assert _value_at(api, admin_token, tenant, policy["locator"], "2026-05-01T04:00:00Z") == D("12000.50")
    assert _value_at(api, admin_token, tenant, policy["locator"], "2026-09-01T04:00:00Z") == D("25000.00")
    total = defaultdict(Decimal)
    for locator in (
        policy["issuedTransactionLocator"],
        earlier["locator"],
        later["locator"],
        issued["locator"],
        reapplied["locator"],
    ):
        for charge in ok(call(api, "GET", transaction_path(tenant, locator, "/price"), admin_token))["charges"]:
            total[charge["chargeType"]] += D(str(charge["amount"]))
    # six months at 100 then six at 150, as if only the later change had been issued; tax 12.50 + 25
    assert dict(total) == {"premium": D("1500.00"), "tax": D("37.50")}


def test_bad_reversal_requests_are_refused_and_store_nothing(api, admin_token, tenant, policy):
    change = _issued_change(api, admin_token, tenant, policy["locator"], AUGUST, "25000")
    issuance = policy["issuedTransactionLocator"]
    for response, status, code in [
        (
            _reversal(api, admin_token, tenant, policy["locator"], issuance, issuance, change["locator"]),
            409,
            "transaction.stale_base",
        ),
        (
            _reversal(api, admin_token, tenant, policy["locator"], change["locator"], issuance, issuance),
            409,
            "transaction.issuance_not_reversible",
        ),
        (
            _reversal(
                api, admin_token, tenant, policy["locator"], change["locator"], change["locator"], change["locator"]
            ),
            400,
            "transaction.invalid_reversal",
        ),
        (_reversal(api, admin_token, tenant, policy["locator"], change["locator"], issuance), 400, "request.invalid"),
    ]:
        assert_error(response, status, code)
        assert event_types(api, admin_token, tenant, response) == []
    assert ok(call(api, "GET", policy_path(tenant, policy["locator"], "/branches"), admin_token)) == {}


def test_reversing_a_renewal_removes_its_term_and_a_new_renewal_adds_it_again(api, admin_token, tenant, policy):
    renewal = issued_transaction(api, admin_token, tenant, policy["locator"], "renew", [])
    draft = ok(
        _reversal(
            api,
            admin_token,
            tenant,
            policy["locator"],
            renewal["locator"],
            policy["issuedTransactionLocator"],
            renewal["locator"],
        )
    )

    ok(step(api, admin_token, tenant, draft["locator"], "issue"))

    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    terms = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/terms/list"), admin_token))["items"]
    assert (after["endTime"], after["latestTermLocator"]) == (END, policy["latestTermLocator"])
    assert [(t["number"], t["startTime"], t["endTime"]) for t in terms] == [(0, START, END)]
    assert_error(
        call(api, "GET", f"/policy/{tenant}/terms/{renewal['termLocator']}", admin_token), 404, "term.not_found"
    )

    again = issued_transaction(api, admin_token, tenant, policy["locator"], "renew", [])
    terms = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/terms/list"), admin_token))["items"]
    assert [(t["number"], t["locator"], t["endTime"]) for t in terms] == [
        (0, policy["latestTermLocator"], END),
        (1, again["termLocator"], "2028-02-01T05:00:00.000Z"),
    ]


def test_a_cancellation_before_an_issued_renewal_drops_the_renewal_and_its_term(api, admin_token, tenant, policy):
    renewal = issued_transaction(api, admin_token, tenant, policy["locator"], "renew", [])
    cancellation = ok(create(api, admin_token, tenant, policy["locator"], "cancel", params(AUGUST)))

    issued = ok(step(api, admin_token, tenant, cancellation["locator"], "issue"))

    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    terms = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/terms/list"), admin_token))["items"]
    assert [(t["number"], t["startTime"], t["endTime"]) for t in terms] == [(0, START, END)]
    assert (after["endTime"], after["latestTermLocator"]) == (END, policy["latestTermLocator"])
    assert (
        ok(call(api, "GET", transaction_path(tenant, renewal["locator"]), admin_token))["transactionState"]
        == "reversed"
    )
    aggregate = ok(call(api, "GET", transaction_path(tenant, issued["aggregateTransactionLocator"]), admin_token))
    assert [
        (p["transactionCategory"], p["locator"] == issued["locator"]) for p in aggregate["aggregatedTransactions"]
    ] == [("reversal", False), ("cancellation", True)]
    assert_error(
        call(api, "GET", f"/policy/{tenant}/terms/{renewal['termLocator']}", admin_token), 404, "term.not_found"
    )


def test_reversing_a_renewal_after_a_reinstatement_leaves_the_policy_on_the_segment_its_snapshot_shows(
    api, admin_token, tenant, policy
):
    issued_transaction(api, admin_token, tenant, policy["locator"], "cancel", params(AUGUST))
    reinstatement = issued_transaction(api, admin_token, tenant, policy["locator"], "reinstate", [])
    restored = ok(call(api, "GET", transaction_path(tenant, reinstatement["locator"], "/segment"), admin_token))
    renewal = issued_transaction(api, admin_token, tenant, policy["locator"], "renew", [])
    draft = ok(
        _reversal(
            api,
            admin_token,
            tenant,
            policy["locator"],
            renewal["locator"],
            policy["issuedTransactionLocator"],
            renewal["locator"],
        )
    )

    ok(step(api, admin_token, tenant, draft["locator"], "issue"))

    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["endTime"] == END
    assert after["latestSegmentLocator"] == segment_shown_last(api, admin_token, tenant, after) == restored["locator"]


def test_a_reversal_answers_the_segment_it_leaves_in_force_before_anything_is_reapplied(
    api, admin_token, tenant, policy
):
    earlier = _issued_change(api, admin_token, tenant, policy["locator"], MID_MARCH, "60000")
    later = _issued_change(api, admin_token, tenant, policy["locator"], AUGUST, "25000")
    draft = ok(
        _reversal(
            api,
            admin_token,
            tenant,
            policy["locator"],
            later["locator"],
            policy["issuedTransactionLocator"],
            earlier["locator"],
        )
    )
    assert_error(
        call(api, "GET", transaction_path(tenant, draft["locator"], "/segment"), admin_token), 404, "segment.not_found"
    )  # nothing is in force after it until it is issued
    assert ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))[
        "branchHeadTransactionLocators"
    ] == [draft["locator"]]

    issued = ok(step(api, admin_token, tenant, draft["locator"], "issue"))

    # both changes reversed, the issuance's segment is in force again (the later change is reapplied after)
    segment = ok(call(api, "GET", transaction_path(tenant, issued["locator"], "/segment"), admin_token))
    issuance = ok(
        call(api, "GET", f"/policy/{tenant}/transactions/segments/{policy['latestSegmentLocator']}", admin_token)
    )
    assert segment == issuance
    assert (segment["transactionLocator"], segment["startTime"], segment["endTime"]) == (
        policy["issuedTransactionLocator"],
        START,
        END,
    )
    assert vehicle_of(segment)["data"]["value"] == D("12000.50")
    assert ok(call(api, "GET", transaction_path(tenant, issued["locator"], "/segments/list"), admin_token)) == [segment]
    (reapplied,) = ok(call(api, "GET", transaction_path(tenant, issued["locator"]), admin_token))[
        "aggregatedTransactions"
    ]
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert (
        after["latestSegmentLocator"]
        == ok(call(api, "GET", transaction_path(tenant, reapplied["locator"], "/segment"), admin_token))["locator"]
    )


def test_a_reversed_renewal_leaves_the_last_segment_of_the_term_before_it_in_force(api, admin_token, tenant, policy):
    change = _issued_change(api, admin_token, tenant, policy["locator"], AUGUST, "25000")
    renewal = issued_transaction(api, admin_token, tenant, policy["locator"], "renew", [])
    draft = ok(
        _reversal(
            api, admin_token, tenant, policy["locator"], renewal["locator"], change["locator"], renewal["locator"]
        )
    )

    issued = ok(step(api, admin_token, tenant, draft["locator"], "issue"))

    segment = ok(call(api, "GET", transaction_path(tenant, issued["locator"], "/segment"), admin_token))
    assert (segment["transactionLocator"], segment["startTime"], segment["endTime"]) == (change["locator"], AUGUST, END)
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["latestSegmentLocator"] == segment["locator"]
