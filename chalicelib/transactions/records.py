"""One transaction read with its policy, and written back: the transactions service's persistence.

A transaction is found by locator through its alias (one consistent GetItem naming its policy), then
read with its policy's head (policies.service.transaction_head: the root, its terms, the latest segment
and transactions by key) where timeline.head_suffices says that holds all the request needs, else with
the policy's item collection (policies.service.transaction_stack: one strongly consistent Query), so
everything a request computes from (the policy, its terms, its issued segments, the other transactions)
is what that read saw, and its write is guarded by the root version it read. A change is written
conditionally on the transaction's version (policies.service.save_transaction, through the shared
versioned save) with its events, in one transaction. Events are `policy.{category}.{action}` with the
policy and the transaction (socotra-semantics.md Appendix A); `underwrite` adds the underwritingStatus.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.configuration import service as configuration
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.records import check_size
from chalicelib.policies import service as policies
from chalicelib.policies.models import LIVE_UNISSUED, IssuedStack, Policy, Transaction
from chalicelib.runtime import versioned, wiring
from chalicelib.runtime.versioned import Event
from chalicelib.runtime.wiring import UnitOfWork
from chalicelib.transactions import timeline
from chalicelib.transactions.models import ENTITY


@dataclass(frozen=True)
class Found:
    """A transaction and the policy it belongs to, as one consistent read saw them."""

    stack: IssuedStack
    transaction: Transaction

    @property
    def policy(self) -> Policy:
        return self.stack.policy

    def other(self, locator: str | None) -> Transaction | None:
        return next((t for t in self.stack.transactions if t.locator == locator), None) if locator else None


def replaced(found: Found, transaction: Transaction) -> Found:
    """`found` with `transaction` in place of the one of the same locator (as a request changed it)."""
    return Found(
        found.stack.model_copy(
            update={
                "transactions": [
                    transaction if t.locator == transaction.locator else t for t in found.stack.transactions
                ]
            }
        ),
        transaction,
    )


def find(ctx: CallContext, locator: str, *, head: bool = False, plans: bool = True) -> Found:
    """The transaction (404 `transaction.not_found` when this tenant has none with that locator). With
    `head`, for a request that works the transaction out and writes it: read with its policy's head
    alone (policies.service.transaction_head) where that holds all the request needs
    (timeline.head_suffices; `plans` False: the request only writes the transaction, as discarding it
    does, for which any head holding it suffices), else with the whole stack."""
    policy_locator = None
    if head:
        stack = policies.transaction_head(ctx, locator)
        transaction = next((t for t in stack.transactions if t.locator == locator), None) if stack else None
        if stack is not None and transaction is not None:
            if (
                not plans
                and transaction.transactionState in LIVE_UNISSUED
                or timeline.head_suffices(stack, transaction, has_schedules(ctx, transaction))
            ):
                return Found(stack, transaction)
            policy_locator = stack.policy.locator
    stack = policies.transaction_stack(ctx, locator, policy_locator)
    transaction = next((t for t in stack.transactions if t.locator == locator), None)
    if transaction is None:
        raise codes.not_found(ENTITY, locator)
    return Found(stack, transaction)


def has_schedules(ctx: CallContext, transaction: Transaction) -> bool:
    """Whether the configuration the transaction is bound to names any schedule (plugins then see the
    schedules of its whole base chain)."""
    return bool(model_of(ctx, transaction).get("schedules"))


def found(ctx: CallContext, locator: str, given: Found | None) -> Found:
    """`given` (the caller's consistent read of the transaction), else the transaction read by `find`
    (by its policy's head where that suffices)."""
    if given is None:
        return find(ctx, locator, head=True)
    if given.transaction.locator != locator:
        raise ValueError(f"the transaction given is {given.transaction.locator}, not {locator}")
    return given


def found_in(stack: IssuedStack, transaction: Transaction) -> Found:
    """`transaction` in `stack` as writing it (`add`, `save`) left the stack: in place of the stack's of its
    locator, else (just added) after the others, the policy root with the branch heads that moves
    (policies.service.with_transaction). Not after an issue, which rewrites the root its own way."""
    return Found(policies.with_transaction(stack, transaction), transaction)


def model_of(ctx: CallContext, transaction: Transaction) -> dict[str, Any]:
    """The resolved model of the configuration version the transaction is bound to."""
    return configuration.model(ctx, transaction.configVersion, resolved=True)


def events(
    transaction: Transaction, actions: Iterable[str], data: Mapping[str, Mapping[str, Any]] | None = None
) -> list[Event]:
    prefix = f"policy.{transaction.transactionCategory}."
    return [
        (
            prefix + action,
            {
                "policyLocator": transaction.policyLocator,
                "transactionLocator": transaction.locator,
                **(data or {}).get(action, {}),
            },
        )
        for action in actions
    ]


def save(
    ctx: CallContext,
    stack: IssuedStack,
    transaction: Transaction,
    actions: Iterable[str],
    event_data: Mapping[str, Mapping[str, Any]] | None = None,
    uow: UnitOfWork | None = None,
) -> Transaction:
    """Writes the changed transaction (conditional on the version it was read at) with its events, and
    the policy's branch heads when the change moves one (policies.service.save_transaction)."""

    def write(work: UnitOfWork, _: str, record: Transaction) -> None:
        policies.save_transaction(ctx, work, stack, record)

    return versioned.save(
        ctx,
        uow or wiring.unit_of_work(ctx),
        transaction,
        write,
        events(transaction, actions, event_data),
        code=ENTITY,
        noun="transaction",
    )


def add(ctx: CallContext, stack: IssuedStack, transaction: Transaction, uow: UnitOfWork | None = None) -> Transaction:
    """Writes a new transaction with its `create` event (and the policy's branch heads: it is one)."""
    check_size(transaction, code=ENTITY, noun="transaction")
    uow = uow or wiring.unit_of_work(ctx)
    policies.add_transaction(ctx, uow, stack, transaction)
    for event_type, data in events(transaction, ["create"]):
        uow.record_event(event_type, data)
    uow.commit()
    return transaction


def unstored(stack: IssuedStack, transaction: Transaction) -> Found:
    """A draft never stored (transactions.service.new_draft) found on `stack` as though it were: after the
    stack's transactions, the policy root as read (its first write adds it, `add` or `add_advanced`)."""
    return Found(stack.model_copy(update={"transactions": [*stack.transactions, transaction]}), transaction)


def before_unstored(found: Found) -> IssuedStack:
    """The stack an `unstored` transaction was found on, without it."""
    return found.stack.model_copy(
        update={"transactions": [t for t in found.stack.transactions if t.locator != found.transaction.locator]}
    )


def add_advanced(
    ctx: CallContext,
    found: Found,
    transaction: Transaction,
    actions: Iterable[str],
    event_data: Mapping[str, Mapping[str, Any]] | None,
    uow: UnitOfWork,
) -> Transaction:
    """An `unstored` draft written new as advanced (`transaction`): `add` and `save` in one write, its create
    event then those of `actions`, at the version its creation and save would have left it."""
    written = transaction.model_copy(
        update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator, "version": transaction.version + 1}
    )
    check_size(written, code=ENTITY, noun="transaction")
    policies.add_transaction(ctx, uow, before_unstored(found), written)
    for event_type, data in [*events(transaction, ["create"]), *events(transaction, actions, event_data)]:
        uow.record_event(event_type, data)
    uow.commit()
    return written
