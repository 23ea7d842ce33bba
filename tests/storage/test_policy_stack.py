"""A policy's item collection: an issue's items are in the policy's partition, the stack is read with
one strongly consistent Query of it, the head by key, and every issue is conditional on the root's
version."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.accounts.models import BillingLevel
from chalicelib.core.errors import ConcurrentModification
from chalicelib.core.ids import new_locator
from chalicelib.policies import repository
from chalicelib.policies.models import (
    Policy,
    Segment,
    SegmentSummary,
    Term,
    Transaction,
    TransactionCategory,
    TransactionState,
)
from chalicelib.priceable.models import Charge, DurationBasis, Element, SegmentType, StaticDataVersion
from chalicelib.runtime import wiring
from chalicelib.storage import clients
from tests.builders import system_ctx

START = datetime(2026, 2, 1, 5, tzinfo=timezone.utc)
END = datetime(2027, 2, 1, 5, tzinfo=timezone.utc)
CHANGE_AT = datetime(2026, 8, 1, 4, tzinfo=timezone.utc)
ISSUED_AT = datetime(2026, 1, 15, 12, tzinfo=timezone.utc)


@pytest.fixture
def query_params(aws) -> Iterator[list[dict[str, Any]]]:
    """The parameters of every Query sent while the test runs."""
    sent: list[dict[str, Any]] = []

    def record(params: dict[str, Any], **_: object) -> None:
        sent.append(dict(params))

    events = clients.dynamodb().meta.events
    events.register("provide-client-params.dynamodb.Query", record)
    yield sent
    events.unregister("provide-client-params.dynamodb.Query", record)


def segment(policy: str, term: str, transaction: str, start: datetime, end: datetime) -> Segment:
    locator = new_locator()
    return Segment(
        locator=locator,
        transactionLocator=transaction,
        policyLocator=policy,
        termLocator=term,
        segmentType=SegmentType.COVERAGE,
        startTime=start,
        endTime=end,
        duration=Decimal("1"),
        element=Element(
            locator=new_locator(),
            staticLocator=new_locator(),
            type="PersonalAuto",
            parentLocator=locator,
            data={"channel": "web"},
        ),
    )


def transaction(policy: str, term: str, made: Segment, category: TransactionCategory, issued: datetime) -> Transaction:
    return Transaction(
        locator=made.transactionLocator,
        staticLocator=made.transactionLocator,
        policyLocator=policy,
        termLocator=term,
        effectiveTime=made.startTime,
        transactionState=TransactionState.ISSUED,
        transactionCategory=category,
        transactionType=category.value,
        createdAt=issued,
        createdBy="test",
        issuedTime=issued,
        configVersion="1",
        segments=[
            SegmentSummary(
                locator=made.locator, segmentType=made.segmentType, startTime=made.startTime, endTime=made.endTime
            )
        ],
        charges=[
            Charge(
                locator=new_locator(),
                elementLocator=made.element.locator,
                elementStaticLocator=made.element.staticLocator,
                chargeType="premium",
                chargeCategory="premium",
                rate=Decimal("0.01"),
                amount=Decimal("100.00"),
            )
        ],
    )


def issue_new_policy(tenant: str) -> tuple[Policy, Transaction, Segment, Term]:
    policy_locator, term_locator = new_locator(), new_locator()
    made = segment(policy_locator, term_locator, new_locator(), START, END)
    issuance = transaction(policy_locator, term_locator, made, TransactionCategory.ISSUANCE, ISSUED_AT)
    term = Term(
        locator=term_locator,
        staticLocator=term_locator,
        policyLocator=policy_locator,
        number=0,
        startTime=START,
        endTime=END,
    )
    policy = Policy(
        locator=policy_locator,
        accountLocator=new_locator(),
        productName="PersonalAuto",
        currency="USD",
        timezone="America/New_York",
        durationBasis=DurationBasis.MONTHS,
        billingLevel=BillingLevel.ACCOUNT,
        startTime=START,
        endTime=END,
        issuedTransactionLocator=issuance.locator,
        latestSegmentLocator=made.locator,
        latestTermLocator=term_locator,
        configVersion="1",
        createdAt=ISSUED_AT,
        createdBy="test",
        updatedAt=ISSUED_AT,
        updatedBy="test",
    )
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    repository.add_issue(uow, tenant, policy, issuance, [made], [term], new_policy=True)
    repository.add_static_version(
        uow,
        tenant,
        policy_locator,
        StaticDataVersion(
            historyLocator=new_locator(), updatedAt=ISSUED_AT, updatedBy="test", staticData={"agency": "Acme"}
        ),
    )
    uow.commit()
    return policy, issuance, made, term


def issue_change(tenant: str, policy: Policy, term: Term, *, issued: datetime) -> tuple[Policy, Transaction, Segment]:
    """A change effective CHANGE_AT, computed from `policy` as read (its version is the condition)."""
    made = segment(policy.locator, term.locator, new_locator(), CHANGE_AT, END)
    change = transaction(policy.locator, term.locator, made, TransactionCategory.CHANGE, issued)
    changed = policy.model_copy(
        update={"issuedTransactionLocator": change.locator, "latestSegmentLocator": made.locator, "updatedAt": issued}
    )
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    repository.add_issue(uow, tenant, changed, change, [made])
    uow.commit()
    return changed.model_copy(update={"version": changed.version + 1}), change, made


def test_the_stack_is_the_whole_collection_in_one_consistent_query_of_the_policy_partition(
    tenant, ddb_calls, query_params
):
    policy, issuance, made, term = issue_new_policy(tenant)
    ddb_calls.clear()

    stack = repository.stack(tenant, policy.locator)

    assert ddb_calls == ["Query"]
    assert query_params[0]["ConsistentRead"] is True
    assert "IndexName" not in query_params[0]
    assert query_params[0]["ExpressionAttributeValues"][":pk"] == {"S": f"T#{tenant}#POL#{policy.locator}"}
    assert stack is not None
    assert stack.policy == policy
    assert stack.terms == [term]
    assert stack.transactions == [issuance]
    assert stack.segments == {made.locator: made}
    assert stack.issued() == [issuance]


def test_an_issue_is_in_the_next_stack_read_at_once_and_bumps_the_root_version(tenant, ddb_calls):
    policy, issuance, made, term = issue_new_policy(tenant)
    read = repository.stack(tenant, policy.locator)
    assert read is not None and read.policy.version == 1

    _, change, change_segment = issue_change(tenant, read.policy, term, issued=ISSUED_AT + timedelta(days=30))
    ddb_calls.clear()
    after = repository.stack(tenant, policy.locator)

    assert ddb_calls == ["Query"]
    assert after is not None
    assert after.policy.version == 2
    assert after.policy.issuedTransactionLocator == change.locator
    assert after.policy.latestSegmentLocator == change_segment.locator
    assert after.issued() == [issuance, change]
    assert after.segments == {made.locator: made, change_segment.locator: change_segment}


def test_an_issue_computed_from_a_stale_stack_is_refused_and_writes_nothing(tenant):
    policy, issuance, _, term = issue_new_policy(tenant)
    stale = repository.stack(tenant, policy.locator)
    assert stale is not None
    issue_change(tenant, stale.policy, term, issued=ISSUED_AT + timedelta(days=30))
    before = repository.stack(tenant, policy.locator)

    with pytest.raises(ConcurrentModification):
        issue_change(tenant, stale.policy, term, issued=ISSUED_AT + timedelta(days=31))

    assert repository.stack(tenant, policy.locator) == before
    assert before is not None and len(before.issued()) == 2 and before.policy.version == 2


def test_issued_transactions_are_stacked_by_issued_time_not_by_creation(tenant):
    policy, issuance, _, term = issue_new_policy(tenant)
    # the change created now was issued before one created earlier: the stack follows issued times
    later, first_change, _ = issue_change(tenant, policy, term, issued=ISSUED_AT + timedelta(days=40))
    _, second_change, _ = issue_change(tenant, later, term, issued=ISSUED_AT + timedelta(days=20))

    stack = repository.stack(tenant, policy.locator)

    assert stack is not None
    assert [t.locator for t in stack.transactions] == [issuance.locator, first_change.locator, second_change.locator]
    assert [t.locator for t in stack.issued()] == [issuance.locator, second_change.locator, first_change.locator]


def test_transactions_and_segments_are_found_by_locator_alone(tenant):
    policy, issuance, made, _ = issue_new_policy(tenant)

    assert repository.policy_of_transaction(tenant, issuance.locator) == policy.locator
    assert repository.get_segment(tenant, made.locator) == made
    assert repository.policy_of_transaction(tenant, made.locator) is None
    assert repository.get_segment(tenant, issuance.locator) is None


def test_an_unknown_policy_has_no_stack(tenant):
    assert repository.stack(tenant, new_locator()) is None


# --- the head: what a transaction in sequence is worked out from, by key --------------------------------


def test_the_head_is_read_by_key_and_leaves_the_history_out(tenant, ddb_calls, query_params):
    policy, issuance, _, term = issue_new_policy(tenant)
    after, change, change_segment = issue_change(tenant, policy, term, issued=ISSUED_AT + timedelta(days=30))
    ddb_calls.clear()

    head = repository.head(tenant, policy.locator)

    # the root, its terms by prefix, then the latest segment and the transactions the root names
    assert ddb_calls == ["GetItem", "Query", "BatchGetItem"]
    assert query_params[-1]["ConsistentRead"] is True
    assert query_params[-1]["ExpressionAttributeValues"][":prefix"] == {"S": "TERM#"}
    assert head is not None and not head.complete
    assert head.policy == after
    assert head.terms == [term]
    assert head.transactions == [change]  # not the issuance: nothing the root names
    assert head.segments == {change_segment.locator: change_segment}


def test_the_head_brings_the_live_transactions_and_their_bases(tenant):
    policy, issuance, made, term = issue_new_policy(tenant)
    draft = transaction(policy.locator, term.locator, made, TransactionCategory.CHANGE, ISSUED_AT).model_copy(
        update={
            "locator": new_locator(),
            "transactionState": TransactionState.DRAFT,
            "issuedTime": None,
            "baseTransactionLocator": issuance.locator,
            "charges": [],
        }
    )
    chained = draft.model_copy(update={"locator": new_locator(), "baseTransactionLocator": draft.locator})
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    repository.add_transaction(uow, tenant, draft)
    repository.add_transaction(uow, tenant, chained)
    repository.save_branch_heads(
        uow, tenant, policy.model_copy(update={"branchHeadTransactionLocators": [chained.locator]})
    )
    uow.commit()

    head = repository.head(tenant, policy.locator)

    assert head is not None
    assert sorted(t.locator for t in head.transactions) == sorted([issuance.locator, draft.locator, chained.locator])
    assert head.policy.version == 2


def test_a_head_shows_no_record_of_an_issue_that_never_committed(tenant):
    policy, issuance, made, term = issue_new_policy(tenant)
    attempt = repository.IssueAttempt(token=new_locator(), committer=issuance.locator)
    orphan = transaction(policy.locator, term.locator, made, TransactionCategory.CHANGE, ISSUED_AT).model_copy(
        update={"locator": new_locator()}
    )
    repository.add_pending(tenant, attempt, [orphan], [])

    head = repository.head(tenant, policy.locator, [orphan.locator])

    assert head is not None
    assert [t.locator for t in head.transactions] == [issuance.locator]


def test_an_unknown_policy_has_no_head(tenant):
    assert repository.head(tenant, new_locator()) is None
