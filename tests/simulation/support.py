"""The simulation's client and job delivery (issue 31): what a careful API client and SQS do when calls fail.

`Client` sends every write with an `X-Idempotency-Key` and, when the answer is 503 (retryable) or lost, or a 409
of a race another writer won, sends the same request with the same key again; it records every answer and fails
the run on a 500 or an answer outside the error body. `Delivery` runs the queued job messages as SQS would under
the plan's seed: in a random order, some twice, and a message whose run raised goes back to be delivered again.
`racing` lets another writer win a race at a chosen moment of a request."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from chalicelib.core.ids import new_locator
from chalicelib.runtime.jobs import InlineJobQueue, JobMessage, dispatch
from local.faults import FaultPlan, no_backoff
from tests.support.api import call

ATTEMPTS = 8
"""Sends of one request before the client gives up on the faults (the plan then pauses for a last send)."""
RETRYABLE = 503
CONFLICT, CONCURRENT_MODIFICATION = 409, "conflict.concurrent_modification"
"""Another writer won a race: reload and retry, says its message; the client sends the request again."""


class SimulationFailure(AssertionError):
    pass


@dataclass
class Client:
    api: Any
    token: str
    plan: FaultPlan
    statuses: Counter[int] = field(default_factory=Counter)
    retried: int = 0

    def send(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        key = new_locator()
        headers = {"X-Idempotency-Key": key} if method != "GET" else {}
        for attempt in range(ATTEMPTS + 1):
            if attempt == ATTEMPTS:
                with self.plan.paused():  # the faults stop at last: the request must go through now
                    response = call(self.api, method, path, self.token, body, headers=headers)
            else:
                response = call(self.api, method, path, self.token, body, headers=headers)
            status = response.status_code
            self.statuses[status] += 1
            answer = json.loads(response.body, parse_float=Decimal) if response.body else None
            if status >= 400 and not (
                isinstance(answer, dict)
                and answer.get("httpStatus") == status
                and answer.get("code")
                and answer.get("message")
            ):
                raise SimulationFailure(f"{method} {path}: {status} without the error body: {response.body!r}")
            if status >= 500 and status != RETRYABLE:
                raise SimulationFailure(f"{method} {path}: {status} {answer}")
            lost_race = status == CONFLICT and isinstance(answer, dict) and answer["code"] == CONCURRENT_MODIFICATION
            if status != RETRYABLE and not lost_race:
                return status, answer
            self.retried += 1
        raise SimulationFailure(f"{method} {path}: still {status} with the faults paused: {answer}")

    def ok(self, method: str, path: str, body: Any = None) -> Any:
        status, answer = self.send(method, path, body)
        if status != 200:
            raise SimulationFailure(f"{method} {path}: {status} {answer}")
        return answer


@dataclass
class Delivery:
    """SQS under the plan: `run(queue)` delivers every message until none is left."""

    rng: random.Random
    duplicate_rate: float = 0.1
    delivered: Counter[str] = field(default_factory=Counter)
    redelivered: int = 0

    def run(self, queue: InlineJobQueue, plan: FaultPlan, max_deliveries: int = 5000) -> None:
        deliveries = 0
        while queue.messages:
            deliveries += 1
            if deliveries > max_deliveries:
                raise SimulationFailure(f"jobs are still queued after {max_deliveries} deliveries")
            body = queue.messages.pop(self.rng.randrange(len(queue.messages)))  # any order
            if self.rng.random() < self.duplicate_rate:
                queue.messages.append(body)  # delivered again later
            message = JobMessage.model_validate_json(body)
            self.delivered[message.job_type] += 1
            try:
                if deliveries > max_deliveries // 2:
                    with plan.paused():
                        dispatch(message)
                else:
                    dispatch(message)
            except Exception:  # noqa: BLE001 - SQS delivers a message again whatever its run raised
                self.redelivered += 1
                queue.messages.append(body)


def shrink(steps: Sequence[int], fails: Callable[[list[int]], bool], budget: int) -> list[int]:
    """The shortest sublist of `steps` found that still `fails`, by removing chunks of halving size (delta
    debugging's removal half), within `budget` calls of `fails`."""
    current, chunk = list(steps), max(len(steps) // 2, 1)
    while budget > 0:
        start = 0
        while start < len(current) and budget > 0:
            candidate = current[:start] + current[start + chunk :]
            budget -= 1
            if candidate and fails(candidate):
                current = candidate  # this chunk was not needed: the next one is at the same start
            else:
                start += chunk
        if chunk == 1:
            return current
        chunk = max(chunk // 2, 1)
    return current


@contextmanager
def answers_lost(operation: str = "TransactWriteItems") -> Iterator[FaultPlan]:
    """Every `operation` the service sends is applied and its answer lost (botocore's retries too) inside the
    block: a request whose commit it is answers 503 though its change committed."""
    from chalicelib.storage import clients

    plan = FaultPlan(0, 1.0, kinds=("timeout_after",))
    decide = plan.decide
    plan.decide = lambda sent: decide(sent) if sent == operation else None  # type: ignore[method-assign, assignment]
    client = clients.dynamodb()
    plan.install(client)
    try:
        with no_backoff():
            yield plan
    finally:
        plan.uninstall(client)


@contextmanager
def racing(operation: str, competitor: Callable[[], object], when: str = "before-send") -> Iterator[None]:
    """Another writer wins a race: `competitor` runs once, just before the block's first `operation` is sent
    (after what the block read for it), and after the block if it sent none. Botocore calls the handlers of
    the most specific event first, so it runs ahead of the fault plan's (which answers every call). `when`
    "after-call": just after the block's first `operation` answered (between a read and what follows it)."""
    from chalicelib.storage import clients

    pending = [competitor]

    def before_send(**_: object) -> None:
        if pending:
            pending.pop()()

    events = clients.dynamodb().meta.events
    name = f"{when}.dynamodb.{operation}"
    events.register_first(name, before_send)
    try:
        yield
    finally:
        events.unregister(name, before_send)
    if pending:
        pending.pop()()
