"""What issuing creates, read back over HTTP: the policy, its statuses over time, term, transaction,
segment and issued stack; numbering at issuance; what issuing and reading cost in round trips."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest

from chalicelib.core.errors import AlreadyExists
from tests.api.policies.support import (
    CONTACT,
    END,
    POLICY_FIELDS,
    START,
    UNKNOWN,
    element_tree,
    issuance,
    issue,
    new_account,
    policies,
    policies_model,
    policies_tenant,
)
from tests.builders import new_user, system_ctx
from tests.support.api import assert_error, call, ok

UTC = timezone.utc


def fetch(api, token, tenant, locator):
    return ok(call(api, "GET", policies(tenant, f"/{locator}"), token))


def test_an_issued_policy_answers_every_required_field(api, admin_token, tenant, account, issued):
    policy = fetch(api, admin_token, tenant, issued.policyLocator)

    assert POLICY_FIELDS <= set(policy)
    assert policy["locator"] == issued.policyLocator
    assert policy["accountLocator"] == account
    assert policy["policyNumber"] == issued.policyNumber == "PA-000001"
    assert (policy["issuedTransactionLocator"], policy["latestSegmentLocator"], policy["latestTermLocator"]) == (
        issued.transactionLocator,
        issued.segmentLocator,
        issued.termLocator,
    )
    assert policy["branchHeadTransactionLocators"] == [issued.transactionLocator]
    assert (policy["startTime"], policy["endTime"]) == ("2026-02-01T05:00:00.000Z", "2027-02-01T05:00:00.000Z")
    assert (policy["productName"], policy["currency"], policy["timezone"], policy["durationBasis"]) == (
        "PersonalAuto",
        "USD",
        "America/New_York",
        "months",
    )
    assert (policy["billingLevel"], policy["delinquencyPlanName"]) == ("account", "Standard")
    assert policy["static"] == {"agency": "Downtown"}
    assert policy["contacts"] == [{"contactLocator": CONTACT, "roles": ["primary"]}]
    assert policy["moratoriumElections"] == {}
    assert (policy["createdAt"], policy["createdBy"]) == ("2026-01-15T09:30:00.000Z", system_ctx().user_locator)


@pytest.mark.parametrize(
    "now, statuses",
    [
        (datetime(2026, 1, 15, 9, 30, tzinfo=UTC), ["pending"]),
        (START, ["onRisk"]),  # the start is inside the term
        (datetime(2026, 8, 1, tzinfo=UTC), ["onRisk"]),
        (END, ["expired"]),  # the end is not
        (datetime(2030, 1, 1, tzinfo=UTC), ["expired"]),
    ],
)
def test_statuses_follow_the_clock(api, tenant, issued, clock, now, statuses):
    _, token = new_user(["policies.read"], [tenant])  # a session token would expire on the way
    clock.set(now)
    assert fetch(api, token, tenant, issued.policyLocator)["statuses"] == statuses


def test_an_unknown_policy_is_a_404(api, admin_token, tenant):
    assert_error(call(api, "GET", policies(tenant, f"/{UNKNOWN}"), admin_token), 404, "policy.not_found")
    assert_error(call(api, "GET", policies(tenant, "/" + "X" * 300), admin_token), 404, "policy.not_found")


# --- term, transaction, segment --------------------------------------------------------------------


def test_the_first_term_is_term_0_numbered_after_the_policy(api, admin_token, tenant, issued):
    term = ok(call(api, "GET", f"/policy/{tenant}/terms/{issued.termLocator}", admin_token))

    assert term == {
        "locator": issued.termLocator,
        "staticLocator": issued.termLocator,
        "policyLocator": issued.policyLocator,
        "number": 0,
        "termNumber": "PA-000001-1",
        "startTime": "2026-02-01T05:00:00.000Z",
        "endTime": "2027-02-01T05:00:00.000Z",
    }
    listed = ok(call(api, "GET", policies(tenant, f"/{issued.policyLocator}/terms/list"), admin_token))
    assert listed == {"listCompleted": True, "items": [term]}


def test_unknown_terms_and_the_terms_of_an_unknown_policy_are_404s(api, admin_token, tenant):
    assert_error(call(api, "GET", f"/policy/{tenant}/terms/{UNKNOWN}", admin_token), 404, "term.not_found")
    assert_error(call(api, "GET", policies(tenant, f"/{UNKNOWN}/terms/list"), admin_token), 404, "policy.not_found")


def test_the_issuance_transaction_is_issued(api, admin_token, tenant, issued):
    transaction = ok(call(api, "GET", f"/policy/{tenant}/transactions/{issued.transactionLocator}", admin_token))

    assert {
        "locator",
        "staticLocator",
        "policyLocator",
        "termLocator",
        "effectiveTime",
        "transactionState",
        "transactionCategory",
        "transactionType",
        "data",
        "createdAt",
        "createdBy",
    } <= set(transaction)
    assert transaction["locator"] == transaction["staticLocator"] == issued.transactionLocator
    assert (transaction["policyLocator"], transaction["termLocator"]) == (issued.policyLocator, issued.termLocator)
    assert (transaction["transactionState"], transaction["transactionCategory"], transaction["transactionType"]) == (
        "issued",
        "issuance",
        "issuance",
    )
    assert transaction["effectiveTime"] == "2026-02-01T05:00:00.000Z"
    assert transaction["issuedTime"] == transaction["createdAt"] == "2026-01-15T09:30:00.000Z"
    assert transaction["data"] == {}
    assert transaction["preferences"] == {"installmentPreferences": {"installmentWeights": [1], "cadence": "monthly"}}
    preferences = call(
        api, "GET", f"/policy/{tenant}/transactions/{issued.transactionLocator}/preferences", admin_token
    )
    assert ok(preferences) == transaction["preferences"]


def test_the_segment_holds_the_element_tree(api, admin_token, tenant, account):
    tree = element_tree(vehicles=2)
    issued = issue(tenant, account, element=tree)
    segment = ok(call(api, "GET", f"/policy/{tenant}/transactions/{issued.transactionLocator}/segment", admin_token))

    assert segment["locator"] == issued.segmentLocator
    assert (segment["transactionLocator"], segment["segmentType"]) == (issued.transactionLocator, "coverage")
    assert (segment["startTime"], segment["endTime"], segment["duration"]) == (
        "2026-02-01T05:00:00.000Z",
        "2027-02-01T05:00:00.000Z",
        12,
    )
    root = segment["element"]
    assert (root["locator"], root["staticLocator"], root["type"], root["category"]) == (
        tree.locator,
        tree.staticLocator,
        "PersonalAuto",
        "product",
    )
    assert root["parentLocator"] == issued.segmentLocator
    assert root["data"] == {"channel": "web"}
    vehicles = root["elements"]
    assert [v["locator"] for v in vehicles] == [v.locator for v in tree.elements]
    assert {(v["type"], v["category"], v["parentLocator"]) for v in vehicles} == {("Vehicle", "exposure", tree.locator)}
    assert vehicles[1]["data"] == {"vin": "1HGCM82633A000001", "value": Decimal("12000.50")}
    (collision,) = vehicles[0]["elements"]
    assert (collision["type"], collision["category"], collision["parentLocator"]) == (
        "Collision",
        "coverage",
        vehicles[0]["locator"],
    )
    assert collision["coverageTerms"] == {"Deductible": "d500", "Limit": "l100k"}
    assert all(e["originalEffectiveTime"] == "2026-02-01T05:00:00.000Z" for e in [root, *vehicles, collision])

    by_locator = ok(call(api, "GET", f"/policy/{tenant}/transactions/segments/{issued.segmentLocator}", admin_token))
    assert by_locator == segment


def test_a_short_term_has_a_fractional_duration(api, admin_token, tenant, account):
    # Feb 1 -> Mar 15 (local midnights): one month and 14 of March's 31 days
    issued = issue(tenant, account, endTime=datetime(2026, 3, 15, 4, tzinfo=UTC), termDuration=None)
    segment = ok(call(api, "GET", f"/policy/{tenant}/transactions/segments/{issued.segmentLocator}", admin_token))
    assert segment["duration"] == 1 + Decimal(14) / Decimal(31)


def test_unknown_transactions_and_segments_are_404s(api, admin_token, tenant):
    base = f"/policy/{tenant}/transactions"
    assert_error(call(api, "GET", f"{base}/{UNKNOWN}", admin_token), 404, "transaction.not_found")
    assert_error(call(api, "GET", f"{base}/{UNKNOWN}/segment", admin_token), 404, "transaction.not_found")
    assert_error(call(api, "GET", f"{base}/segments/{UNKNOWN}", admin_token), 404, "segment.not_found")


def test_the_issued_transactions_list_is_the_issuance(api, admin_token, tenant, issued):
    path = policies(tenant, f"/{issued.policyLocator}/issuedTransactions/list")
    transaction = ok(call(api, "GET", f"/policy/{tenant}/transactions/{issued.transactionLocator}", admin_token))

    assert ok(call(api, "GET", path, admin_token)) == {"listCompleted": True, "items": [transaction]}
    assert ok(call(api, "GET", path + "?offset=1", admin_token)) == {"listCompleted": True, "items": []}
    assert_error(call(api, "GET", path + "?count=0", admin_token), 400, "request.invalid")
    assert_error(
        call(api, "GET", policies(tenant, f"/{UNKNOWN}/issuedTransactions/list"), admin_token), 404, "policy.not_found"
    )


def test_holds_are_an_empty_list(api, admin_token, tenant, issued):
    assert ok(call(api, "GET", policies(tenant, f"/{issued.policyLocator}/holds"), admin_token)) == []
    assert_error(call(api, "GET", policies(tenant, f"/{UNKNOWN}/holds"), admin_token), 404, "policy.not_found")


# --- numbers at issuance -------------------------------------------------------------------------


def test_policies_are_numbered_by_their_products_plan_in_sequence(api, admin_token, tenant, account):
    numbers = [issue(tenant, account).policyNumber for _ in range(2)]
    assert numbers == ["PA-000001", "PA-000002"]
    for number in numbers:
        (found,) = ok(call(api, "GET", policies(tenant, f"/numbers/{number}"), admin_token))
        assert found["policyNumber"] == number
    assert_error(call(api, "GET", policies(tenant, "/numbers/PA-999999"), admin_token), 404, "policy.not_found")


def test_a_number_brought_by_the_quote_is_claimed_once(api, admin_token, tenant, account):
    from chalicelib.policies import service
    from chalicelib.runtime import wiring

    issued = issue(tenant, account, policyNumber="EXT-1")
    assert fetch(api, admin_token, tenant, issued.policyLocator)["policyNumber"] == "EXT-1"

    ctx = system_ctx().for_tenant(tenant)
    uow = wiring.unit_of_work(ctx)
    service.add_issued_policy(ctx, uow, issuance(tenant, account, policyNumber="EXT-1"))
    with pytest.raises(AlreadyExists) as raised:
        uow.commit()
    assert raised.value.code == "policy.number_taken"
    (owner,) = ok(call(api, "GET", policies(tenant, "/numbers/EXT-1"), admin_token))
    assert owner["locator"] == issued.policyLocator


def test_a_product_without_a_plan_issues_unnumbered_policies(api, admin_token):
    model = policies_model()
    del model["products"]["PersonalAuto"]["numberingPlan"]
    tenant = policies_tenant(api, admin_token, model)
    account = new_account(api, admin_token, tenant)
    issued = issue(tenant, account)

    assert issued.policyNumber is None
    assert "policyNumber" not in fetch(api, admin_token, tenant, issued.policyLocator)
    term = ok(call(api, "GET", f"/policy/{tenant}/terms/{issued.termLocator}", admin_token))
    assert "termNumber" not in term


# --- round trips ---------------------------------------------------------------------------------


def test_fetching_a_policy_is_one_read_beyond_authentication(api, admin_token, tenant, issued, ddb_calls):
    ddb_calls.clear()
    fetch(api, admin_token, tenant, issued.policyLocator)
    assert [name for name in ddb_calls if name != "BatchGetItem"] == ["GetItem"], ddb_calls  # BatchGetItem: auth


@pytest.mark.parametrize(
    ("path", "reads"),
    [
        ("/policies/{policy}/snapshot?date=2026-06-01T00%3A00%3A00Z", ["Query"]),  # the policy's whole collection
        ("/transactions/{transaction}", ["GetItem", "GetItem"]),  # its alias, then the transaction by key
        ("/transactions/{transaction}/segment", ["GetItem", "GetItem"]),  # its alias, the transaction, its segments
        ("/transactions/segments/{segment}", ["Query"]),
        ("/terms/{term}", ["GetItem", "GetItem"]),  # the term's alias, then the term
    ],
)
def test_policy_records_are_read_in_a_fixed_number_of_calls(api, admin_token, tenant, issued, ddb_calls, path, reads):
    path = path.format(
        policy=issued.policyLocator,
        transaction=issued.transactionLocator,
        segment=issued.segmentLocator,
        term=issued.termLocator,
    )
    ddb_calls.clear()
    ok(call(api, "GET", f"/policy/{tenant}{path}", admin_token))
    assert [name for name in ddb_calls if name != "BatchGetItem"] == reads, ddb_calls  # BatchGetItem: auth


@pytest.fixture
def transaction_sizes(aws):
    """The number of actions of each TransactWriteItems sent while the test runs."""
    from chalicelib.storage import clients

    sizes: list[int] = []

    def record(params, **_):
        sizes.append(len(params["TransactItems"]))

    events = clients.dynamodb().meta.events
    events.register("before-parameter-build.dynamodb.TransactWriteItems", record)
    yield sizes
    events.unregister("before-parameter-build.dynamodb.TransactWriteItems", record)


def test_issuing_writes_the_same_items_in_the_same_calls_for_1_or_50_elements(
    api, admin_token, tenant, account, ddb_calls, transaction_sizes
):
    from chalicelib.policies import service
    from chalicelib.runtime import wiring

    small, large = element_tree(vehicles=1), element_tree(vehicles=10, coverages=4)
    count = lambda e: 1 + sum(count(c) for c in e.elements)  # noqa: E731
    assert (count(small), count(large)) == (3, 51)
    ctx = system_ctx().for_tenant(tenant)

    costs = []
    for tree in (small, large):
        given = issuance(tenant, account, element=tree)
        ddb_calls.clear()
        uow = wiring.unit_of_work(ctx)
        issued = service.add_issued_policy(ctx, uow, given)
        uow.commit()
        costs.append(list(ddb_calls))
    # the plan's counter, then one transaction: the policy, its term and the term's alias, the transaction and
    # its alias, the segment with the whole tree, the first static data version, the number's guard, the
    # job that bills the issuance, the due entry of the policy's next status change and its contact's index entry
    assert costs[0] == costs[1] == ["UpdateItem", "TransactWriteItems"]
    assert transaction_sizes == [11, 11]
    segment = ok(call(api, "GET", f"/policy/{tenant}/transactions/segments/{issued.segmentLocator}", admin_token))
    assert len(segment["element"]["elements"]) == 10
