"""Random policy histories through the API (hypothesis; few, as every step is several requests: the many
histories run on the pure modules in tests/unit/transactions/test_histories.py): changes, cancellations,
reinstatements, renewals and reversals, in and out of sequence. After every issue the policy reads as its
snapshot does: `latestSegmentLocator` is the segment the snapshot shows at the policy's last moment, and
the one branch left is the issued transaction (issuing invalidates the drafts of the others)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.transactions.support import (
    AUGUST,
    MID_MARCH,
    create,
    issued_policy,
    modify,
    params,
    policy_path,
    segment_of_policy,
    segment_shown_last,
    step,
    vehicle_of,
)
from tests.support.api import call, ok

DATES = (MID_MARCH, "2026-05-01T04:00:00Z", AUGUST, "2026-11-01T05:00:00Z", "2027-05-01T04:00:00Z")
"""Inside the first term, and (once renewed) the second."""
REVERSIBLE = {"change", "cancellation", "reinstatement", "renewal"}

operations = st.one_of(
    st.tuples(st.just("change"), st.sampled_from(DATES), st.sampled_from(["13000", "25000", "60000"])),
    st.tuples(st.just("cancel"), st.sampled_from(DATES)),
    st.tuples(st.just("reinstate"), st.sampled_from([None, *DATES])),
    st.tuples(st.just("renew")),
    st.tuples(st.just("reverse"), st.integers(0, 3)),
)


def _draft(api, token, tenant, policy, operation):
    """The draft an operation creates (None when the policy refuses it), or a reversal's."""
    kind = operation[0]
    if kind == "change":
        static = vehicle_of(segment_of_policy(api, token, tenant, policy))["staticLocator"]
        response = create(
            api, token, tenant, policy["locator"], "change", [params(operation[1]), modify(static, value=operation[2])]
        )
    elif kind == "cancel":
        response = create(api, token, tenant, policy["locator"], "cancel", params(operation[1]))
    elif kind == "reinstate":
        response = create(
            api, token, tenant, policy["locator"], "reinstate", [params(operation[1])] if operation[1] else []
        )
    elif kind == "renew":
        response = create(api, token, tenant, policy["locator"], "renew", [])
    else:
        issued = ok(call(api, "GET", policy_path(tenant, policy["locator"], "/issuedTransactions/list"), token))
        reversible = [t["locator"] for t in issued["items"] if t["transactionCategory"] in REVERSIBLE]
        if not reversible:
            return None
        response = call(
            api,
            "PATCH",
            policy_path(tenant, policy["locator"], "/reversal"),
            token,
            {
                "baseLocator": policy["issuedTransactionLocator"],
                "toTransaction": issued["items"][0]["locator"],
                "reverseTransactions": [reversible[-1 - operation[1] % len(reversible)]],
            },
        )
    return ok(response) if response.status_code == 200 else None


@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=st.lists(operations, min_size=3, max_size=5))
def test_after_every_issue_the_policy_names_the_segment_its_snapshot_shows_last(
    api, admin_token, tenant, account, history
):
    policy = issued_policy(api, admin_token, tenant, account)
    for operation in history:
        draft = _draft(api, admin_token, tenant, policy, operation)
        issued = step(api, admin_token, tenant, draft["locator"], "issue") if draft else None
        if issued is None or issued.status_code != 200 or ok(issued)["transactionState"] != "issued":
            continue
        policy = ok(call(api, "GET", policy_path(tenant, policy["locator"]), admin_token))
        assert policy["latestSegmentLocator"] == segment_shown_last(api, admin_token, tenant, policy), operation
        assert policy["branchHeadTransactionLocators"] == [policy["issuedTransactionLocator"]]
