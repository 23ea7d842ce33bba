"""Persistence of a policy as one item collection (storage/keys.py), partition `T#{t}#POL#{p}`:

- `#ROOT`: the policy (GSI1 `T#{t}#ACC#{a}#POLS` and GSI2 `T#{t}#POLICIES`, sort key its locator, a
  ULID: creation order);
  `SEG#{s}`: a segment, its element tree included (GSI1 `T#{t}#SEG#{s}`: found by locator);
  `STATIC#{h}`: its static data history; `TERM#{n:04}`: its terms; `TX#{x}`: a transaction (GSI1
  `T#{t}#TXN#{x}`: found by locator; while issued, GSI2 `T#{t}#POL#{p}#ISSUED` by issued time: the
  paged list of the issued stack).
- `T#{t}#TERM#{term}`: alias of a term (its policy and number), for reading a term by locator.

`stack` reads the whole collection with one strongly consistent Query (one per MB), root first; `head`
reads what a transaction in sequence is worked out from, by key, whatever the policy's age: the root,
its terms, then the latest segment and the transactions the root names (latest issued, branch heads) and
their unissued bases. Every issue (`add_issue`) rewrites the root on condition of the version that read
saw, in the same TransactWriteItems as the issue's items, so an issue computed from a stale stack or head
answers 409; a transaction write that moves a branch head rewrites the root's heads the same way
(`save_branch_heads`).

An issue too large for one TransactWriteItems (an out-of-sequence issue or a reversal reapplying many
transactions) is written in two stages (`add_pending`): first the records nothing visible names yet (the
transactions it adds, their aliases, the segments they make), in chunks, each carrying the attempt's
token (`pendingIssue`) and the transaction whose final write commits it (`pendingIssueBy`); then the
final write, which rewrites the root (on condition of its version) and that transaction with the token
as its `issueToken`. Every read treats a pending record as absent unless its committing transaction
carries its token (`visible`): a failure or a lost race leaves records no read shows (and a retry has a
new token), which the next issue of the policy deletes once it committed (`delete_abandoned`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.errors import Unavailable
from chalicelib.core.paging import Page, PageRequest
from chalicelib.policies.models import (
    LIVE_UNISSUED,
    IssuedStack,
    Policy,
    Segment,
    Term,
    Transaction,
    TransactionState,
)
from chalicelib.priceable.models import StaticDataVersion
from chalicelib.storage import codec, contact_index, keys, query, table, versioned
from chalicelib.storage.table import MAX_TRANSACTION_ITEMS, MAX_WRITE_BYTES, WriteOp, chunked, request_size
from chalicelib.storage.unit_of_work import UnitOfWork

ACCOUNT_INDEX = "GSI1"
TENANT_INDEX = "GSI2"
LOOKUP_INDEX = "GSI1"
ISSUED_INDEX = "GSI2"
POLICY_ENTITY = "policy"
TERM_ENTITY = "term"
TRANSACTION_ENTITY = "transaction"
SEGMENT_ENTITY = "segment"
PENDING_ISSUE = "pendingIssue"
"""The token of the issue attempt that wrote a record before its final write (absent: written in it)."""
PENDING_ISSUE_BY = "pendingIssueBy"
"""The transaction whose final write commits a pending record (by carrying its token)."""
ISSUE_TOKEN = "issueToken"
"""On a transaction: the token of the attempt its issue committed."""


def _scope(tenant: str) -> str:
    return keys.tenant_scope(tenant)


def _record(item: dict[str, Any]) -> dict[str, Any]:
    return codec.without_keys(item)


# --- policies ------------------------------------------------------------------------------------


def record_key(tenant: str, locator: str) -> tuple[str, str]:
    """The stored policy root's (PK, SK): what a request's read cache forgets when a write changes it."""
    key = keys.policy(tenant, locator)
    return key.pk, key.sk


def get(tenant: str, locator: str) -> Policy | None:
    item = table.gateway().get(_scope(tenant), keys.policy(tenant, locator))
    return Policy.model_validate(_record(item)) if item else None


def policies(tenant: str, locators: Iterable[str]) -> dict[str, Policy]:
    """The existing ones of the given policies, by locator (one consistent BatchGetItem per 100)."""
    items = table.gateway().batch_get(_scope(tenant), [keys.policy(tenant, locator) for locator in locators])
    return {policy.locator: policy for policy in (Policy.model_validate(_record(item)) for item in items)}


def add(uow: UnitOfWork, tenant: str, policy: Policy) -> None:
    uow.add(
        *contact_index.put_new_holder(
            tenant,
            keys.policy(tenant, policy.locator),
            POLICY_ENTITY,
            policy,
            indexes={
                f"{ACCOUNT_INDEX}PK": keys.account_policies_index(tenant, policy.accountLocator),
                f"{ACCOUNT_INDEX}SK": policy.locator,
                f"{TENANT_INDEX}PK": keys.policies_index(tenant),
                f"{TENANT_INDEX}SK": policy.locator,
            },
            exists="The policy already exists",
            exclude={"validationResult"},
        )
    )


def save(uow: UnitOfWork, tenant: str, policy: Policy) -> None:
    """Rewrites the policy, on condition that it is still at `policy.version` (else 409)."""
    key = keys.policy(tenant, policy.locator)
    uow.add(*contact_index.rewrite_holder(tenant, key, POLICY_ENTITY, policy, exclude={"validationResult"}))


def save_branch_heads(uow: UnitOfWork, tenant: str, policy: Policy) -> None:
    """Rewrites the policy's branch heads alone, on condition that it is still at `policy.version` (else
    409), which the write bumps."""
    uow.add(
        table.update(
            keys.policy(tenant, policy.locator),
            {"branchHeadTransactionLocators": policy.branchHeadTransactionLocators},
            expected_version=policy.version,
        )
    )


def policies_of_account(tenant: str, account_locator: str, page: PageRequest) -> Page[Policy]:
    found = query.page(
        table.gateway(), _scope(tenant), keys.account_policies_index(tenant, account_locator), page, index=ACCOUNT_INDEX
    )
    return Page([Policy.model_validate(_record(item)) for item in found.items], found.list_completed)


def all_policies(tenant: str, page: PageRequest) -> Page[Policy]:
    found = query.page(table.gateway(), _scope(tenant), keys.policies_index(tenant), page, index=TENANT_INDEX)
    return Page([Policy.model_validate(_record(item)) for item in found.items], found.list_completed)


# --- static data history -------------------------------------------------------------------------


def add_static_version(uow: UnitOfWork, tenant: str, policy_locator: str, version: StaticDataVersion) -> None:
    uow.add(
        table.put_new(
            {
                **keys.policy_static_version(tenant, policy_locator, version.historyLocator).as_dict(),
                "entity": "policyStaticData",
                **version.model_dump(),
            }
        )
    )


def static_history(tenant: str, policy_locator: str, page: PageRequest) -> Page[StaticDataVersion]:
    found = query.page(
        table.gateway(),
        _scope(tenant),
        keys.policy_partition(tenant, policy_locator),
        page,
        sk_prefix=keys.STATIC_HISTORY_PREFIX,
    )
    return Page([StaticDataVersion.model_validate(_record(item)) for item in found.items], found.list_completed)


# --- terms ---------------------------------------------------------------------------------------


def add_term(uow: UnitOfWork, tenant: str, term: Term) -> None:
    uow.add(
        table.put_new(
            {
                **keys.policy_term(tenant, term.policyLocator, term.number).as_dict(),
                "entity": TERM_ENTITY,
                **term.model_dump(),
            },
            lambda: codes.CONFLICT_ALREADY_EXISTS("The term already exists"),
        ),
        table.put_new(
            {
                **keys.term_alias(tenant, term.locator).as_dict(),
                "entity": "termAlias",
                "policyLocator": term.policyLocator,
                "number": term.number,
            }
        ),
    )


def get_term(tenant: str, term_locator: str) -> Term | None:
    alias = table.gateway().get(_scope(tenant), keys.term_alias(tenant, term_locator))
    if alias is None:
        return None
    item = table.gateway().get(_scope(tenant), keys.policy_term(tenant, alias["policyLocator"], int(alias["number"])))
    return Term.model_validate(_record(item)) if item else None


def terms(tenant: str, policy_locator: str, page: PageRequest) -> Page[Term]:
    found = query.page(
        table.gateway(), _scope(tenant), keys.policy_partition(tenant, policy_locator), page, sk_prefix=keys.TERM_PREFIX
    )
    return Page([Term.model_validate(_record(item)) for item in found.items], found.list_completed)


# --- issues, transactions and segments ----------------------------------------------------------


def add_issue(
    uow: UnitOfWork,
    tenant: str,
    policy: Policy,
    transaction: Transaction,
    segments: Sequence[Segment],
    terms: Sequence[Term] = (),
    *,
    new_policy: bool = False,
    new_transaction: bool = True,
    issue_token: str | None = None,
) -> None:
    """An issued transaction with its segments and new terms, and the policy root as the issue leaves
    it: created (`new_policy`) or rewritten on condition that it is still at `policy.version`, the
    version of the stack the issue was computed from (409 when another issue came first). The
    transaction is added, or (`new_transaction` False: it was worked on before) rewritten on condition
    of its version; with `issue_token` it commits the records `add_pending` wrote with that token."""
    (add if new_policy else save)(uow, tenant, policy)
    for term in terms:
        add_term(uow, tenant, term)
    if new_transaction:
        add_transaction(uow, tenant, transaction, issue_token=issue_token)
    else:
        save_transaction(uow, tenant, transaction, issue_token=issue_token)
    for segment in segments:
        add_segment(uow, tenant, segment)


def save_term(uow: UnitOfWork, tenant: str, term: Term) -> None:
    """Rewrites a term whose span an issue changed (the issue's root write guards the race)."""
    uow.add(
        table.put(
            {
                **keys.policy_term(tenant, term.policyLocator, term.number).as_dict(),
                "entity": TERM_ENTITY,
                **term.model_dump(),
            }
        )
    )


def delete_term(uow: UnitOfWork, tenant: str, term: Term) -> None:
    """Deletes a term no coverage is left in, and its alias (the issue's root write guards the race)."""
    uow.add(
        table.delete(keys.policy_term(tenant, term.policyLocator, term.number)),
        table.delete(keys.term_alias(tenant, term.locator)),
    )


def stack(tenant: str, policy_locator: str) -> IssuedStack | None:
    """The policy's whole item collection, read strongly consistently; None for an unknown policy. The
    records of issue attempts that never committed are left out (`visible`), and named as abandoned."""
    items = query.all_items(
        table.gateway(), _scope(tenant), keys.policy_partition(tenant, policy_locator), consistent=True
    )
    if not items or items[0].get("entity") != POLICY_ENTITY:
        return None
    committed = {str(item[ISSUE_TOKEN]) for item in items if ISSUE_TOKEN in item}
    by_entity: dict[str, list[dict[str, Any]]] = {}
    abandoned: dict[str, list[str]] = {}
    for item in items[1:]:
        entity = item.get("entity", "")
        if visible(item, committed):
            by_entity.setdefault(entity, []).append(_record(item))
        else:
            abandoned.setdefault(entity, []).append(str(item["locator"]))
    segments = [Segment.model_validate(item) for item in by_entity.get(SEGMENT_ENTITY, [])]
    transactions = [Transaction.model_validate(item) for item in by_entity.get(TRANSACTION_ENTITY, [])]
    return IssuedStack(
        policy=Policy.model_validate(_record(items[0])),
        terms=[Term.model_validate(item) for item in by_entity.get(TERM_ENTITY, [])],
        transactions=transactions,
        segments={segment.locator: segment for segment in segments},
        abandoned_transactions=abandoned.get(TRANSACTION_ENTITY, []),
        abandoned_segments=abandoned.get(SEGMENT_ENTITY, []),
    )


HEAD_ROUNDS = 4
"""How many rounds of base transactions `head` reads before it gives up (a longer unissued chain)."""


def head(tenant: str, policy_locator: str, transactions: Iterable[str] = ()) -> IssuedStack | None:
    """The policy's head, read strongly consistently by key, whatever its history (IssuedStack.complete
    False): the root (one GetItem), its terms (one Query of the `TERM#` prefix), then in one BatchGetItem
    the latest segment, the latest issued transaction, the branch heads and `transactions`; then, only
    where those did not include them, the transaction that made the latest segment and the bases of the
    live unissued ones (one BatchGetItem per round). None for an unknown policy, or when the bases run
    deeper than HEAD_ROUNDS (read `stack` instead). The root is read first and every issue rewrites it
    with its children, so nothing read after it is older than it."""
    gateway = table.gateway()
    root = gateway.get(_scope(tenant), keys.policy(tenant, policy_locator))
    if root is None or root.get("entity") != POLICY_ENTITY:
        return None
    policy = Policy.model_validate(_record(root))
    term_items = query.all_items(
        gateway,
        _scope(tenant),
        keys.policy_partition(tenant, policy_locator),
        sk_prefix=keys.TERM_PREFIX,
        consistent=True,
    )
    wanted = [keys.policy_segment(tenant, policy_locator, policy.latestSegmentLocator)]
    wanted += [
        keys.policy_transaction(tenant, policy_locator, locator)
        for locator in dict.fromkeys(
            [policy.issuedTransactionLocator, *policy.branchHeadTransactionLocators, *transactions]
        )
    ]
    items = gateway.batch_get(_scope(tenant), wanted)
    asked = {key.sk for key in wanted}
    for rounds in range(HEAD_ROUNDS + 1):
        missing = [str(item["transactionLocator"]) for item in items if item.get("entity") == SEGMENT_ENTITY]
        missing += [
            str(item["baseTransactionLocator"])
            for item in items
            if item.get("entity") == TRANSACTION_ENTITY
            and item.get("baseTransactionLocator")
            and item.get("transactionState") in {str(state) for state in LIVE_UNISSUED}
        ]
        missing = [
            locator
            for locator in dict.fromkeys(missing)
            if keys.policy_transaction(tenant, policy_locator, locator).sk not in asked
        ]
        if not missing:
            break
        if rounds == HEAD_ROUNDS:
            return None
        more = [keys.policy_transaction(tenant, policy_locator, locator) for locator in missing]
        asked |= {key.sk for key in more}
        items += gateway.batch_get(_scope(tenant), more)
    committed = _committed_tokens(tenant, items) | {str(item[ISSUE_TOKEN]) for item in items if ISSUE_TOKEN in item}
    shown = [_record(item) for item in items if visible(item, committed)]
    found = sorted(
        (Transaction.model_validate(item) for item in shown if item.get("entity") == TRANSACTION_ENTITY),
        key=lambda transaction: transaction.locator,
    )  # as `stack` has them: by sort key
    segments = [Segment.model_validate(item) for item in shown if item.get("entity") == SEGMENT_ENTITY]
    return IssuedStack(
        policy=policy,
        terms=[Term.model_validate(_record(item)) for item in term_items],
        transactions=found,
        segments={segment.locator: segment for segment in segments},
        complete=False,
    )


def add_transaction(uow: UnitOfWork, tenant: str, transaction: Transaction, *, issue_token: str | None = None) -> None:
    """A new transaction and its alias (the item naming its policy, read to find it by locator); with
    `issue_token`, the transaction whose write commits the records pending under that token."""
    uow.add(*_new_transaction(tenant, transaction, {ISSUE_TOKEN: issue_token}))


def _new_transaction(
    tenant: str, transaction: Transaction, extra: Mapping[str, str | None], *, replace: bool = False
) -> list[WriteOp]:
    item = {
        **keys.policy_transaction(tenant, transaction.policyLocator, transaction.locator).as_dict(),
        "entity": TRANSACTION_ENTITY,
        **_transaction_indexes(tenant, transaction),
        **_documents(transaction.model_dump(), TRANSACTION_DOCUMENTS),
        **extra,
    }
    alias = {
        **_transaction_alias(tenant, transaction.locator).as_dict(),
        "entity": "transactionAlias",
        "policyLocator": transaction.policyLocator,
    }
    record = {name: value for name, value in item.items() if value is not None}
    if replace:
        return [table.put(record), table.put(alias)]
    return [
        table.put_new(record, lambda: codes.CONFLICT_ALREADY_EXISTS("The transaction already exists")),
        table.put_new(alias),
    ]


def save_transaction(uow: UnitOfWork, tenant: str, transaction: Transaction, *, issue_token: str | None = None) -> None:
    """Rewrites the transaction, on condition that it is still at `transaction.version` (else 409); it
    is on the policy's issued list while it is issued. With `issue_token`, it commits the records
    pending under that token (a token, once set, stays: no rewrite names it)."""
    documents = transaction.model_dump(include=set(TRANSACTION_DOCUMENTS))
    extra: dict[str, Any] = {
        **_transaction_indexes(tenant, transaction),
        **_documents(documents, TRANSACTION_DOCUMENTS),
    }
    if issue_token is not None:
        extra[ISSUE_TOKEN] = issue_token
    uow.add(
        versioned.rewrite(
            keys.policy_transaction(tenant, transaction.policyLocator, transaction.locator),
            transaction,
            exclude=TRANSACTION_DOCUMENTS,
            extra=extra,
        )
    )


TRANSACTION_DOCUMENTS = codec.STORED_AS_DOCUMENTS[TRANSACTION_ENTITY]
"""A transaction's fields stored each as one document (codec.Document), not as nested maps: its element tree
and its charges, most of what a transaction's record holds (a segment's element tree likewise)."""


SEGMENT_DOCUMENTS = codec.STORED_AS_DOCUMENTS[SEGMENT_ENTITY]


def _documents(fields: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """`fields` with those of `names` that hold something as documents (None and empty as they are)."""
    return {**fields, **{name: codec.Document(fields[name]) for name in names if fields.get(name)}}


def _transaction_indexes(tenant: str, transaction: Transaction) -> dict[str, str | None]:
    issued = transaction.transactionState == TransactionState.ISSUED and transaction.issuedTime is not None
    return {
        f"{LOOKUP_INDEX}PK": keys.transaction_lookup(tenant, transaction.locator),
        f"{LOOKUP_INDEX}SK": transaction.policyLocator,
        f"{ISSUED_INDEX}PK": keys.policy_issued_index(tenant, transaction.policyLocator) if issued else None,
        f"{ISSUED_INDEX}SK": f"{isoformat(transaction.issuedTime)}#{transaction.locator}"
        if issued and transaction.issuedTime is not None
        else None,
    }


def _transaction_alias(tenant: str, locator: str) -> keys.Key:
    return keys.Key(keys.transaction_lookup(tenant, locator))


def get_transaction(tenant: str, policy_locator: str, locator: str) -> Transaction | None:
    """The policy's transaction by key (one consistent GetItem; a pending one only once committed: one
    more), None when there is none."""
    item = table.gateway().get(_scope(tenant), keys.policy_transaction(tenant, policy_locator, locator))
    if item is None or item.get("entity") != TRANSACTION_ENTITY or not visible(item, _committed_tokens(tenant, [item])):
        return None
    return Transaction.model_validate(_record(item))


def policy_of_transaction(tenant: str, locator: str) -> str | None:
    """The locator of the transaction's policy, from its alias (one consistent GetItem)."""
    alias = table.gateway().get(_scope(tenant), _transaction_alias(tenant, locator))
    return str(alias["policyLocator"]) if alias else None


def issued_transactions(tenant: str, policy_locator: str, page: PageRequest) -> Page[Transaction]:
    """The policy's issued transactions that are neither reversed nor reapplied, in issuing order
    (eventually consistent: a list; `stack` is the read to compute from). A page holding pending
    records costs one BatchGetItem more (their committing transactions)."""
    gateway = table.gateway()
    pk = keys.policy_issued_index(tenant, policy_locator)
    wanted = page.offset + page.count + 1
    shown: list[dict[str, Any]] = []
    committed: set[str] = set()
    start_key = None
    while len(shown) < wanted:
        batch, start_key = gateway.query(
            _scope(tenant), pk, index=ISSUED_INDEX, limit=wanted - len(shown), start_key=start_key
        )
        committed |= _committed_tokens(tenant, batch)
        shown.extend(item for item in batch if visible(item, committed))
        if start_key is None:
            break
    window = Page.window(shown, page)
    return Page([Transaction.model_validate(_record(item)) for item in window.items], window.list_completed)


def add_segment(uow: UnitOfWork, tenant: str, segment: Segment) -> None:
    uow.add(_new_segment(tenant, segment, {}))


def _new_segment(tenant: str, segment: Segment, extra: Mapping[str, str], *, replace: bool = False) -> WriteOp:
    item = {
        **keys.policy_segment(tenant, segment.policyLocator, segment.locator).as_dict(),
        "entity": SEGMENT_ENTITY,
        f"{LOOKUP_INDEX}PK": keys.segment_lookup(tenant, segment.locator),
        f"{LOOKUP_INDEX}SK": segment.policyLocator,
        **_documents(segment.model_dump(), SEGMENT_DOCUMENTS),
        **extra,
    }
    if replace:
        return table.put(item)
    return table.put_new(item, lambda: codes.CONFLICT_ALREADY_EXISTS("The segment already exists"))


def get_segment(tenant: str, locator: str) -> Segment | None:
    """The segment (a pending one only once committed: one consistent GetItem more)."""
    item = _looked_up(tenant, keys.segment_lookup(tenant, locator))
    if item is None or not visible(item, _committed_tokens(tenant, [item])):
        return None
    return Segment.model_validate(_record(item))


def transactions_and_segments(
    tenant: str, transactions: Iterable[tuple[str, str]], segments: Iterable[tuple[str, str]]
) -> tuple[dict[str, Transaction], dict[str, Segment]]:
    """The existing ones among the given transactions and segments, each named by (policy locator,
    locator), by locator, in one BatchGetItem per 100 keys."""
    wanted = [keys.policy_transaction(tenant, policy, x) for policy, x in transactions]
    wanted += [keys.policy_segment(tenant, policy, s) for policy, s in segments]
    found_transactions: dict[str, Transaction] = {}
    found_segments: dict[str, Segment] = {}
    for item in table.gateway().batch_get(_scope(tenant), wanted):
        if item.get("entity") == TRANSACTION_ENTITY:
            transaction = Transaction.model_validate(_record(item))
            found_transactions[transaction.locator] = transaction
        else:
            segment = Segment.model_validate(_record(item))
            found_segments[segment.locator] = segment
    return found_transactions, found_segments


def _looked_up(tenant: str, lookup: str) -> dict[str, Any] | None:
    """The one item a lookup partition of GSI1 holds (eventually consistent, as every index)."""
    items, _ = table.gateway().query(_scope(tenant), lookup, index=LOOKUP_INDEX, limit=1)
    return items[0] if items else None


# --- issues in two stages: pending records, then the final write -------------------------------------


@dataclass(frozen=True)
class IssueAttempt:
    """One attempt at an issue too large for one write: its token (new every attempt) and the
    transaction whose final write commits its pending records by carrying that token."""

    token: str
    committer: str


def visible(item: Mapping[str, Any], committed: Collection[str]) -> bool:
    """Whether a read shows the stored record: one written in its issue's final write always, a pending
    one once its token is among the `committed` tokens."""
    token = item.get(PENDING_ISSUE)
    return token is None or token in committed


def _committed_tokens(tenant: str, items: Iterable[Mapping[str, Any]]) -> set[str]:
    """The tokens the committing transactions of the pending ones among `items` carry (one consistent
    GetItem or BatchGetItem; none without pending items)."""
    wanted = list(
        dict.fromkeys(
            keys.policy_transaction(tenant, str(item["policyLocator"]), str(item[PENDING_ISSUE_BY]))
            for item in items
            if PENDING_ISSUE in item
        )
    )
    if not wanted:
        return set()
    gateway = table.gateway()
    if len(wanted) == 1:
        found = gateway.get(_scope(tenant), wanted[0])
        committers = [found] if found else []
    else:
        committers = gateway.batch_get(_scope(tenant), wanted)
    return {str(item[ISSUE_TOKEN]) for item in committers if ISSUE_TOKEN in item}


def add_pending(
    tenant: str,
    attempt: IssueAttempt,
    transactions: Sequence[Transaction],
    segments: Sequence[Segment],
    *,
    replace: bool = False,
) -> None:
    """Writes the records of an issue that nothing visible names before its final write (the
    transactions it adds with their aliases, the segments they make), pending under `attempt`, in
    TransactWriteItems of at most 100 items in key order (`chunked`; a transaction and its alias in the
    same one). `replace`: an attempt whose token and locators are derived (a migration's, rerun after a
    crash) rewrites what an earlier run of it left pending, rather than failing on it."""
    write_pending(tenant, pending_groups(tenant, attempt, transactions, segments, replace=replace))


def pending_groups(
    tenant: str,
    attempt: IssueAttempt,
    transactions: Sequence[Transaction],
    segments: Sequence[Segment],
    *,
    replace: bool = False,
) -> list[list[WriteOp]]:
    """The writes of `add_pending`, not made: a transaction with its alias, each segment alone (a caller whose
    final write holds them as well may put them in it: they are visible once it commits, as they would be
    written before it)."""
    marker = {PENDING_ISSUE: attempt.token, PENDING_ISSUE_BY: attempt.committer}
    groups = [_new_transaction(tenant, transaction, marker, replace=replace) for transaction in transactions]
    groups += [[_new_segment(tenant, segment, marker, replace=replace)] for segment in segments]
    return groups


def write_pending(tenant: str, groups: Sequence[Sequence[WriteOp]]) -> None:
    """`pending_groups`' writes, in TransactWriteItems of at most 100 items in key order (`chunked`)."""
    for chunk in chunked(groups, MAX_TRANSACTION_ITEMS, MAX_WRITE_BYTES, request_size):
        table.gateway().transact(_scope(tenant), chunk)


def delete_abandoned(tenant: str, policy_locator: str, transactions: Sequence[str], segments: Sequence[str]) -> None:
    """Deletes records of issue attempts that never committed (`stack` names them; the caller's issue
    committed after reading them, so none of those attempts can commit any more): the transactions, their
    aliases and the segments, 25 per BatchWriteItem. Best effort: records a throttled call leaves stay
    invisible, and the next issue of the policy tries again."""
    doomed = [
        key
        for locator in transactions
        for key in (keys.policy_transaction(tenant, policy_locator, locator), _transaction_alias(tenant, locator))
    ]
    doomed += [keys.policy_segment(tenant, policy_locator, locator) for locator in segments]
    try:
        table.gateway().batch_delete(_scope(tenant), doomed)
    except Unavailable:
        pass
