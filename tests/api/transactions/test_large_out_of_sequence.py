"""Out of sequence before many issued transactions: more than one TransactWriteItems holds. The records
nothing visible names before the commit (the aggregate, its reversals and reapplications, their segments)
are written first, pending; the final write (the policy root, the issued transaction carrying the
attempt's token, the reversed originals, the events) makes them visible at once. Up to 30 later changes
issued from a draft; an attempt that fails between the two leaves nothing any read shows, and the next
issue deletes what it left."""

from __future__ import annotations

import calendar
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction

from chalicelib.policies import repository
from chalicelib.runtime import due
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.storage import keys, query, table, unit_of_work
from tests.api.transactions.support import (
    create,
    issued_policy,
    modify,
    params,
    policy_path,
    segment_of_policy,
    step,
    transaction_path,
    vehicle_of,
)
from tests.builders import system_ctx
from tests.support.api import assert_error, call, event_types, ok

D = Decimal
POLICY_START, POLICY_END = date(2026, 2, 1), date(2027, 2, 1)
FIRST_LATER = date(2026, 4, 1)
OUT_OF_SEQUENCE = date(2026, 3, 16)
RATE = {"12000.50": 100, "15000": 100, "25000": 150, "60000": 200}
"""Premium per month by the vehicle's value (tests/support/configs.py); tax is 25 per segment."""


def _later_changes(api, token, tenant, policy, count, first=FIRST_LATER):
    """`count` changes issued in sequence a week apart from `first` (the value alternating between the
    150 and the 100 rate): [(draft, effective date, value)]."""
    static = vehicle_of(segment_of_policy(api, token, tenant, policy))["staticLocator"]
    made = []
    for week in range(count):
        day = first + timedelta(weeks=week)
        value = "25000" if week % 2 == 0 else "15000"
        draft = ok(
            create(
                api, token, tenant, policy["locator"], "change", [params(_midnight(day)), modify(static, value=value)]
            )
        )
        ok(step(api, token, tenant, draft["locator"], "issue"))
        made.append((draft, day, value))
    return made


def _change(api, token, tenant, policy, day, value):
    static = vehicle_of(segment_of_policy(api, token, tenant, policy))["staticLocator"]
    return ok(
        create(api, token, tenant, policy["locator"], "change", [params(_midnight(day)), modify(static, value=value)])
    )


def _midnight(day):
    """Midnight in New York (summer time from March 8 to November 1, 2026)."""
    hour = 4 if date(2026, 3, 8) <= day < date(2026, 11, 1) else 5
    return datetime(day.year, day.month, day.day, hour, tzinfo=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _months(start, end):
    """DECISIONS.md: whole calendar months, then the fraction of the next one, in local days."""

    def plus(day, months):
        year, month = divmod(day.year * 12 + day.month - 1 + months, 12)
        return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))

    whole = 0
    while plus(start, whole + 1) <= end:
        whole += 1
    lower, upper = plus(start, whole), plus(start, whole + 1)
    return whole + Fraction((end - lower).days, (upper - lower).days)


def _cents(amount):
    with localcontext() as context:
        context.prec = 60
        return (D(amount.numerator) / D(amount.denominator)).quantize(D("0.01"), rounding=ROUND_HALF_UP)


def _held_cost(pieces):
    """What the coverage held costs, worked out here: pieces (start, end, value, the end of the segment
    holding it); premium round(rate x months), tax round(25 x months / the segment's months)."""
    premium = sum(_cents(RATE[value] * _months(start, end)) for start, end, value, _ in pieces)
    tax = sum(_cents(25 * _months(start, end) / _months(start, segment_end)) for start, end, _, segment_end in pieces)
    return {"premium": premium, "tax": tax}


def _pieces(changes):
    """The held pieces of a policy issued at 12000.50 with `changes` [(day, value)] in effective order."""
    starts = [(POLICY_START, "12000.50"), *changes]
    ends = [day for day, _ in changes] + [POLICY_END]
    return [(start, end, value, POLICY_END) for (start, value), end in zip(starts, ends, strict=True)]


def _totals(charges):
    """The sum of `charges` (API bodies or stored Charge records) by charge type."""
    total: dict[str, Decimal] = defaultdict(Decimal)
    for charge in charges:
        kind, amount = (
            (charge["chargeType"], charge["amount"]) if isinstance(charge, dict) else (charge.chargeType, charge.amount)
        )
        total[kind] += D(str(amount))
    return dict(total)


def _stored_totals(tenant, policy_locator):
    """The charges of every issued or reversed transaction of the policy by charge type, from the stored
    stack (one Query: a GET per transaction would read the whole collection as many times)."""
    stack = repository.stack(tenant, policy_locator)
    assert stack is not None
    return _totals(
        charge for t in stack.transactions if t.transactionState in ("issued", "reversed") for charge in t.charges
    )


def _value_at(api, token, tenant, policy_locator, day):
    snapshot = ok(call(api, "GET", policy_path(tenant, policy_locator, f"/snapshot?date={_midnight(day)}"), token))
    return vehicle_of(snapshot["transaction"]["segment"])["data"]["value"]


def _items(tenant, policy_locator):
    """The policy's item collection as stored (pending records included)."""
    return query.all_items(
        table.gateway(), keys.tenant_scope(tenant), keys.policy_partition(tenant, policy_locator), consistent=True
    )


def test_a_change_before_30_issued_later_ones_issues_in_three_writes_as_issuing_in_sequence_would(
    api, admin_token, tenant, policy, ddb_calls, jobs
):
    later = _later_changes(api, admin_token, tenant, policy, 30)
    earlier = _change(api, admin_token, tenant, policy, OUT_OF_SEQUENCE, "60000")
    ddb_calls.clear()
    response = step(api, admin_token, tenant, earlier["locator"], "issue")
    issued = ok(response)
    writes = [call_ for call_ in ddb_calls if not call_.startswith(("Get", "BatchGet", "Query"))]

    # 152 pending records in two, the billing safety net, then the final write, full: the job that bills
    # it follows in its own
    assert writes == ["TransactWriteItems"] * 5
    assert issued["transactionState"] == "issued"
    aggregate = ok(call(api, "GET", transaction_path(tenant, issued["aggregateTransactionLocator"]), admin_token))
    parts = aggregate["aggregatedTransactions"]
    reversals, new, reapplications = parts[:30], parts[30], parts[31:]
    assert [p["transactionCategory"] for p in reversals] == ["reversal"] * 30
    assert new["locator"] == earlier["locator"]
    assert [
        (p["transactionCategory"], p["reapplicationOfLocator"], p["staticLocator"], p["effectiveTime"])
        for p in reapplications
    ] == [("change", draft["locator"], draft["staticLocator"], _midnight(day)) for draft, day, _ in later]
    assert {p["transactionState"] for p in parts} == {"issued"}
    for draft, _, _ in (later[0], later[-1]):
        assert (
            ok(call(api, "GET", transaction_path(tenant, draft["locator"]), admin_token))["transactionState"]
            == "reversed"
        )
    events = Counter(event_types(api, admin_token, tenant, response))
    assert (events["policy.reversal.issue"], events["policy.change.issue"]) == (30, 31)
    listed = ok(
        call(api, "GET", policy_path(tenant, policy["locator"], "/issuedTransactions/list?count=100"), admin_token)
    )["items"]
    assert {p["locator"] for p in parts} | {aggregate["locator"]} <= {t["locator"] for t in listed}
    assert not {draft["locator"] for draft, _, _ in later} & {t["locator"] for t in listed}
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["issuedTransactionLocator"] == aggregate["locator"]
    last = ok(call(api, "GET", f"/policy/{tenant}/transactions/segments/{after['latestSegmentLocator']}", admin_token))
    assert (last["transactionLocator"], vehicle_of(last)["data"]["value"]) == (
        reapplications[-1]["locator"],
        D("15000.00"),
    )

    # the billing job was enqueued after the commit; its safety net, due a quarter of an hour later, finds it
    billing_jobs = [
        m
        for m in jobs.sent
        if m.job_type == "billing.installments" and m.payload["transactionLocator"] == issued["locator"]
    ]
    assert len(billing_jobs) == 1
    net = due.entry(system_ctx().for_tenant(tenant), DueKind.TRANSACTION_BILLING, issued["locator"])
    assert net is not None and net.due_at == datetime(2026, 1, 15, 9, 45, tzinfo=timezone.utc)
    assert due.run_step(system_ctx().for_tenant(tenant), net.due_at).result == {
        "entries": 1,
        "alreadyDone": 0,
        "failed": [],
        "billingJobsEnqueued": 0,
    }
    assert due.entry(system_ctx().for_tenant(tenant), DueKind.TRANSACTION_BILLING, issued["locator"]) is None

    # the money: every charge of the policy sums to what the coverage held costs, to the cent
    changes = [(OUT_OF_SEQUENCE, "60000"), *((day, value) for _, day, value in later)]
    stack = repository.stack(tenant, policy["locator"])
    assert stack is not None and len(stack.transactions) == 1 + 30 + 1 + 30 + 1 + 30
    assert (
        _stored_totals(tenant, policy["locator"])
        == _held_cost(_pieces(changes))
        == {"premium": D("1424.81"), "tax": D("56.07")}
    )
    by_locator = {t.locator: t for t in stack.transactions}
    for part in (new, reapplications[-1]):
        priced = ok(call(api, "GET", transaction_path(tenant, part["locator"], "/price"), admin_token))
        assert _totals(priced["charges"]) == _totals(by_locator[part["locator"]].charges)
    # the coverage: what issuing the 31 changes in sequence holds
    for day, value in (
        (date(2026, 3, 20), "60000.00"),
        (FIRST_LATER + timedelta(days=3), "25000.00"),
        (FIRST_LATER + timedelta(weeks=29, days=3), "15000.00"),
    ):
        assert _value_at(api, admin_token, tenant, policy["locator"], day) == D(value)


def test_an_issue_that_fails_after_its_pending_writes_leaves_nothing_visible_and_a_retry_succeeds(
    api, admin_token, tenant, account, policy, monkeypatch
):
    later = _later_changes(api, admin_token, tenant, policy, 12)  # the fewest one write does not hold
    earlier = _change(api, admin_token, tenant, policy, OUT_OF_SEQUENCE, "60000")
    locator = policy["locator"]
    reads = [
        policy_path(tenant, locator),
        policy_path(tenant, locator, "/issuedTransactions/list?count=100"),
        policy_path(tenant, locator, "/terms/list"),
        f"/policy/{tenant}/terms/{policy['latestTermLocator']}",
        transaction_path(tenant, earlier["locator"]),
        transaction_path(tenant, later[0][0]["locator"]),
        transaction_path(tenant, later[-1][0]["locator"]),
        f"/policy/{tenant}/transactions/segments/{policy['latestSegmentLocator']}",
        policy_path(tenant, locator, f"/snapshot?date={_midnight(date(2026, 9, 1))}"),
        transaction_path(tenant, earlier["locator"], "/affectedTransactions"),
    ]
    before = [ok(call(api, "GET", path, admin_token)) for path in reads]
    pending: list[tuple[repository.IssueAttempt, list[str], list[str]]] = []
    write_pending = repository.add_pending

    def recorded(tenant_, attempt, transactions, segments):
        write_pending(tenant_, attempt, transactions, segments)
        pending.append((attempt, [t.locator for t in transactions], [s.locator for s in segments]))
        if len(pending) == 1:  # another request changes the policy (its root's version) before the final write
            ok(
                call(
                    api,
                    "PATCH",
                    policy_path(tenant, locator, "/billingLevel"),
                    admin_token,
                    {"billingLevel": policy["billingLevel"]},
                )
            )

    monkeypatch.setattr(repository, "add_pending", recorded)
    failed = step(api, admin_token, tenant, earlier["locator"], "issue")

    assert_error(failed, 409, "conflict.concurrent_modification")
    ((attempt, transactions, segments),) = pending
    assert len(transactions) == 2 * 12 + 1 and len(segments) == 12
    stored = {item["locator"] for item in _items(tenant, locator) if item.get("pendingIssue") == attempt.token}
    assert stored == {*transactions, *segments}  # written, yet no read shows them:
    assert [ok(call(api, "GET", path, admin_token)) for path in reads] == before
    for orphan in (*transactions[:3], transactions[-1]):
        assert_error(call(api, "GET", transaction_path(tenant, orphan), admin_token), 404, "transaction.not_found")
    for orphan in segments[:3]:
        assert_error(
            call(api, "GET", f"/policy/{tenant}/transactions/segments/{orphan}", admin_token), 404, "segment.not_found"
        )
    assert event_types(api, admin_token, tenant, failed) == []

    retried = ok(step(api, admin_token, tenant, earlier["locator"], "issue"))

    assert retried["transactionState"] == "issued"
    (_, transactions, segments), (second, kept, made) = pending
    items = _items(tenant, locator)
    assert not {*transactions, *segments} & {item.get("locator") for item in items}  # the first attempt's: deleted
    assert all(
        table.gateway().get(keys.tenant_scope(tenant), keys.Key(keys.transaction_lookup(tenant, orphan))) is None
        for orphan in transactions
    )
    assert {item["locator"] for item in items if item.get("pendingIssue") == second.token} == {*kept, *made}
    aggregate = ok(call(api, "GET", transaction_path(tenant, retried["aggregateTransactionLocator"]), admin_token))
    assert [p["transactionCategory"] for p in aggregate["aggregatedTransactions"]] == ["reversal"] * 12 + [
        "change"
    ] * 13
    assert set(kept) == {
        aggregate["locator"],
        *(p["locator"] for p in aggregate["aggregatedTransactions"] if p["locator"] != earlier["locator"]),
    }
    for segment in made:
        assert (
            ok(call(api, "GET", f"/policy/{tenant}/transactions/segments/{segment}", admin_token))["locator"] == segment
        )
    listed = ok(call(api, "GET", policy_path(tenant, locator, "/issuedTransactions/list?count=100"), admin_token))[
        "items"
    ]
    assert {t["locator"] for t in listed} == {policy["issuedTransactionLocator"], *kept, earlier["locator"]}
    assert _value_at(api, admin_token, tenant, locator, date(2026, 3, 20)) == D("60000.00")

    # and the retry issued what the same 13 changes issued in sequence on a policy of their own hold
    other = issued_policy(api, admin_token, tenant, account)
    first = _change(api, admin_token, tenant, other, OUT_OF_SEQUENCE, "60000")
    ok(step(api, admin_token, tenant, first["locator"], "issue"))
    _later_changes(api, admin_token, tenant, other, 12)
    expected = _held_cost(_pieces([(OUT_OF_SEQUENCE, "60000"), *((day, value) for _, day, value in later)]))
    assert _stored_totals(tenant, locator) == _stored_totals(tenant, other["locator"]) == expected
    for day in (date(2026, 3, 20), FIRST_LATER + timedelta(weeks=5, days=3)):
        assert _value_at(api, admin_token, tenant, locator, day) == _value_at(
            api, admin_token, tenant, other["locator"], day
        )


def test_an_aggregate_whose_final_write_would_not_fit_answers_409_and_stores_nothing(
    api, admin_token, tenant, policy, monkeypatch, ddb_calls
):
    _later_changes(api, admin_token, tenant, policy, 4)
    earlier = _change(api, admin_token, tenant, policy, OUT_OF_SEQUENCE, "60000")
    stored = _items(tenant, policy["locator"])
    # one write holding 20 items: the final write (the root, the change and its segment, the 4 reversed
    # transactions, 14 events and room for the idempotency guard) would need 22
    monkeypatch.setattr(unit_of_work, "MAX_TRANSACTION_ITEMS", 20)
    ddb_calls.clear()

    body = assert_error(
        step(api, admin_token, tenant, earlier["locator"], "issue"), 409, "transaction.aggregate_too_large"
    )

    assert (
        body["message"] == f"Issuing transaction {earlier['locator']} changes 4 issued transactions; with its "
        "events that is 22 records to write at once, and one write holds at most 20"
    )
    assert "TransactWriteItems" not in ddb_calls
    assert _items(tenant, policy["locator"]) == stored
    monkeypatch.setattr(unit_of_work, "MAX_TRANSACTION_ITEMS", 100)
    ddb_calls.clear()
    assert ok(step(api, admin_token, tenant, earlier["locator"], "issue"))["transactionState"] == "issued"
    assert ddb_calls.count("TransactWriteItems") == 1  # 44 items: one write, nothing pending
    assert not [item for item in _items(tenant, policy["locator"]) if "pendingIssue" in item]


def test_a_reversal_reapplying_more_than_one_write_holds_commits_them_at_once(
    api, admin_token, tenant, policy, monkeypatch, ddb_calls
):
    later = _later_changes(api, admin_token, tenant, policy, 6)
    target, kept = later[0][0], [draft for draft, _, _ in later[1:]]
    draft = ok(
        call(
            api,
            "PATCH",
            policy_path(tenant, policy["locator"], "/reversal"),
            admin_token,
            {
                "baseLocator": kept[-1]["locator"],
                "toTransaction": policy["issuedTransactionLocator"],
                "reverseTransactions": [target["locator"]],
            },
        )
    )
    # one write holding 30 items: the reversal, its 5 reapplications (15 items), their segments and
    # events, the 6 transactions it reverses, the root do not fit
    monkeypatch.setattr(unit_of_work, "MAX_TRANSACTION_ITEMS", 30)
    ddb_calls.clear()

    issued = ok(step(api, admin_token, tenant, draft["locator"], "issue"))

    assert ddb_calls.count("TransactWriteItems") == 2
    assert issued["transactionState"] == "issued"
    parts = ok(call(api, "GET", transaction_path(tenant, draft["locator"]), admin_token))["aggregatedTransactions"]
    assert [p["reapplicationOfLocator"] for p in parts] == [t["locator"] for t in kept]
    pending = [item for item in _items(tenant, policy["locator"]) if "pendingIssue" in item]
    assert {item["locator"] for item in pending if item["entity"] == "transaction"} == {p["locator"] for p in parts}
    assert {item["pendingIssueBy"] for item in pending} == {draft["locator"]}
    for drafted in (target, *kept):
        assert (
            ok(call(api, "GET", transaction_path(tenant, drafted["locator"]), admin_token))["transactionState"]
            == "reversed"
        )
    after = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
    assert after["issuedTransactionLocator"] == draft["locator"]
    last = ok(call(api, "GET", f"/policy/{tenant}/transactions/segments/{after['latestSegmentLocator']}", admin_token))
    assert last["transactionLocator"] == parts[-1]["locator"]
    listed = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/issuedTransactions/list"), admin_token))[
        "items"
    ]
    assert [t["locator"] for t in listed] == [
        policy["issuedTransactionLocator"],
        draft["locator"],
        *(p["locator"] for p in parts),
    ]
    # the reversal gives back the coverage the target replaced, the later changes held as before
    assert _value_at(api, admin_token, tenant, policy["locator"], FIRST_LATER + timedelta(days=3)) == D("12000.50")
    assert _value_at(api, admin_token, tenant, policy["locator"], FIRST_LATER + timedelta(weeks=5, days=3)) == D(
        "15000.00"
    )


def test_the_billing_safety_net_bills_an_issue_whose_job_was_lost_and_nothing_that_never_committed(
    api, admin_token, tenant, policy, jobs, monkeypatch
):
    """What the safety net of an issue too large for its billing job does at its due time, when the process
    died between the issue's commit and enqueueing the job, and when the issue never committed."""
    from chalicelib.policies import service as policies
    from chalicelib.transactions import service as transactions

    monkeypatch.setattr(policies, "_bill", lambda uow, transaction: None)  # the job is lost
    lost = ok(
        step(
            api,
            admin_token,
            tenant,
            _change(api, admin_token, tenant, policy, FIRST_LATER, "25000")["locator"],
            "issue",
        )
    )
    never = _change(api, admin_token, tenant, policy, FIRST_LATER + timedelta(weeks=1), "15000")
    ctx = system_ctx().for_tenant(tenant)
    for locator in (lost["locator"], never["locator"]):
        policies._put_billing_safety_net(ctx, transactions.get_transaction(ctx, locator))
    assert not [
        m
        for m in jobs.sent
        if m.job_type == "billing.installments"
        and m.payload["transactionLocator"] in (lost["locator"], never["locator"])
    ]

    assert due.run_step(ctx, datetime(2026, 1, 15, 9, 44, tzinfo=timezone.utc)).result["entries"] == 0
    ran = due.run_step(ctx, datetime(2026, 1, 15, 9, 45, tzinfo=timezone.utc)).result

    assert ran == {"entries": 2, "alreadyDone": 0, "failed": [], "billingJobsEnqueued": 1}
    billed = [
        m
        for m in jobs.sent
        if m.job_type == "billing.installments"
        and m.payload["transactionLocator"] in (lost["locator"], never["locator"])
    ]
    assert [m.payload["transactionLocator"] for m in billed] == [lost["locator"]]
    for locator in (lost["locator"], never["locator"]):
        assert due.entry(ctx, DueKind.TRANSACTION_BILLING, locator) is None
