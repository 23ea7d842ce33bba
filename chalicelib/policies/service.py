"""Policies: what issuing a quote creates, and the policy-level reads and changes of spec part 2.

Issuing: the quotes service calls `add_issued_policy` with its own unit of work and commits it, so the
policy (root, term 0, the `issuance` transaction in state `issued`, its coverage segment with the
whole element tree, the first static data history entry and the number guard) and the quote's own
changes are one TransactWriteItems of a fixed number of items, however large the element tree; the
quotes service records `policy.quote.issue`. A policy is one item collection: `issued_stack` reads it
with one strongly consistent Query (`head` and `transaction_head` only what a transaction in sequence is
worked out from, by key), and every issue (repository.add_issue) writes the root on condition of the
version that read saw; so does every other transaction write that moves one of the
policy's branch heads (a new transaction, one discarded or refused: `with_transaction`), which the root
keeps so that reading a policy stays one GetItem.

Numbers: `issuance.policyNumber` is claimed as given; without one the product's numbering plan gives
the next number (configuration/numbers.py); without a plan the policy has none until one is set or
generated. Numbers are unique per tenant: a number in use answers 409 `policy.number_taken`.

Changes (static data, number, contacts, jurisdiction, billing level, delinquency plan) are checked
against the configuration version the policy was issued under, bump the policy's `version` (a lost
race answers 409) and record their event in the same transaction: `policy.staticdata.add|update|
replace` for static data, and `policy.update` for the others, which the platform's event catalogue
does not cover. Static data is validated against the product's `staticData` properties; data that
fails changes nothing and answers the policy as it is with the failed `validationResult` (DECISIONS.md,
Errors). Statuses are not stored: statuses.py derives them from the clock when a policy is shown.

Statuses that time changes (DECISIONS.md "Statuses that change with time") emit `policy.status.update`
at their moment of business time, as a change a request makes does: the policy's due entry
`policy.statusChange` stands at its next such moment (statuses.next_change), put by issuing the policy and
moved by every issue that moves that moment (start, end, cancellation), in the issue's own write; at its
moment (the due pager's run, or a test clock's advance) `run_status_change` records the event in the
entry's unit of work, committed with the entry's move to the moment after (or its removal), so it is
emitted once however often the run is repeated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import BillingLevel, ContactRole
from chalicelib.configuration import datamodel, numbering, numbers, products
from chalicelib.configuration import service as configuration
from chalicelib.core import codes, durations
from chalicelib.core import contacts as contact_list
from chalicelib.core.clock import isoformat
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.core.records import check_size
from chalicelib.policies import repository
from chalicelib.policies.models import (
    ENTITY,
    SEGMENT_ENTITY,
    TERM_ENTITY,
    TRANSACTION_ENTITY,
    HeldScope,
    IssuedStack,
    Policy,
    PolicyIssuance,
    PolicyIssued,
    PolicySnapshot,
    PolicyStatus,
    Segment,
    SegmentSummary,
    Term,
    Transaction,
    TransactionCategory,
    TransactionIssue,
    TransactionState,
    branch_heads,
    renewal_due,
    renewal_plans,
)
from chalicelib.policies.stack import segment_at
from chalicelib.policies.statuses import JUST_BEFORE, next_change, policy_statuses
from chalicelib.priceable.models import DurationBasis, Element, SegmentType, StaticDataVersion
from chalicelib.runtime import due, jobs, versioned, wiring
from chalicelib.runtime.due import DueWork
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.wiring import UnitOfWork

STATIC_ADD_EVENT = "policy.staticdata.add"
STATIC_UPDATE_EVENT = "policy.staticdata.update"
STATIC_REPLACE_EVENT = "policy.staticdata.replace"
UPDATE_EVENT = "policy.update"
STATUS_EVENT = "policy.status.update"
FIRST_TERM = 0
MAX_LOCATOR_LENGTH = 64
DEFAULT_BILLING_LEVEL = BillingLevel.ACCOUNT


# --- issuing -------------------------------------------------------------------------------------


_AS_ISSUED = (
    "accountLocator productName quoteLocator currency timezone termDuration region jurisdiction producerCode"
    " autoRenewalPlanName delinquencyPlanName installmentPlanName invoiceFeeAmount static contacts preferences"
    " startTime endTime configVersion"
).split()
"""What a new policy takes from its issuance as it is."""


def add_issued_policy(ctx: CallContext, uow: UnitOfWork, issuance: PolicyIssuance) -> PolicyIssued:
    """Adds to `uow` (the caller commits ONE transaction) everything issuing creates: the policy (number
    from the plan, or issuance.policyNumber claimed as unique -> 409 on duplicate), term 0, an
    issuance-category transaction in state `issued` with its coverage segment, element tree and
    charges. The event `policy.quote.issue` is the quotes service's to record."""
    model = configuration.model(ctx, issuance.configVersion, resolved=True)
    plan = _numbering_plan(model, issuance.productName)
    basis = DurationBasis(issuance.durationBasis)
    policy_locator, term_locator = new_locator(), new_locator()
    transaction_locator, segment_locator = new_locator(), new_locator()
    number = _first_number(ctx, uow, model, plan, issuance, policy_locator)

    segment = Segment(
        locator=segment_locator,
        transactionLocator=transaction_locator,
        policyLocator=policy_locator,
        termLocator=term_locator,
        segmentType=SegmentType.COVERAGE,
        startTime=issuance.startTime,
        endTime=issuance.endTime,
        duration=durations.duration(issuance.startTime, issuance.endTime, basis, issuance.timezone),
        element=_element(issuance.element, segment_locator, issuance.startTime, _categories(model)),
    )
    transaction = Transaction(
        locator=transaction_locator,
        staticLocator=transaction_locator,
        policyLocator=policy_locator,
        termLocator=term_locator,
        effectiveTime=issuance.startTime,
        transactionState=TransactionState.ISSUED,
        transactionCategory=TransactionCategory.ISSUANCE,
        transactionType=issuance.transactionType,
        preferences=issuance.preferences,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        issuedTime=ctx.now,
        acceptedTime=issuance.acceptedTime or ctx.now,
        segments=[SegmentSummary.of(segment)],
        charges=issuance.charges,
        quoteLocator=issuance.quoteLocator,
        configVersion=issuance.configVersion,
    )
    term = Term(
        locator=term_locator,
        staticLocator=term_locator,
        policyLocator=policy_locator,
        number=FIRST_TERM,
        termNumber=_term_number(model, plan, number, FIRST_TERM),
        startTime=issuance.startTime,
        endTime=issuance.endTime,
    )
    policy = Policy(
        **{name: getattr(issuance, name) for name in _AS_ISSUED},
        locator=policy_locator,
        policyNumber=number,
        durationBasis=basis,
        billingLevel=BillingLevel(issuance.billingLevel) if issuance.billingLevel else _default_billing_level(model),
        issuedTransactionLocator=transaction_locator,
        latestSegmentLocator=segment_locator,
        latestTermLocator=term_locator,
        branchHeadTransactionLocators=[transaction_locator],
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    check_size(segment, code=ENTITY, noun=SEGMENT_ENTITY)
    check_size(policy, code=ENTITY, noun=ENTITY)

    repository.add_issue(uow, ctx.tenant, policy, transaction, [segment], [term], new_policy=True)
    _bill(uow, transaction)
    repository.add_static_version(uow, ctx.tenant, policy.locator, _static_version(ctx, policy.static))
    renewal = _renewal_due(ctx, model, policy)
    if renewal is not None:
        _put_renewal_entry(uow, policy, renewal)
    status_change = _status_change_due(ctx, policy)
    if status_change is not None:
        _plan_status_change(uow, policy, status_change)
    return PolicyIssued(
        policyLocator=policy_locator,
        policyNumber=number,
        termLocator=term_locator,
        transactionLocator=transaction_locator,
        segmentLocator=segment_locator,
    )


def add_migrated_policy(
    ctx: CallContext,
    uow: UnitOfWork,
    policy: Policy,
    terms: list[Term],
    transactions: list[Transaction],
    segments: list[Segment],
    *,
    token: str,
    billed: frozenset[str] = frozenset(),
    pending: list[list[Any]] | None = None,
) -> Policy:
    """A policy a migration brings with its history (chalicelib/migration), its locators derived by the caller:
    every transaction but the last and every segment are written at once, pending under `token` (`token` and
    locators being the same in every run of the migration's account, a rerun rewrites what a crashed one left),
    and `uow` gets the final write, which nothing of the policy is visible before (each segment's element tree
    gets its categories, parents and effective time here, as issuing gives them): the root (numbered by the
    product's plan), its terms, the last transaction committing the pending records, the first static data
    version, the billing job of each issued transaction (but those of `billed`, whose installments the
    migration brings) and the policy's due entries. Answers the policy as added (its number). `pending`: the
    pending records' writes are added to it (`write_pending` writes them) rather than written here, for a caller
    whose final write may hold them too."""
    model = configuration.model(ctx, policy.configVersion, resolved=True)
    plan = _numbering_plan(model, policy.productName)
    if plan is not None and policy.policyNumber is None:
        policy = policy.model_copy(
            update={
                "policyNumber": numbers.renumber(
                    ctx,
                    uow,
                    ENTITY,
                    policy.locator,
                    None,
                    numbers.NextOfPlan(model, plan, product=policy.productName, region=policy.region),
                )
            }
        )
    for record in transactions:
        check_size(record, code=TRANSACTION_ENTITY, noun=TRANSACTION_ENTITY)
    for segment in segments:
        check_size(segment, code=ENTITY, noun=SEGMENT_ENTITY)
    check_size(policy, code=ENTITY, noun=ENTITY)
    categories = _categories(model)
    segments = [
        segment.model_copy(
            update={"element": _element(segment.element, segment.locator, segment.startTime, categories)}
        )
        for segment in segments
    ]
    *earlier, last = transactions
    groups = repository.pending_groups(
        ctx.tenant, repository.IssueAttempt(token=token, committer=last.locator), earlier, segments, replace=True
    )
    if pending is None:
        repository.write_pending(ctx.tenant, groups)
    else:
        pending.extend(groups)
    numbered = [
        term.model_copy(update={"termNumber": _term_number(model, plan, policy.policyNumber, term.number)})
        for term in terms
    ]
    repository.add_issue(uow, ctx.tenant, policy, last, [], numbered, new_policy=True, issue_token=token)
    for transaction in transactions:
        if transaction.transactionState == TransactionState.ISSUED and transaction.locator not in billed:
            _bill(uow, transaction)
    repository.add_static_version(
        uow,
        ctx.tenant,
        policy.locator,
        StaticDataVersion(
            historyLocator=derived_locator(policy.createdAt, f"static:{policy.locator}"),
            staticData=policy.static,
            updatedAt=policy.createdAt,
            updatedBy=policy.createdBy,
        ),
    )
    renewal = _renewal_due(ctx, model, policy)
    if renewal is not None:
        _put_renewal_entry(uow, policy, renewal)
    status_change = _status_change_due(ctx, policy)
    if status_change is not None:
        _plan_status_change(uow, policy, status_change)
    return policy


def write_pending(ctx: CallContext, groups: list[list[Any]]) -> None:
    """The pending records' writes `add_migrated_policy` gave its caller, written (before its final write)."""
    repository.write_pending(ctx.tenant, groups)


def _first_number(
    ctx: CallContext,
    uow: UnitOfWork,
    model: dict[str, Any],
    plan: str | None,
    issuance: PolicyIssuance,
    policy_locator: str,
) -> str | None:
    """The number the quote brings (claimed), else the next of the product's plan; None without a plan."""
    if issuance.policyNumber is not None:
        numbers.check_chosen(issuance.policyNumber, field="policyNumber", what="policy number")
        return numbers.renumber(ctx, uow, ENTITY, policy_locator, None, issuance.policyNumber)
    if plan is None:
        return None
    return numbers.renumber(
        ctx,
        uow,
        ENTITY,
        policy_locator,
        None,
        numbers.NextOfPlan(model, plan, product=issuance.productName, region=issuance.region),
    )


def _element(given: Element, parent: str, effective: datetime, categories: dict[str, str]) -> Element:
    """The segment's tree: each element's parent is the element above it (the root's, its segment),
    its category the configured one, and its coverage term values strings."""
    return given.model_copy(
        update={
            "parentLocator": parent,
            "category": categories.get(given.type),
            "originalEffectiveTime": effective,
            "coverageTerms": {
                name: value if isinstance(value, str) else str(value) for name, value in given.coverageTerms.items()
            },
            "elements": [_element(child, given.locator, effective, categories) for child in given.elements],
        }
    )


def _categories(model: dict[str, Any]) -> dict[str, str]:
    found = {name: element.category for name, element in datamodel.element_types(model).items()}
    found.update(dict.fromkeys(model.get("products") or {}, datamodel.PRODUCT_CATEGORY))
    return found


def _term_number(model: dict[str, Any], plan_name: str | None, policy_number: str | None, number: int) -> str | None:
    """The term's number by its plan's `termNumberFormat` (`{policyNumber}-{termNumberPlusOne}`), for a
    numbered policy whose format has no counter positions of its own."""
    plan = (model.get("numberingPlans") or {}).get(plan_name)
    text = plan.get("termNumberFormat") if isinstance(plan, dict) else None
    if policy_number is None or not text:
        return None
    try:
        return numbering.parse_format(text).render(
            "", {"policyNumber": policy_number, "termNumber": str(number), "termNumberPlusOne": str(number + 1)}
        )
    except numbering.NumberingError:
        return None


def _default_billing_level(model: dict[str, Any]) -> BillingLevel:
    level = model.get("defaultBillingLevel")
    return BillingLevel(level) if level in {member.value for member in BillingLevel} else DEFAULT_BILLING_LEVEL


# --- reading -------------------------------------------------------------------------------------


def get_policy(ctx: CallContext, locator: str) -> Policy:
    """The policy (404 `policy.not_found` when this tenant has none with that locator); its root read once
    per request (CallContext.reads, until the request commits a write; the reads of its stack or head
    count)."""
    policy = (
        ctx.reads.read(
            _read_key(ctx, locator),
            lambda: repository.get(ctx.tenant, locator),
            record=repository.record_key(ctx.tenant, locator),
        )
        if _plausible(locator)
        else None
    )
    if policy is None:
        raise codes.not_found(ENTITY, locator)
    return policy.model_copy(deep=True)


def _read_key(ctx: CallContext, locator: str) -> tuple[str, str, str]:
    return ENTITY, ctx.tenant, locator


def _seen(ctx: CallContext, stack: IssuedStack | None) -> IssuedStack | None:
    """`stack` as just read: its root is what `get_policy` answers for the rest of the request."""
    if stack is not None:
        ctx.reads.put(
            _read_key(ctx, stack.policy.locator),
            stack.policy.model_copy(deep=True),
            record=repository.record_key(ctx.tenant, stack.policy.locator),
        )
    return stack


def policies_with_number(ctx: CallContext, policy_number: str) -> list[Policy]:
    """The policy holding `policy_number` (a one-item list: numbers are unique); 404 when none does."""
    owner = numbers.number_owner(ctx, ENTITY, policy_number)
    policy = repository.get(ctx.tenant, owner) if owner else None
    if policy is None:
        raise codes.not_found(ENTITY, policy_number)
    return [policy]


def policies_by_locator(ctx: CallContext, locators: list[str]) -> dict[str, Policy]:
    """The tenant's policies among `locators`, by locator (one batch read per hundred of those the request has
    not read yet, `get_policy`'s roots: each read at most once per request; those it has not are left out)."""
    plausible = [locator for locator in dict.fromkeys(locators) if _plausible(locator)]
    known = {locator: ctx.reads.get(_read_key(ctx, locator)) for locator in plausible}
    unread = [locator for locator, policy in known.items() if policy is None]
    for locator, policy in (repository.policies(ctx.tenant, unread) if unread else {}).items():
        ctx.reads.put(_read_key(ctx, locator), policy, record=repository.record_key(ctx.tenant, locator))
        known[locator] = policy
    return {locator: policy.model_copy(deep=True) for locator, policy in known.items() if policy is not None}


def policies_of_account(ctx: CallContext, account_locator: str, page: PageRequest) -> Page[Policy]:
    """The account's policies, oldest first (404 `account.not_found` for an unknown account)."""
    accounts.get_account(ctx, account_locator)
    return repository.policies_of_account(ctx.tenant, account_locator, page)


def policy_snapshots_of_account(ctx: CallContext, account_locator: str, page: PageRequest) -> Page[PolicySnapshot]:
    """The latest snapshot of each of the account's policies, oldest policy first."""
    found = policies_of_account(ctx, account_locator, page)
    return Page(_latest_snapshots(ctx, found.items), found.list_completed)


def policy_snapshots(ctx: CallContext, page: PageRequest) -> Page[PolicySnapshot]:
    """The latest snapshot of each of the tenant's policies, oldest policy first."""
    found = repository.all_policies(ctx.tenant, page)
    return Page(_latest_snapshots(ctx, found.items), found.list_completed)


def _latest_snapshots(ctx: CallContext, policies: list[Policy]) -> list[PolicySnapshot]:
    """Each policy with its latest segment and the transaction that made it: one batch read (a second
    only for segments made by a transaction other than the latest issued one)."""
    transactions, segments = repository.transactions_and_segments(
        ctx.tenant,
        [(p.locator, p.issuedTransactionLocator) for p in policies],
        [(p.locator, p.latestSegmentLocator) for p in policies],
    )
    missing = {
        (s.policyLocator, s.transactionLocator) for s in segments.values() if s.transactionLocator not in transactions
    }
    if missing:
        transactions.update(repository.transactions_and_segments(ctx.tenant, missing, [])[0])
    snapshots = []
    for policy in policies:
        segment = segments.get(policy.latestSegmentLocator)
        transaction = transactions.get(segment.transactionLocator) if segment else None
        if segment and transaction:
            snapshots.append(PolicySnapshot(policy=policy, transaction=transaction, segment=segment))
    return snapshots


def snapshot(ctx: CallContext, locator: str, moment: datetime, *, by_issued_time: bool = False) -> PolicySnapshot:
    """The policy as of `moment` (stack.py says which transaction and segment show it);
    404 `snapshot.not_found` when the policy had no state at that moment."""
    stack = issued_stack(ctx, locator)
    found = segment_at(stack.issued(), moment, by_issued_time=by_issued_time)
    segment = stack.segments.get(found[1].locator) if found else None
    if found is None or segment is None:
        raise codes.not_found("snapshot", f"of policy {locator} at {isoformat(moment)}")
    return PolicySnapshot(policy=stack.policy, transaction=found[0], segment=segment)


def issued_stack(ctx: CallContext, locator: str) -> IssuedStack:
    """The policy with its terms, transactions and segments in one strongly consistent read: what a
    transaction is computed from (and its issue written on condition of `policy.version`)."""
    stack = _seen(ctx, repository.stack(ctx.tenant, locator) if _plausible(locator) else None)
    if stack is None:
        raise codes.not_found(ENTITY, locator)
    return stack


def statuses(ctx: CallContext, policy: Policy) -> list[PolicyStatus]:
    """The policy's statuses now (statuses.py)."""
    return _statuses_at(ctx.now, policy)


def _statuses_at(moment: datetime, policy: Policy) -> list[PolicyStatus]:
    return policy_statuses(
        moment, policy.startTime, policy.endTime, policy.cancellationTime, delinquent=bool(policy.delinquencyLocators)
    )


def status_update(
    locator: str, before: list[PolicyStatus], after: list[PolicyStatus]
) -> tuple[str, dict[str, Any]] | None:
    """The event `policy.status.update` of a change of the policy's statuses from `before` to `after`:
    what it adds and removes (None when it changes none)."""
    added = [str(status) for status in after if status not in before]
    removed = [str(status) for status in before if status not in after]
    if not added and not removed:
        return None
    return STATUS_EVENT, {
        "policyLocator": locator,
        "newStatuses": {"listCompleted": True, "items": added},
        "removedStatuses": {"listCompleted": True, "items": removed},
    }


# --- statuses that time changes ---------------------------------------------------------------------


STATUS_BATCH = "policyStatusChange"
"""Where the status entries of one batch keep their policies (read together: one BatchGetItem)."""


def run_status_change(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    """The policy's due entry `policy.statusChange` at its moment (ctx.now): `policy.status.update` with
    what time changed since just before the entry's due time, in the entry's unit of work; the entry then
    moves to the next such moment, or goes (none left, or the policy is gone)."""
    found: dict[str, Policy] | None = work.shared.get(STATUS_BATCH)
    if found is None:
        found = work.shared[STATUS_BATCH] = repository.policies(ctx.tenant, [e.ref for e in work.of_batch()])
    policy = found.get(work.entry.ref)
    if policy is None:
        return {"statusUpdates": 0}
    event = status_update(policy.locator, _statuses_at(work.entry.due_at - JUST_BEFORE, policy), statuses(ctx, policy))
    if event is not None:
        work.uow.record_event(*event)
    following = _status_change_due(ctx, policy)
    if following is not None:
        work.reschedule(following)
    return {"statusUpdates": int(event is not None)}


def _status_change_due(ctx: CallContext, policy: Policy) -> datetime | None:
    return next_change(ctx.now, policy.startTime, policy.endTime, policy.cancellationTime)


def _plan_status_change(uow: UnitOfWork, policy: Policy, at: datetime | None) -> None:
    """The policy's `policy.statusChange` entry at `at`, or none (time changes its statuses no more)."""
    if at is None:
        due.cancel(uow, DueKind.POLICY_STATUS_CHANGE, policy.locator)
    else:
        due.schedule(uow, DueKind.POLICY_STATUS_CHANGE, policy.locator, at)


def static_data(ctx: CallContext, locator: str) -> dict[str, Any]:
    return get_policy(ctx, locator).static


def static_history(ctx: CallContext, locator: str, page: PageRequest) -> Page[StaticDataVersion]:
    """The policy's static data after issuing and after each change, oldest first."""
    policy = get_policy(ctx, locator)
    return repository.static_history(ctx.tenant, policy.locator, page)


def contacts(ctx: CallContext, locator: str) -> list[ContactRole]:
    return get_policy(ctx, locator).contacts


def get_term(ctx: CallContext, locator: str) -> Term:
    term = repository.get_term(ctx.tenant, locator) if _plausible(locator) else None
    if term is None:
        raise codes.not_found(TERM_ENTITY, locator)
    return term


def terms(ctx: CallContext, locator: str, page: PageRequest) -> Page[Term]:
    """The policy's terms in order."""
    policy = get_policy(ctx, locator)
    return repository.terms(ctx.tenant, policy.locator, page)


def transaction_stack(ctx: CallContext, locator: str, policy_locator: str | None = None) -> IssuedStack:
    """The stack of the policy holding transaction `locator` (its alias names the policy: one
    consistent GetItem, unless the caller read it already: `policy_locator`; then the collection's one
    strongly consistent Query); 404 `transaction.not_found` when this tenant has no such transaction."""
    if policy_locator is None:
        policy_locator = repository.policy_of_transaction(ctx.tenant, locator) if _plausible(locator) else None
    stack = _seen(ctx, repository.stack(ctx.tenant, policy_locator) if policy_locator else None)
    if stack is None or not any(t.locator == locator for t in stack.transactions):
        raise codes.not_found(TRANSACTION_ENTITY, locator)
    return stack


def get_transaction(ctx: CallContext, locator: str) -> Transaction:
    """A transaction by locator, read by key whatever its policy's history (its alias, then the record:
    two consistent GetItems); 404 `transaction.not_found`."""
    policy_locator = repository.policy_of_transaction(ctx.tenant, locator) if _plausible(locator) else None
    transaction = repository.get_transaction(ctx.tenant, policy_locator, locator) if policy_locator else None
    if transaction is None:
        raise codes.not_found(TRANSACTION_ENTITY, locator)
    return transaction


def transactions_of_policy(ctx: CallContext, policy_locator: str, locators: list[str]) -> dict[str, Transaction]:
    """The policy's transactions among `locators` that are committed, by locator (one consistent
    BatchGetItem per 100): an aggregate's parts, say."""
    found, _ = repository.transactions_and_segments(ctx.tenant, [(policy_locator, x) for x in locators], [])
    return found


def segments_of_policy(ctx: CallContext, policy_locator: str, locators: list[str]) -> dict[str, Segment]:
    """The policy's segments among `locators`, by locator (one consistent BatchGetItem per 100): those an
    issued transaction names, which its issue committed."""
    _, found = repository.transactions_and_segments(ctx.tenant, [], [(policy_locator, s) for s in locators])
    return found


def head(ctx: CallContext, locator: str) -> IssuedStack | None:
    """The policy's head (repository.head: the root, its terms, the latest segment and transactions,
    the live unissued ones; IssuedStack.complete False), read consistently by key whatever the policy's
    history; None where `issued_stack` is the read to make (an unknown policy, a deep unissued chain)."""
    return _seen(ctx, repository.head(ctx.tenant, locator) if _plausible(locator) else None)


def transaction_head(ctx: CallContext, locator: str) -> IssuedStack | None:
    """The head of the policy holding transaction `locator`, with that transaction (its alias names the
    policy: one consistent GetItem, then `head`'s reads); None where `transaction_stack` is the read to
    make (an unknown transaction among them, which it answers 404)."""
    policy_locator = repository.policy_of_transaction(ctx.tenant, locator) if _plausible(locator) else None
    found = _seen(ctx, repository.head(ctx.tenant, policy_locator, [locator]) if policy_locator else None)
    if found is None or not any(t.locator == locator for t in found.transactions):
        return None
    return found


def get_segment(ctx: CallContext, locator: str) -> Segment:
    segment = repository.get_segment(ctx.tenant, locator) if _plausible(locator) else None
    if segment is None:
        raise codes.not_found(SEGMENT_ENTITY, locator)
    return segment


def issued_transactions(ctx: CallContext, locator: str, page: PageRequest) -> Page[Transaction]:
    """The policy's local stack of issued transactions (none reversed or reapplied), in issuing order."""
    policy = get_policy(ctx, locator)
    return repository.issued_transactions(ctx.tenant, policy.locator, page)


# --- transactions (the transactions domain works them out; they are stored here) -------------------


def add_transaction(ctx: CallContext, uow: UnitOfWork, stack: IssuedStack, transaction: Transaction) -> IssuedStack:
    """Adds a new transaction of the policy (and its alias) to `uow`, and the branch heads it changes
    (`with_transaction`); answers the stack as the commit leaves it."""
    _check_of_policy(stack, transaction)
    repository.add_transaction(uow, ctx.tenant, transaction)
    return _branched(uow, ctx.tenant, stack, transaction)


def save_transaction(ctx: CallContext, uow: UnitOfWork, stack: IssuedStack, transaction: Transaction) -> IssuedStack:
    """Adds the rewrite of a transaction of the policy to `uow`, on condition of its version, and the
    branch heads it changes (`with_transaction`: discarding or refusing a head); answers the stack as
    the commit leaves it. An issue writes the root itself (`issue_transaction`)."""
    _check_of_policy(stack, transaction)
    repository.save_transaction(uow, ctx.tenant, transaction)
    return _branched(uow, ctx.tenant, stack, transaction)


def with_transaction(stack: IssuedStack, transaction: Transaction) -> IssuedStack:
    """The stack once `transaction` (new, or changed other than by issuing it) is written: in place of its
    earlier version, else after the others; when that changes the policy's branch heads (models.
    branch_heads: a new head, one discarded or refused), the root with the new heads at its next version,
    for the write changes the root on condition of its version. The heads before are worked out as the
    after ones are, not read from the root, so a change that moves no head never writes it."""
    after = [transaction if t.locator == transaction.locator else t for t in stack.transactions]
    if all(t.locator != transaction.locator for t in stack.transactions):
        after.append(transaction)
    policy = stack.policy
    heads = branch_heads(after, policy.issuedTransactionLocator)
    if heads != branch_heads(stack.transactions, policy.issuedTransactionLocator):
        policy = policy.model_copy(update={"branchHeadTransactionLocators": heads, "version": policy.version + 1})
    return stack.model_copy(update={"policy": policy, "transactions": after})


def _branched(uow: UnitOfWork, tenant: str, stack: IssuedStack, transaction: Transaction) -> IssuedStack:
    after = with_transaction(stack, transaction)
    if after.policy.version != stack.policy.version:
        repository.save_branch_heads(uow, tenant, after.policy.model_copy(update={"version": stack.policy.version}))
    return after


def issue_transaction(
    ctx: CallContext,
    uow: UnitOfWork,
    stack: IssuedStack,
    issue: TransactionIssue,
    *,
    new_transaction: bool = False,
    billed_by_caller: bool = False,
    billed_in: BilledIn | None = None,
) -> list[Transaction]:
    """Adds everything issuing a transaction writes to `uow` (the caller has recorded the events in it
    already, and commits): the policy root on condition that it is still at the version `stack` saw (409
    when another issue came first), the issued transaction and the others it changes on condition of
    theirs, its segments, new terms (numbered by the plan's `termNumberFormat`), changed and removed ones,
    the transactions it adds. Invalidations that do not fit in what `uow` has left are answered, in
    locator order, to be written once it committed (`save_transactions`): a branch a failure leaves
    pending cannot be issued anyway, its base being no longer the latest.

    When the rest does not fit either (out of sequence or a reversal, past some 12 later transactions),
    the records nothing visible names before the commit (the added transactions and the segments they
    make) are written at once, pending under a new token (`_write_pending`), and `uow` keeps the final
    write, in which the issued transaction carries that token: no read shows them unless it committed.
    Records of attempts that never committed, which `stack` saw, are deleted once `uow` committed.
    `new_transaction`: the issued transaction was never stored (created and issued in one write): it is
    added with its alias, at the version its creation and issue would have left it. `billed_by_caller`: the
    caller bills the transaction once `uow` committed (billing's lapse): `uow` carries the billing safety net's
    due entry instead of the billing job, which billing's write removes (the entry enqueues the job should the
    caller not get there). `billed_in`: the caller's billing of the issue in `uow` itself, given the
    transaction, the root and the policy's terms as the issue writes them; when it answers True (it added its
    billing, leaving room for the rest), `uow` carries neither the safety net nor the job; when False, the
    safety net (`billed_by_caller`) or the job (a due renewal's issue: billing's auto-renewal handler)."""
    model = _model(ctx, stack.policy)
    plan = _numbering_plan(model, stack.policy.productName)
    for record in (issue.transaction, *issue.changed, *issue.invalidated, *issue.added):
        _check_of_policy(stack, record)
        check_size(record, code=TRANSACTION_ENTITY, noun=TRANSACTION_ENTITY)
    for segment in issue.segments:
        check_size(segment, code=ENTITY, noun=SEGMENT_ENTITY)
    policy = issue.policy.model_copy(update={"version": stack.policy.version, "validationResult": None})
    check_size(policy, code=ENTITY, noun=ENTITY)
    terms_added = [
        term.model_copy(update={"termNumber": _term_number(model, plan, policy.policyNumber, term.number)})
        for term in issue.terms
    ]
    renewal = _renewal_due(
        ctx, model if policy.configVersion == stack.policy.configVersion else _model(ctx, policy), policy
    )
    renewal_moves = renewal != _renewal_due(ctx, model, stack.policy)
    status_change = _status_change_due(ctx, policy)
    status_moves = status_change != _status_change_due(ctx, stack.policy)
    # the final write's own records: the root, the issued transaction, each new term with its alias, the
    # changed terms, each removed term with its alias, the changed transactions, the moved renewal and
    # status entries
    final = (
        2
        + int(new_transaction)
        + 2 * len(issue.terms)
        + len(issue.changed_terms)
        + 2 * len(issue.removed_terms)
        + len(issue.changed)
        + int(renewal_moves)
        + int(status_moves)
    )
    segments, added, token = issue.segments, issue.added, None
    if final + len(issue.segments) + 2 * len(issue.added) > uow.remaining and issue.added:
        segments, token = _write_pending(ctx, uow, issue, final)
        added = []
    issued = (
        issue.transaction.model_copy(update={"version": issue.transaction.version + 1})
        if new_transaction
        else issue.transaction
    )
    repository.add_issue(
        uow, ctx.tenant, policy, issued, segments, terms_added, new_transaction=new_transaction, issue_token=token
    )
    if renewal_moves:
        if renewal is None:
            due.cancel(uow, DueKind.POLICY_AUTO_RENEW, policy.locator)
        else:
            _put_renewal_entry(uow, policy, renewal)
    if status_moves:
        _plan_status_change(uow, policy, status_change)
    for term in issue.changed_terms:
        repository.save_term(uow, ctx.tenant, term)
    for term in issue.removed_terms:
        repository.delete_term(uow, ctx.tenant, term)
    for transaction in issue.changed:
        repository.save_transaction(uow, ctx.tenant, transaction)
    for transaction in added:
        repository.add_transaction(uow, ctx.tenant, transaction)
    if (
        uow.remaining > 0
        and billed_in is not None
        and billed_in(uow, issued, policy, _terms_after(stack, issue, terms_added))
    ):
        pass  # billed in this write: neither the safety net nor the job
    elif uow.remaining > 0 and billed_by_caller:
        due.schedule(uow, DueKind.TRANSACTION_BILLING, issue.transaction.locator, ctx.now + BILLING_SAFETY_NET_DELAY)
    elif uow.remaining > 0:
        _bill(uow, issue.transaction)
    else:  # the largest out-of-sequence issues: billed by a write of its own once the issue committed
        _put_billing_safety_net(ctx, issue.transaction)
        uow.after_commit(lambda: enqueue_billing(ctx, issue.transaction))
    if stack.abandoned_transactions or stack.abandoned_segments:
        uow.after_commit(
            lambda: repository.delete_abandoned(
                ctx.tenant, stack.policy.locator, stack.abandoned_transactions, stack.abandoned_segments
            )
        )
    invalidated = sorted(issue.invalidated, key=lambda t: t.locator)
    room = max(uow.remaining, 0)
    for transaction in invalidated[:room]:
        repository.save_transaction(uow, ctx.tenant, transaction)
    return invalidated[room:]


BilledIn = Callable[[UnitOfWork, Transaction, Policy, list[Term]], bool]
"""A caller's billing of an issue in the issue's own write (`issue_transaction`'s `billed_in`)."""


def _terms_after(stack: IssuedStack, issue: TransactionIssue, added: list[Term]) -> list[Term]:
    """The policy's terms as the issue leaves them: those `stack` read, changed or removed as it says, and the
    ones it adds."""
    changed = {term.locator: term for term in issue.changed_terms}
    removed = {term.locator for term in issue.removed_terms}
    kept = [changed.get(term.locator, term) for term in stack.terms if term.locator not in removed]
    return [*kept, *added]


def _bill(uow: UnitOfWork, transaction: Transaction) -> None:
    """Billing turns the issued transaction's charges into installments, asynchronously: the job is
    enqueued in the issue's own write, so an issue is billed exactly when it committed (but for an issue
    that fills its write: its job follows in a write of its own, `enqueue_billing`)."""
    locator, payload = _billing_job(transaction)
    jobs.enqueue(uow, JobType.BILLING_INSTALLMENTS, payload, locator=locator)


def _billing_job(transaction: Transaction) -> tuple[str, dict[str, str]]:
    """The locator and payload of the transaction's billing job: the same for every path that enqueues it."""
    locator = derived_locator(transaction.issuedTime or transaction.createdAt, f"billing:{transaction.locator}")
    return locator, {
        "transactionLocator": transaction.locator,
        "policyLocator": transaction.policyLocator,
        "jobLocator": locator,
    }


def billing_job_locator(transaction: Transaction) -> str:
    """The locator of the issued transaction's billing job (its installment job's record), billed by a job or
    by its caller (`issue_transaction`'s `billed_by_caller`)."""
    return _billing_job(transaction)[0]


def enqueue_billing(ctx: CallContext, transaction: Transaction) -> bool:
    """Enqueue the issued transaction's billing job in a write of its own, unless it exists: answers whether
    this call enqueued it."""
    locator, payload = _billing_job(transaction)
    return jobs.enqueue_once(ctx, JobType.BILLING_INSTALLMENTS, payload, locator=locator)


BILLING_SAFETY_NET_DELAY = timedelta(minutes=15)
"""How long after an issue too large for its billing job its safety net looks for that job."""


def _put_billing_safety_net(ctx: CallContext, transaction: Transaction) -> None:
    """Written before the issue's final write, in a write of its own: a due entry that bills the
    transaction if the issue committed but the process died before `enqueue_billing` (and does nothing if
    the issue never committed: transactions/job_handlers.py), so an issued transaction is always billed."""
    uow = wiring.unit_of_work(ctx)
    due.schedule(uow, DueKind.TRANSACTION_BILLING, transaction.locator, ctx.now + BILLING_SAFETY_NET_DELAY)
    uow.commit()


def _write_pending(ctx: CallContext, uow: UnitOfWork, issue: TransactionIssue, final: int) -> tuple[list[Segment], str]:
    """Writes the added transactions and their segments pending under a new token (the issued
    transaction's own segments keep their planned locators, the same in every attempt: they stay in the
    final write); answers those and the token. 409 `transaction.aggregate_too_large`, writing nothing,
    when the final write (its `final` own records and those segments, beside the caller's events in
    `uow`) would not fit in one TransactWriteItems either."""
    own = {summary.locator for summary in issue.transaction.segments}
    kept = [segment for segment in issue.segments if segment.locator in own]
    if final + len(kept) > uow.remaining:
        needed = uow.capacity - uow.remaining + final + len(kept)
        raise codes.TRANSACTION_AGGREGATE_TOO_LARGE(
            f"Issuing transaction {issue.transaction.locator} changes {len(issue.changed)} issued transactions; "
            f"with its events that is {needed} records to write at once, and one write holds at most "
            f"{uow.capacity}"
        )
    attempt = repository.IssueAttempt(token=new_locator(), committer=issue.transaction.locator)
    repository.add_pending(
        ctx.tenant, attempt, issue.added, [segment for segment in issue.segments if segment.locator not in own]
    )
    return kept, attempt.token


def save_transactions(ctx: CallContext, stack: IssuedStack, transactions: list[Transaction]) -> None:
    """Rewrites the transactions an issue invalidated beyond its own write (each on condition of its
    version), as many per TransactWriteItems as one holds; the issue's root names the branches already."""
    start = 0
    while start < len(transactions):
        uow = wiring.unit_of_work(ctx)
        batch = transactions[start : start + max(uow.remaining, 1)]
        for transaction in batch:
            _check_of_policy(stack, transaction)
            repository.save_transaction(uow, ctx.tenant, transaction)
        uow.commit()
        start += len(batch)


def _check_of_policy(stack: IssuedStack, transaction: Transaction) -> None:
    if transaction.policyLocator != stack.policy.locator:
        raise ValueError(f"transaction {transaction.locator} is not of policy {stack.policy.locator}")


# --- changing ------------------------------------------------------------------------------------


def add_static_data(ctx: CallContext, locator: str, values: dict[str, Any]) -> Policy:
    """Sets the given static data fields, keeping the others."""
    policy = get_policy(ctx, locator)
    return _change_static(ctx, policy, {**policy.static, **values}, STATIC_ADD_EVENT)


def update_static_data(
    ctx: CallContext, locator: str, *, set_data: dict[str, Any], remove_data: dict[str, Any]
) -> Policy:
    """Drops the fields named in `remove_data` (their values are not looked at), then sets `set_data`."""
    policy = get_policy(ctx, locator)
    static = {name: value for name, value in policy.static.items() if name not in remove_data}
    return _change_static(ctx, policy, {**static, **set_data}, STATIC_UPDATE_EVENT)


def replace_static_data(ctx: CallContext, locator: str, values: dict[str, Any]) -> Policy:
    return _change_static(ctx, get_policy(ctx, locator), values, STATIC_REPLACE_EVENT)


def _change_static(ctx: CallContext, policy: Policy, static: dict[str, Any], event: str) -> Policy:
    held = next((h for h in policy.entityHolds if h.staticData), None)
    if held is not None:
        raise codes.POLICY_HELD(f"Hold {held.holdLocator} keeps policy {policy.locator}'s static data as it is")
    model = _model(ctx, policy)
    product = datamodel.product_type(model, policy.productName)
    properties = (product.definition.get("staticData") or {}) if product else {}
    normalised, errors = datamodel.validate_data(model, properties, static, path="static")
    if errors:
        return policy.model_copy(
            update={
                "validationResult": datamodel.validation_result(
                    errors, locator=policy.locator, element_type=policy.productName
                )
            }
        )
    changed = policy.model_copy(update={"static": normalised})
    uow = wiring.unit_of_work(ctx)
    repository.add_static_version(uow, ctx.tenant, policy.locator, _static_version(ctx, normalised))
    return _save(ctx, uow, changed, event)


def _static_version(ctx: CallContext, static: dict[str, Any]) -> StaticDataVersion:
    return StaticDataVersion(
        historyLocator=new_locator(), updatedAt=ctx.now, updatedBy=ctx.user_locator, staticData=static
    )


def set_billing_level(ctx: CallContext, locator: str, billing_level: BillingLevel) -> Policy:
    policy = get_policy(ctx, locator)
    return _save(ctx, wiring.unit_of_work(ctx), policy.model_copy(update={"billingLevel": billing_level}))


def set_delinquency_plan(ctx: CallContext, locator: str, plan_name: str) -> Policy:
    """400 `policy.invalid_reference` for a plan the policy's configuration does not have."""
    policy = get_policy(ctx, locator)
    _check_reference(_model(ctx, policy), "delinquencyPlans", "delinquencyPlanName", plan_name)
    return _save(ctx, wiring.unit_of_work(ctx), policy.model_copy(update={"delinquencyPlanName": plan_name}))


def mark_delinquencies(
    ctx: CallContext, uow: UnitOfWork, locator: str, *, in_grace: Iterable[str] = (), ended: Iterable[str] = ()
) -> None:
    """Adds to the caller's unit of work (billing's, with its delinquencies) the policy's record of which of
    its delinquencies are in grace: `in_grace` join it, `ended` (settled, lapsed) leave it; with
    `policy.status.update` when that adds or removes its status `delinquent` (a cancelled policy shows
    `cancelled` alone). Nothing when it is so already."""
    policy = get_policy(ctx, locator)
    changed = delinquencies_marked(ctx, uow, policy, in_grace=in_grace, ended=ended)
    if changed is not policy:
        repository.save(uow, ctx.tenant, changed)


def delinquencies_marked(
    ctx: CallContext, uow: UnitOfWork, policy: Policy, *, in_grace: Iterable[str] = (), ended: Iterable[str] = ()
) -> Policy:
    """`mark_delinquencies` of a policy the caller has read and writes itself (a lapse's issue, which
    rewrites the root anyway): the policy as it changes it (`policy` itself when it does not), with its
    `policy.status.update` recorded in `uow`; nothing saved."""
    gone = set(ended)
    held = [d for d in dict.fromkeys([*policy.delinquencyLocators, *in_grace]) if d not in gone]
    if held == policy.delinquencyLocators:
        return policy
    changed = policy.model_copy(
        update={
            "delinquencyLocators": held,
            "updatedAt": ctx.now,
            "updatedBy": ctx.user_locator,
            "validationResult": None,
        }
    )
    event = status_update(policy.locator, statuses(ctx, policy), statuses(ctx, changed))
    if event is not None:
        uow.record_event(*event)
    return changed


def set_entity_hold(ctx: CallContext, uow: UnitOfWork, locator: str, scope: HeldScope, *, active: bool) -> None:
    """Adds to the caller's unit of work (the holds domain's) the policy with the hold's scope in force, or
    no longer (conditional on the policy's version)."""
    policy = get_policy(ctx, locator)
    kept = [held for held in policy.entityHolds if held.holdLocator != scope.holdLocator]
    repository.save(
        uow,
        ctx.tenant,
        policy.model_copy(
            update={
                "entityHolds": [*kept, scope] if active else kept,
                "updatedAt": ctx.now,
                "updatedBy": ctx.user_locator,
                "validationResult": None,
            }
        ),
    )


def set_jurisdiction(ctx: CallContext, locator: str, jurisdiction: str | None) -> Policy:
    """A configured jurisdiction, or None to remove it (400 `policy.invalid_reference` for another)."""
    policy = get_policy(ctx, locator)
    if jurisdiction is not None:
        _check_reference(_model(ctx, policy), "jurisdictions", "jurisdiction", jurisdiction)
    return _save(ctx, wiring.unit_of_work(ctx), policy.model_copy(update={"jurisdiction": jurisdiction}))


def add_contact(ctx: CallContext, locator: str, contact: ContactRole) -> Policy:
    """409 `policy.contact_exists` when the contact is on the policy already (change its roles with
    `update_contact`)."""
    policy = get_policy(ctx, locator)
    _check_roles(_model(ctx, policy), contact.roles, "roles")
    changed = contact_list.added(policy.contacts, contact, code=ENTITY, noun=ENTITY)
    return _save(ctx, wiring.unit_of_work(ctx), policy.model_copy(update={"contacts": changed}))


def update_contact(
    ctx: CallContext, locator: str, contact_locator: str, *, add_roles: list[str], remove_roles: list[str]
) -> Policy:
    policy = get_policy(ctx, locator)
    changed = contact_list.with_roles(policy.contacts, contact_locator, add_roles=add_roles, remove_roles=remove_roles)
    _check_roles(_model(ctx, policy), add_roles, "addRoles")
    return _save(ctx, wiring.unit_of_work(ctx), policy.model_copy(update={"contacts": changed}))


def delete_contact(ctx: CallContext, locator: str, contact_locator: str) -> Policy:
    policy = get_policy(ctx, locator)
    changed = contact_list.removed(policy.contacts, contact_locator)
    return _save(ctx, wiring.unit_of_work(ctx), policy.model_copy(update={"contacts": changed}))


def set_number(ctx: CallContext, locator: str, policy_number: str) -> Policy:
    """A number chosen by the caller; 409 `policy.number_taken` when another policy has it."""
    numbers.check_chosen(policy_number, field="policyNumber", what="policy number")
    policy = get_policy(ctx, locator)
    if policy.policyNumber == policy_number:
        return policy
    return _renumbered(ctx, policy, policy_number)


def generate_number(ctx: CallContext, locator: str) -> Policy:
    """The next number of the product's plan, replacing the policy's number (if any);
    409 `policy.no_numbering_plan` when the product has none."""
    policy = get_policy(ctx, locator)
    model = _model(ctx, policy)
    plan = _numbering_plan(model, policy.productName)
    if plan is None:
        raise codes.NO_NUMBERING_PLAN["policy"](f"Product {policy.productName} has no numbering plan")
    return _renumbered(ctx, policy, numbers.NextOfPlan(model, plan, product=policy.productName, region=policy.region))


# --- helpers ---------------------------------------------------------------------------------------


def _plausible(locator: str) -> bool:
    """Locators are short; a longer one cannot exist (and would not fit in a key)."""
    return 0 < len(locator) <= MAX_LOCATOR_LENGTH


def _model(ctx: CallContext, policy: Policy) -> dict[str, Any]:
    """The resolved model of the configuration version the policy was issued under."""
    return configuration.model(ctx, policy.configVersion, resolved=True)


def _renewal_due(ctx: CallContext, model: dict[str, Any], policy: Policy) -> datetime | None:
    """When the renewal of the policy as it stands falls due (models.renewal_due), by its configuration's plan."""
    return renewal_due(renewal_plans(model).get(policy.autoRenewalPlanName or ""), policy, ctx.now)


def _put_renewal_entry(uow: UnitOfWork, policy: Policy, at: datetime) -> None:
    """The policy's `policy.autoRenew` due entry at `at`, wherever the auto-renewal job had moved it (the
    transactions domain handles it; its account is kept for the job to read a page's accounts at once)."""
    due.schedule(uow, DueKind.POLICY_AUTO_RENEW, policy.locator, at, {"accountLocator": policy.accountLocator})


def _numbering_plan(model: dict[str, Any], product_name: str) -> str | None:
    product = products.product(model, product_name)
    return product.numbering_plan if product else None


def _check_reference(model: dict[str, Any], collection: str, field: str, name: str) -> None:
    if name not in (model.get(collection) or {}):
        raise codes.INVALID_REFERENCE["policy"](
            f"'{name}' is not defined in the configuration's {collection}",
            field_errors=[FieldError(field, f"'{name}' is not defined in {collection}")],
        )


def _check_roles(model: dict[str, Any], roles: Iterable[str], field: str) -> None:
    """Roles must be among the tenant's `contactRoles` when the configuration lists any."""
    contact_list.check_roles(model.get("contactRoles") or [], roles, field, code=ENTITY)


def _renumbered(ctx: CallContext, policy: Policy, new: str | numbers.NextOfPlan) -> Policy:
    uow = wiring.unit_of_work(ctx)
    number = numbers.renumber(ctx, uow, ENTITY, policy.locator, policy.policyNumber, new)
    return _save(ctx, uow, policy.model_copy(update={"policyNumber": number}))


def _save(ctx: CallContext, uow: UnitOfWork, policy: Policy, event: str = UPDATE_EVENT) -> Policy:
    """Writes the changed policy (conditional on the version it was read at) with its event."""
    return versioned.save(
        ctx,
        uow,
        policy.model_copy(update={"validationResult": None}),
        repository.save,
        [(event, {"policyLocator": policy.locator})],
        code=ENTITY,
        noun=ENTITY,
    )
