"""What a transaction request reads does not grow with the policy's history (issue 28): a change through
create, initialize, price and issue reads the policy's head (its root, its terms, the latest segment, the
transactions it names) by key, so its DynamoDB calls and the bytes they answer are the same after 1, 10
and 30 earlier transactions, while the policy's item collection grows with each one; and each request
reads the configuration's current pointer, the policy root and the account at most once."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from chalicelib.storage import keys
from tests.api.transactions.support import amounts, create, modify, params, segment_of_policy, step, vehicle_of
from tests.support.api import call, ok

STEPS = ("create", "initialize", "price", "issue")
LATEST = "2026-12-15T05:00:00Z"
"""After every earlier change (the last of 30, weekly from 2026-03-01, is on 2026-09-20)."""


def _earlier(count: int) -> list[str]:
    first = datetime(2026, 3, 1, 5, tzinfo=timezone.utc)
    return [(first + timedelta(days=7 * n)).strftime("%Y-%m-%dT%H:%M:%SZ") for n in range(count)]


def _change(api, token, tenant, policy, static, effective, value):
    return ok(create(api, token, tenant, policy, "change", [params(effective), modify(static, value=str(value))]))


def _measured_change(api, token, tenant, account, earlier, ddb_reads):
    """A fresh policy with `earlier` transactions issued (its issuance and earlier - 1 changes, every value
    of the same width, so that only the history differs), then a change through issue, each request's reads
    recorded: {step: (operations in order, items, bytes, reads of the root, of the configuration pointer)}."""
    from tests.api.transactions.support import issued_policy

    policy = issued_policy(api, token, tenant, account)
    static = vehicle_of(segment_of_policy(api, token, tenant, policy))["staticLocator"]
    for position, effective in enumerate(_earlier(earlier - 1)):
        draft = _change(api, token, tenant, policy["locator"], static, effective, 30000 + position)["locator"]
        assert ok(step(api, token, tenant, draft, "issue"))["transactionState"] == "issued"
    root = keys.policy(tenant, policy["locator"])
    pointer = keys.config_current(tenant)
    seen = {}
    ddb_reads.clear()
    draft = _change(api, token, tenant, policy["locator"], static, LATEST, 39999)
    seen["create"] = _summary(ddb_reads, root, pointer)
    for name in STEPS[1:]:
        ddb_reads.clear()
        answer = ok(step(api, token, tenant, draft["locator"], name))
        seen[name] = _summary(ddb_reads, root, pointer)
    assert answer["transactionState"] == "issued"
    return policy, answer, seen


def _summary(reads, root, pointer):
    return (
        [read.operation for read in reads],
        reads.items,
        reads.bytes,
        len(reads.of_key(root.pk, root.sk)),
        len(reads.of_key(pointer.pk, pointer.sk)),
    )


def _collection_bytes(tenant, policy_locator):
    from chalicelib.storage import clients, table
    from chalicelib.storage.codec import item_size

    found = clients.dynamodb().query(
        TableName=table.gateway().table_name,
        KeyConditionExpression="PK = :pk",
        ConsistentRead=True,
        ExpressionAttributeValues={":pk": {"S": keys.policy_partition(tenant, policy_locator)}},
    )
    assert "LastEvaluatedKey" not in found
    return sum(map(item_size, found["Items"]))


def test_a_change_reads_the_same_after_1_10_and_30_earlier_transactions(api, admin_token, tenant, account, ddb_reads):
    measured = {count: _measured_change(api, admin_token, tenant, account, count, ddb_reads) for count in (1, 10, 30)}
    (_, _, one), (_, _, ten), (policy, last, thirty) = measured[1], measured[10], measured[30]
    for name in STEPS:
        operations, items, size, root_reads, pointer_reads = one[name]
        assert ten[name][0] == thirty[name][0] == operations, name  # the same calls, in the same order
        assert ten[name][1] == thirty[name][1] == items, name
        # the same bytes after 10 and 30 but for a digit or two (the root's version); after 1, the latest
        # transaction is the issuance, which adjusts nothing: less by the adjustments a change carries
        assert abs(thirty[name][2] - ten[name][2]) <= 64, (name, ten[name][2], thirty[name][2])
        assert 0 <= thirty[name][2] - size <= 2048, (name, size, thirty[name][2])
        assert "Query" in operations and operations.count("Query") == 1, operations  # the terms, by prefix
        assert root_reads <= 1 and thirty[name][3] <= 1, name  # the root once
        assert pointer_reads <= 1 and thirty[name][4] <= 1, name
    # while the policy's collection grew by some KiB per earlier transaction
    grown = _collection_bytes(tenant, policy["locator"]) - _collection_bytes(tenant, measured[1][0]["locator"])
    assert grown > 29 * 1500, grown
    assert thirty["issue"][2] < grown / 10
    # priced as the whole stack prices it: its rating for [Dec 15, Feb 1) at 150 a month (a vehicle worth
    # 39,999), and the cut of the coverage before it (the last change's, at 150) from Dec 15
    charges = ok(call(api, "GET", f"/policy/{tenant}/transactions/{last['locator']}/price", admin_token))
    assert amounts(charges["charges"]) == amounts(_whole_stack_price(tenant, last["locator"]))


def _whole_stack_price(tenant, locator):
    """The transaction's charges as issuing it from its policy's whole stack (read as before issue 28)
    gives them: its priced record, re-run on the stack as it was before it was issued."""
    from chalicelib.transactions import records

    ctx = _ctx(tenant)
    found = records.find(ctx, locator)
    assert found.stack.complete
    return [charge.model_dump(mode="json") for charge in found.transaction.charges]


def _ctx(tenant):
    from dataclasses import replace

    from tests.builders import system_ctx

    return replace(system_ctx(), tenant_locator=tenant)


@pytest.mark.parametrize(
    "category, instructions",
    [
        ("change", lambda static: [params("2026-12-15T05:00:00Z"), modify(static, value="45000")]),
        ("change", lambda static: [params("2026-10-01T04:00:00Z", newPolicyEndTime="2027-01-01T05:00:00Z")]),
        ("cancel", lambda static: params("2026-11-01T04:00:00Z")),
        ("renew", lambda static: []),
    ],
)
def test_the_head_prices_as_the_whole_stack_does(api, admin_token, tenant, account, category, instructions):
    """A transaction worked out from the head (timeline.head_suffices) and from the whole stack: the same
    span, term and charges (amounts, types, what each adjusts), on a policy with earlier changes."""
    from chalicelib.policies import service as policies
    from chalicelib.transactions import records, service
    from tests.api.transactions.support import issued_policy

    policy = issued_policy(api, admin_token, tenant, account)
    static = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
    for position, effective in enumerate(_earlier(4)):
        draft = _change(api, admin_token, tenant, policy["locator"], static, effective, 30000 + position)["locator"]
        ok(step(api, admin_token, tenant, draft, "issue"))
    draft = ok(create(api, admin_token, tenant, policy["locator"], category, instructions(static)))
    ctx = _ctx(tenant)
    whole = records.find(ctx, draft["locator"])
    head = records.find(ctx, draft["locator"], head=True)
    assert whole.stack.complete and not head.stack.complete
    assert len(head.stack.transactions) < len(whole.stack.transactions)
    by_head = service.price(ctx, draft["locator"], stateless=True, found=head)
    by_whole = service.price(ctx, draft["locator"], stateless=True, found=whole)
    assert by_head.transactionState == by_whole.transactionState == "priced"
    assert by_head.segments == by_whole.segments and by_head.termLocator == by_whole.termLocator
    assert _shape(by_head.charges, head) == _shape(by_whole.charges, whole)
    assert by_head.charges, category if category != "renew" else "a renewal is rated"
    assert policies.head(ctx, policy["locator"]) is not None


def _shape(charges, found):
    """(type, amount, the rated charge it adjusts by its element and type) of each charge."""
    rated = {c.locator: (c.elementStaticLocator, c.chargeType) for t in found.stack.transactions for c in t.charges}
    return sorted((c.chargeType, c.amount, rated.get(c.reversalOfLocator or "", None)) for c in charges)


def test_a_change_issue_reads_the_configuration_pointer_and_the_account_once_at_most(
    api, admin_token, tenant, account, ddb_reads
):
    _, _, seen = _measured_change(api, admin_token, tenant, account, 2, ddb_reads)
    for name in STEPS:
        assert seen[name][3] <= 1 and seen[name][4] <= 1, (name, seen[name])


def test_an_out_of_sequence_issue_still_reads_what_it_reapplies(api, admin_token, tenant, account):
    """The head does not hold an issue before the last transaction: it reads the whole stack and issues an
    aggregate (the later change reversed and reapplied), as before."""
    from tests.api.transactions.support import issued_policy

    policy = issued_policy(api, admin_token, tenant, account)
    static = vehicle_of(segment_of_policy(api, admin_token, tenant, policy))["staticLocator"]
    later = _change(api, admin_token, tenant, policy["locator"], static, "2026-09-01T04:00:00Z", 30000)["locator"]
    ok(step(api, admin_token, tenant, later, "issue"))
    early = _change(api, admin_token, tenant, policy["locator"], static, "2026-04-01T04:00:00Z", 31000)["locator"]
    issued = ok(step(api, admin_token, tenant, early, "issue"))
    assert issued["transactionState"] == "issued"
    head = ok(call(api, "GET", f"/policy/{tenant}/policies/{policy['locator']}", admin_token))
    aggregate = ok(call(api, "GET", f"/policy/{tenant}/transactions/{head['issuedTransactionLocator']}", admin_token))
    assert aggregate["transactionCategory"] == "aggregate"
