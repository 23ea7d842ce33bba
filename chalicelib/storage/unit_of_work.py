"""All writes of one request in one TransactWriteItems, with its event items and idempotency guard.

`UnitOfWork` is what repositories and services see (services get one from `runtime.wiring`);
`TransactionUnitOfWork` is the DynamoDB implementation. A unit of work says how many actions it has
left (`remaining`), so that work too large for one transaction is split by what it holds, never by a
count kept by hand.

An event's `timestamp` is its business time: the real time of its commit for an ordinary tenant, the
context's `now` (the tenant's test clock, or the due time of the work it records) for a test-clock
tenant, whose every event reads its clock (DECISIONS.md "Test clocks"). The stream sorts an ordinary
tenant's events by their commit time (`{committed}#{locator}`) and a test-clock tenant's by business
time, then commit time (`{timestamp}#{committed}#{locator}`): the business moments of a test clock's
tenant are few (its clock stands still between advances), so its commit order breaks the ties; either
way `committedAt` keeps the real commit time that the stream's settle window is measured on."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from datetime import datetime
from typing import Any, Protocol

from chalicelib.core import codes
from chalicelib.core.clock import Clock, isoformat
from chalicelib.core.context import CallContext, IdempotencyClaim
from chalicelib.core.errors import DomainError
from chalicelib.core.ids import new_locator
from chalicelib.storage import keys, table
from chalicelib.storage.table import MAX_TRANSACTION_ITEMS, ErrorFactory, TableGateway, WriteOp

IDEMPOTENCY_TTL_SECONDS = 48 * 3600


class UnitOfWork(Protocol):
    ctx: CallContext
    capacity: int
    """The actions one commit holds: writes, event items and the idempotency guard together."""

    @property
    def remaining(self) -> int:
        """How many more writes or events the caller may add and still commit: `capacity` less what it
        holds and one action kept for the idempotency guard. The guard's action is kept whether or not
        the request carries a key (until the request's first commit has written it), so what fits in a
        request does not depend on the client sending X-Idempotency-Key. Negative when it holds too much."""

    def add(self, *ops: WriteOp) -> None: ...

    def after_commit(self, action: Callable[[], object]) -> None:
        """Run `action` once the transaction succeeded (e.g. send the queue message of a new job)."""

    def after_failure(self, action: Callable[[], object]) -> None:
        """Run `action` when the transaction was surely not applied (a condition failed: a 4xx DomainError;
        not a 5xx, after which it may have been), before the error goes on (e.g. remove what was written
        ahead of it, unseen until it commits: a staged invoice's item pages)."""

    def record_event(self, event_type: str, data: dict[str, Any]) -> None: ...

    def claim(self, op: WriteOp) -> None:
        """Adds `op`, a conditional write of one record (a due entry's settlement), or where a write of that
        record is held already (an issue putting the due entry it runs again), that write made conditional
        on `op`'s condition instead: one TransactWriteItems names a record once."""

    def commit(self) -> list[dict[str, Any]]:
        """Write everything at once; answers the event records written."""


class _Gathering:
    """What a unit of work holds until its commit: writes, events and the actions to run after it."""

    def __init__(self) -> None:
        self._ops: list[WriteOp] = []
        self._events: list[tuple[str, dict[str, Any]]] = []
        self._after_commit: list[Callable[[], object]] = []
        self._after_failure: list[Callable[[], object]] = []

    def add(self, *ops: WriteOp) -> None:
        self._ops.extend(ops)

    def after_commit(self, action: Callable[[], object]) -> None:
        self._after_commit.append(action)

    def after_failure(self, action: Callable[[], object]) -> None:
        self._after_failure.append(action)

    def record_event(self, event_type: str, data: dict[str, Any]) -> None:
        self._events.append((event_type, data))

    def claim(self, op: WriteOp) -> None:
        self._ops[:] = claimed(self._ops, op)


def claimed(ops: list[WriteOp], op: WriteOp) -> list[WriteOp]:
    """`ops` with `op` (UnitOfWork.claim): added, or its condition given to the unconditional write of its
    record that `ops` holds (a held write with a condition of its own cannot take another: ValueError)."""
    for index, held in enumerate(ops):
        if held.key != op.key:
            continue
        if "ConditionExpression" in held.params:
            raise ValueError(f"two conditional writes of one record in one transaction: {held.key}")
        condition = {
            name: value
            for name, value in op.params.items()
            if name in ("ConditionExpression", "ExpressionAttributeNames", "ExpressionAttributeValues")
        }
        names = {**held.params.get("ExpressionAttributeNames", {}), **condition.get("ExpressionAttributeNames", {})}
        values = {**held.params.get("ExpressionAttributeValues", {}), **condition.get("ExpressionAttributeValues", {})}
        params = {**held.params, "ConditionExpression": condition["ConditionExpression"]}
        if names:
            params["ExpressionAttributeNames"] = names
        if values:
            params["ExpressionAttributeValues"] = values
        return [*ops[:index], WriteOp(held.action, params, held.key, op.on_condition_failure), *ops[index + 1 :]]
    return [*ops, op]


class NestedUnitOfWork(_Gathering):
    """Writes and events gathered apart from an `outer` unit of work (within what it has left) and moved
    into it by `commit`, which writes nothing itself: a part of a write that may fail half way (a
    DomainError while it is built) is built here, so that `outer` is left as it was when it is dropped."""

    def __init__(self, outer: UnitOfWork):
        super().__init__()
        self.ctx = outer.ctx
        self.capacity = outer.capacity
        self._outer = outer

    @property
    def remaining(self) -> int:
        return self._outer.remaining - len(self._ops) - len(self._events)

    def commit(self) -> list[dict[str, Any]]:
        """Moves what it holds into `outer` (which its owner commits); answers no event records."""
        self._outer.add(*self._ops)
        for event_type, data in self._events:
            self._outer.record_event(event_type, data)
        for action in self._after_commit:
            self._outer.after_commit(action)
        for action in self._after_failure:
            self._outer.after_failure(action)
        self._ops, self._events, self._after_commit, self._after_failure = [], [], [], []
        return []


class TransactionUnitOfWork(_Gathering):
    def __init__(
        self,
        ctx: CallContext,
        gateway: TableGateway,
        clock: Clock,
        scope: str,
        *,
        business_time: Callable[[], bool] = lambda: False,
    ):
        """`clock`: real time (the commit's). `business_time`: whether the events take `ctx.now` as their
        timestamp (a test-clock tenant); asked only when there are events to write."""
        super().__init__()
        self.ctx = ctx
        self.scope = scope
        self._gateway = gateway
        self._clock = clock
        self._business_time = business_time
        self.capacity = MAX_TRANSACTION_ITEMS

    @property
    def remaining(self) -> int:
        claim = self.ctx.idempotency
        guard = 0 if claim is not None and claim.claimed else 1
        return self.capacity - len(self._ops) - len(self._events) - guard

    def commit(self) -> list[dict[str, Any]]:
        now = self._clock.now()
        business = self.ctx.now if self._events and self._business_time() else None
        events = [self._event_item(event_type, data, now, business) for event_type, data in self._events]
        ops = self._ops + [table.put_new(item) for item in events]
        guard = self._idempotency_guard(now)
        if guard is not None:
            ops.append(guard)
        if len(ops) > self.capacity:
            raise codes.REQUEST_INVALID(f"One change may touch at most {self.capacity} records")
        try:
            self._gateway.transact(self.scope, ops)
        except BaseException as error:
            self.ctx.reads.clear()  # what the request read may have changed: read it all again (CallContext.reads)
            if isinstance(error, DomainError) and error.status < 500:  # surely not applied
                failed, self._after_failure = self._after_failure, []
                for action in failed:
                    with suppress(Exception):  # what it would remove is unread (nothing commits it): the error goes on
                        action()
            raise
        self.ctx.reads.forget((op.key.pk, op.key.sk) for op in ops)  # what it wrote is read again
        self._ops, self._events, self._after_failure = [], [], []
        actions, self._after_commit = self._after_commit, []
        for action in actions:
            action()
        return events

    def _event_item(
        self, event_type: str, data: dict[str, Any], now: datetime, business: datetime | None
    ) -> dict[str, Any]:
        locator = new_locator()
        committed = isoformat(now)
        stamp = committed if business is None else isoformat(business)
        position = f"{committed}#{locator}" if business is None else f"{stamp}#{committed}#{locator}"
        return {
            **keys.event(self.scope, locator).as_dict(),
            "GSI1PK": keys.events_stream(self.scope),
            "GSI1SK": position,
            "GSI2PK": keys.events_by_type(self.scope, event_type),
            "GSI2SK": position,
            "GSI3PK": keys.events_by_request(self.scope, self.ctx.request_id),
            "GSI3SK": locator,
            "entity": "event",
            "locator": locator,
            "type": event_type,
            "data": data,
            "requestId": self.ctx.request_id,
            "userLocator": self.ctx.user_locator,
            "timestamp": stamp,
            "committedAt": committed,
        }

    def _created(self, entity: str) -> str | None:
        """The locator of the record of `entity` this commit creates (what a create route created): the first it
        puts on condition that none exists, else the first it puts (a commit may rewrite others of the entity)."""
        puts = [
            op
            for op in self._ops
            if op.action == "Put"
            and op.params["Item"].get("entity") == {"S": entity}
            and "S" in op.params["Item"].get("locator", {})
        ]
        new = [op for op in puts if op.params.get("ConditionExpression") == "attribute_not_exists(PK)"]
        chosen = (new or puts)[:1]
        return str(chosen[0].params["Item"]["locator"]["S"]) if chosen else None

    def _idempotency_guard(self, now: datetime) -> WriteOp | None:
        claim = self.ctx.idempotency
        if claim is None or claim.claimed:
            return None
        claim.claimed = True
        created = self._created(claim.creates) if claim.creates else None
        return idempotency_guard(
            self.scope,
            self.ctx.user_locator,
            claim,
            now,
            created,
            lambda: codes.IDEMPOTENCY_IN_PROGRESS("A request with this idempotency key is in progress"),
        )


def idempotency_guard(
    scope: str,
    user_locator: str,
    claim: IdempotencyClaim,
    now: datetime,
    created: str | None = None,
    on_exists: ErrorFactory | None = None,
) -> WriteOp:
    """The guard item of `claim` for `user_locator`, put on condition that there is none (else `on_exists`,
    by default 409 `conflict.already_exists`)."""
    key = keys.idempotency_guard(scope, user_locator, claim.operation, claim.key)
    item = {
        **key.as_dict(),
        "entity": "idempotencyGuard",
        "requestHash": claim.request_hash,
        "credential": claim.credential,
        "createdAt": isoformat(now),
        "ttl": int(now.timestamp()) + IDEMPOTENCY_TTL_SECONDS,
    }
    if created is not None:
        item["createdLocator"] = created
    return table.put_new(item, on_exists)
