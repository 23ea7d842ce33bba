"""Persistence of policies, terms, transactions, segments and static data history (storage/keys.py).

- `T#{t}#POL#{p}` / `#ROOT`: the policy (GSI1 `T#{t}#ACC#{a}#POLS` and GSI2 `T#{t}#POLICIES`, sort key
  its locator, a ULID: creation order); `TERM#{n:04}`: its terms; `STATIC#{h}`: its static data history.
- `T#{t}#TERM#{term}`: alias of a term (its policy and number), for reading a term by locator.
- `T#{t}#TXN#{x}`: a transaction (GSI1 `T#{t}#POL#{p}#TXNS` by locator; while issued, GSI2
  `T#{t}#POL#{p}#ISSUED` by issued time: the policy's stack of issued transactions).
- `T#{t}#SEG#{s}`: a segment, its element tree included.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chalicelib.core.clock import isoformat
from chalicelib.core.errors import AlreadyExists
from chalicelib.core.paging import Page, PageRequest
from chalicelib.policies.models import (
    Policy,
    Segment,
    StaticDataVersion,
    Term,
    Transaction,
    TransactionState,
)
from chalicelib.storage import codec, keys, query, table
from chalicelib.storage.unit_of_work import UnitOfWork

ACCOUNT_INDEX = "GSI1"
TENANT_INDEX = "GSI2"
POLICY_TRANSACTIONS_INDEX = "GSI1"
ISSUED_INDEX = "GSI2"


def _scope(tenant: str) -> str:
    return keys.tenant_scope(tenant)


def _record(item: dict[str, Any]) -> dict[str, Any]:
    return codec.without_keys(item)


# --- policies ------------------------------------------------------------------------------------


def get(tenant: str, locator: str) -> Policy | None:
    item = table.gateway().get(_scope(tenant), keys.policy(tenant, locator))
    return Policy.model_validate(_record(item)) if item else None


def add(uow: UnitOfWork, tenant: str, policy: Policy) -> None:
    uow.add(table.put_new({
        **keys.policy(tenant, policy.locator).as_dict(), "entity": "policy",
        f"{ACCOUNT_INDEX}PK": keys.account_policies_index(tenant, policy.accountLocator),
        f"{ACCOUNT_INDEX}SK": policy.locator,
        f"{TENANT_INDEX}PK": keys.policies_index(tenant), f"{TENANT_INDEX}SK": policy.locator,
        **policy.model_dump(exclude={"validationResult"}),
    }, lambda: AlreadyExists("The policy already exists")))


def save(uow: UnitOfWork, tenant: str, policy: Policy) -> None:
    """Rewrites the policy, on condition that it is still at `policy.version` (else 409)."""
    fields = policy.model_dump(exclude={"locator", "version", "validationResult"})
    uow.add(table.update(keys.policy(tenant, policy.locator),
                         {name: value for name, value in fields.items() if value is not None},
                         expected_version=policy.version,
                         remove=[name for name, value in fields.items() if value is None]))


def policies_of_account(tenant: str, account_locator: str, page: PageRequest) -> Page[Policy]:
    found = query.page(table.gateway(), _scope(tenant), keys.account_policies_index(tenant, account_locator), page,
                       index=ACCOUNT_INDEX)
    return Page([Policy.model_validate(_record(item)) for item in found.items], found.list_completed)


def all_policies(tenant: str, page: PageRequest) -> Page[Policy]:
    found = query.page(table.gateway(), _scope(tenant), keys.policies_index(tenant), page, index=TENANT_INDEX)
    return Page([Policy.model_validate(_record(item)) for item in found.items], found.list_completed)


# --- static data history -------------------------------------------------------------------------


def add_static_version(uow: UnitOfWork, tenant: str, policy_locator: str, version: StaticDataVersion) -> None:
    uow.add(table.put_new({**keys.policy_static_version(tenant, policy_locator, version.historyLocator).as_dict(),
                           "entity": "policyStaticData", **version.model_dump()}))


def static_history(tenant: str, policy_locator: str, page: PageRequest) -> Page[StaticDataVersion]:
    found = query.page(table.gateway(), _scope(tenant), keys.policy_partition(tenant, policy_locator), page,
                       sk_prefix=keys.STATIC_HISTORY_PREFIX)
    return Page([StaticDataVersion.model_validate(_record(item)) for item in found.items], found.list_completed)


# --- terms ---------------------------------------------------------------------------------------


def add_term(uow: UnitOfWork, tenant: str, term: Term) -> None:
    uow.add(
        table.put_new({**keys.policy_term(tenant, term.policyLocator, term.number).as_dict(), "entity": "term",
                       **term.model_dump()}, lambda: AlreadyExists("The term already exists")),
        table.put_new({**keys.term_alias(tenant, term.locator).as_dict(), "entity": "termAlias",
                       "policyLocator": term.policyLocator, "number": term.number}),
    )


def get_term(tenant: str, term_locator: str) -> Term | None:
    alias = table.gateway().get(_scope(tenant), keys.term_alias(tenant, term_locator))
    if alias is None:
        return None
    item = table.gateway().get(_scope(tenant), keys.policy_term(tenant, alias["policyLocator"], int(alias["number"])))
    return Term.model_validate(_record(item)) if item else None


def terms(tenant: str, policy_locator: str, page: PageRequest) -> Page[Term]:
    found = query.page(table.gateway(), _scope(tenant), keys.policy_partition(tenant, policy_locator), page,
                       sk_prefix=keys.TERM_PREFIX)
    return Page([Term.model_validate(_record(item)) for item in found.items], found.list_completed)


# --- transactions and segments -------------------------------------------------------------------


def add_transaction(uow: UnitOfWork, tenant: str, transaction: Transaction) -> None:
    item = {**keys.transaction(tenant, transaction.locator).as_dict(), "entity": "transaction",
            f"{POLICY_TRANSACTIONS_INDEX}PK": keys.policy_transactions_index(tenant, transaction.policyLocator),
            f"{POLICY_TRANSACTIONS_INDEX}SK": transaction.locator, **transaction.model_dump()}
    if transaction.transactionState == TransactionState.ISSUED and transaction.issuedTime is not None:
        item[f"{ISSUED_INDEX}PK"] = keys.policy_issued_index(tenant, transaction.policyLocator)
        item[f"{ISSUED_INDEX}SK"] = f"{isoformat(transaction.issuedTime)}#{transaction.locator}"
    uow.add(table.put_new(item, lambda: AlreadyExists("The transaction already exists")))


def get_transaction(tenant: str, locator: str) -> Transaction | None:
    item = table.gateway().get(_scope(tenant), keys.transaction(tenant, locator))
    return Transaction.model_validate(_record(item)) if item else None


def issued_transactions(tenant: str, policy_locator: str, page: PageRequest) -> Page[Transaction]:
    """The policy's issued transactions that are neither reversed nor reapplied, in issuing order."""
    found = query.page(table.gateway(), _scope(tenant), keys.policy_issued_index(tenant, policy_locator), page,
                       index=ISSUED_INDEX)
    return Page([Transaction.model_validate(_record(item)) for item in found.items], found.list_completed)


def issued_stack(tenant: str, policy_locator: str) -> list[Transaction]:
    """Every transaction of the policy's issued stack, in issuing order."""
    items = query.all_items(table.gateway(), _scope(tenant), keys.policy_issued_index(tenant, policy_locator),
                            index=ISSUED_INDEX)
    return [Transaction.model_validate(_record(item)) for item in items]


def add_segment(uow: UnitOfWork, tenant: str, segment: Segment) -> None:
    uow.add(table.put_new({**keys.segment(tenant, segment.locator).as_dict(), "entity": "segment",
                           **segment.model_dump()}, lambda: AlreadyExists("The segment already exists")))


def get_segment(tenant: str, locator: str) -> Segment | None:
    item = table.gateway().get(_scope(tenant), keys.segment(tenant, locator))
    return Segment.model_validate(_record(item)) if item else None


def transactions_and_segments(tenant: str, transaction_locators: Iterable[str],
                              segment_locators: Iterable[str]) -> tuple[dict[str, Transaction], dict[str, Segment]]:
    """The existing ones among the given transactions and segments, by locator, in one BatchGetItem
    per 100 keys."""
    wanted = [keys.transaction(tenant, x) for x in transaction_locators]
    wanted += [keys.segment(tenant, s) for s in segment_locators]
    transactions: dict[str, Transaction] = {}
    segments: dict[str, Segment] = {}
    for item in table.gateway().batch_get(_scope(tenant), wanted):
        if item.get("entity") == "transaction":
            transaction = Transaction.model_validate(_record(item))
            transactions[transaction.locator] = transaction
        else:
            segment = Segment.model_validate(_record(item))
            segments[segment.locator] = segment
    return transactions, segments
