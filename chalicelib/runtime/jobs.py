"""Background jobs: the message, the job item and its status moves, the handler registry, dispatch.

A job item moves queued -> running -> finished | failed by version-conditional updates, so a message
delivered twice runs its handler once. A job whose lease runs out (a worker died, a message was lost)
is put back on the queue by the reaper, up to MAX_ATTEMPTS times (a job still queued waits twice as long
each time, `requeue_lease`: a backlog longer than a lease is not taken for lost messages); a redelivered
message of a running job whose lease ran out takes the job over at once, and so does `make run`'s start for every job an
earlier run left (take_over). So every handler must be safe to run again from
the start, and its work must fit the lease: the deployed worker's timeout is below the lease, and the
queue's visibility timeout is at least six times the worker's timeout (tests/architecture checks both).

A handler declares the model of its payload (`@job_handler(JobType.X, payload=Model)`): dispatch parses
the stored payload with it before calling the handler, and a payload that does not parse fails the job
at once (`job.invalid_payload`), since running it again would not make it parse.

Time: the job item's bookkeeping (leases, status moves, `updatedAt`) is on real time (`wiring.clock()`),
which the reaper and `take_over` compare against; the handler's `CallContext.now` is the tenant's
business time: the real time for an ordinary tenant, and for a test-clock tenant the business time of the
unit of work that enqueued the job (`businessTime`, kept on the job item: `wiring.tenant_clocks().business_now`),
so what a job records reads the moment that caused it, however far the clock moved before it ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from chalicelib.core import codes
from chalicelib.core.clock import isoformat, parse_datetime
from chalicelib.core.context import SYSTEM, CallContext
from chalicelib.core.errors import AlreadyExists, ConcurrentModification, DomainError, Unavailable
from chalicelib.core.ids import new_locator
from chalicelib.runtime import observability, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.observability import logger
from chalicelib.settings import settings
from chalicelib.storage import codec, keys, table
from chalicelib.storage.table import WriteOp
from chalicelib.storage.unit_of_work import UnitOfWork

MAX_ATTEMPTS = 5


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


class JobMessage(BaseModel):
    job_type: str
    tenant: str
    job_locator: str
    payload: dict[str, Any] = {}
    correlation_id: str
    attempt: int = 1
    business_time: datetime | None = None
    """The job item's `businessTime` (the enqueuer's `now`), so a job that keeps its own job item (`keeps_its_job`)
    runs without reading it first; a message without it (sent before it was added) is run as any other."""


class NoPayload(BaseModel):
    """The payload model of a job that takes none (anything it is given is ignored)."""

    model_config = ConfigDict(extra="ignore")


P = TypeVar("P", bound=BaseModel)
Handler = Callable[[CallContext, Any], dict[str, Any] | None]
_handlers: dict[str, tuple[Handler, type[BaseModel]]] = {}
"""Filled by @job_handler as the handler modules load: the worker loads them all on its first message
(chalicelib/workers/handlers.py), so an API request that enqueues a job loads none of them."""
_JOB_TYPES = frozenset(JobType)
"""What enqueue accepts without a handler in this process: the worker has one for each (tests/jobs)."""


_given_up: dict[str, Callable[[CallContext, Any], None]] = {}
"""By job type, what to do when the reaper gives a job up (`on_give_up` of @job_handler)."""


_keeps_its_job: set[str] = set()
"""Job types whose handler keeps its job item itself (`keeps_its_job` of @job_handler)."""


def job_handler(
    job_type: JobType,
    *,
    payload: type[P],
    on_give_up: Callable[[CallContext, P], None] | None = None,
    keeps_its_job: bool = False,
) -> Callable[[Callable[[CallContext, P], dict[str, Any] | None]], Callable[[CallContext, P], dict[str, Any] | None]]:
    """Register `fn(ctx, payload) -> result | None` as the handler of `job_type`; dispatch gives it the job's
    payload parsed with the model `payload` (one that does not parse fails the job: `job.invalid_payload`).
    `on_give_up(ctx, payload)` runs when the reaper fails the job after its last lease ran out, so a job
    that keeps state of its own can record that its work stopped.

    `keeps_its_job`: dispatch neither reads the job item nor moves it to running (the message holds what it needs),
    and the handler finishes it in its own last write (`finish_in`) and reads it, if it must, with its own reads
    (`kept_job_key`, `kept_job_over`): three DynamoDB calls a job less, for a job of many small ones (a
    migration's accounts) whose own state item already makes a second run harmless and tells a done one. The job
    stays `queued` while it runs: a worker killed in it leaves it to its message's return or to the reaper, as a
    queued job whose message was lost. A handler that returns without finishing it has it finished by dispatch
    (one UpdateItem, as before)."""

    def register(
        fn: Callable[[CallContext, P], dict[str, Any] | None],
    ) -> Callable[[CallContext, P], dict[str, Any] | None]:
        if job_type in _handlers and _handlers[job_type][0] is not fn:
            raise ValueError(f"two handlers for job type {job_type}")
        _handlers[job_type] = (fn, payload)
        if on_give_up is not None:
            _given_up[job_type] = on_give_up
        if keeps_its_job:
            _keeps_its_job.add(job_type)
        return fn

    return register


def registered_job_types() -> list[str]:
    return sorted(_handlers)


def enqueue(
    uow: UnitOfWork, job_type: JobType, payload: BaseModel | dict[str, Any] | None = None, *, locator: str | None = None
) -> str:
    """Add a queued job item to `uow`; its message is sent once the unit of work commits. `payload`: the
    handler's payload model (or its JSON form). A job that continues another passes a `locator` derived
    from where it continues (`enqueue_once`), so a retried step that enqueues its continuation again makes
    the commit fail with AlreadyExists instead of a second job."""
    message = _added(uow, job_type, payload, locator)
    uow.after_commit(lambda: wiring.job_queue().send(message.model_dump_json()))
    return message.job_locator


def enqueue_many(
    uow: UnitOfWork, job_type: JobType, payloads: list[tuple[BaseModel | dict[str, Any] | None, str | None]]
) -> list[str]:
    """`enqueue` of each (payload, locator) in `uow`, as many job items as there are, and once the unit of
    work commits their messages sent SEND_BATCH to an SQS call (SendMessageBatch) rather than one each: the
    same items, leases and messages, so dispatch, the reaper and `take_over` see no difference. Answers the
    job locators, in order."""
    messages = [_added(uow, job_type, payload, locator) for payload, locator in payloads]
    if messages:
        uow.after_commit(lambda: send_all([message.model_dump_json() for message in messages]))
    return [message.job_locator for message in messages]


SEND_BATCH = 10
"""Messages per SendMessageBatch (SQS takes at most 10, and at most 256 KiB together)."""
_BATCH_BYTES = 256 * 1024


def send_all(bodies: list[str]) -> None:
    """Send the messages, SEND_BATCH (and at most 256 KiB) to a call."""
    send_batch = wiring.job_queue().send_batch
    batch: list[str] = []
    size = 0
    for body in bodies:
        length = len(body.encode())
        if batch and (len(batch) == SEND_BATCH or size + length > _BATCH_BYTES):
            send_batch(batch)
            batch, size = [], 0
        batch.append(body)
        size += length
    if batch:
        send_batch(batch)


def _added(
    uow: UnitOfWork, job_type: JobType, payload: BaseModel | dict[str, Any] | None, locator: str | None
) -> JobMessage:
    if job_type not in _JOB_TYPES and job_type not in _handlers:
        raise ValueError(f"no handler registered for job type {job_type}")
    ctx: CallContext = uow.ctx
    body = _payload_body(payload)
    locator = locator or new_locator()
    now = wiring.clock().now()
    lease_until = now + timedelta(seconds=settings().job_lease_seconds)
    uow.add(table.put_new(_job_item(ctx, locator, str(job_type), body, now, lease_until)))
    return JobMessage(
        job_type=str(job_type),
        tenant=ctx.tenant,
        job_locator=locator,
        payload=body,
        correlation_id=ctx.request_id,
        business_time=ctx.now,
    )


def enqueue_once(
    ctx: CallContext, job_type: JobType, payload: BaseModel | dict[str, Any] | None = None, *, locator: str
) -> bool:
    """Enqueue a job under `locator` in a unit of work of its own, unless a job of that locator exists: a
    step that continues another (the next page of a run, a fan-out's next tenant) passes a locator derived
    from where it continues (`core.ids.derived_locator(moment, seed)`), so a retried step enqueues its
    continuation once. Answers whether this call enqueued it."""
    uow = wiring.unit_of_work(ctx)
    enqueue(uow, job_type, payload, locator=locator)
    try:
        uow.commit()
    except AlreadyExists:
        return False  # an earlier attempt of the step enqueued it
    return True


def _payload_body(payload: BaseModel | dict[str, Any] | None) -> dict[str, Any]:
    if payload is None:
        return {}
    if isinstance(payload, BaseModel):
        return payload.model_dump(mode="json", exclude_none=True)
    return dict(payload)


def _job_item(
    ctx: CallContext, locator: str, job_type: str, payload: dict[str, Any], now: datetime, lease_until: datetime
) -> dict[str, Any]:
    """`createdAt`, `updatedAt`: real time (the job's bookkeeping); `businessTime`: the enqueuer's `now`."""
    return {
        **keys.job(ctx.tenant, locator).as_dict(),
        "GSI2PK": keys.jobs_index(ctx.tenant),
        "GSI2SK": locator,
        **_lease_keys(ctx.tenant, locator, lease_until),
        "entity": "job",
        "locator": locator,
        "jobType": job_type,
        "status": JobStatus.QUEUED.value,
        "payload": payload,
        "attempts": 0,
        "requeues": 0,
        "version": 1,
        "correlationId": ctx.request_id,
        "createdAt": now,
        "createdBy": ctx.user_locator,
        "updatedAt": now,
        "businessTime": ctx.now,
    }


def _lease_keys(tenant: str, locator: str, lease_until: datetime) -> dict[str, Any]:
    return {
        "GSI1PK": keys.job_leases_index(tenant),
        "GSI1SK": f"{isoformat(lease_until)}#{locator}",
        "leaseUntil": lease_until,
    }


def get_job(tenant: str, locator: str) -> dict[str, Any] | None:
    return table.gateway().get(keys.tenant_scope(tenant), keys.job(tenant, locator))


def dispatch(message: JobMessage) -> JobStatus | None:
    """Run one delivered message. Answers the job's new status, or None when there was nothing to do.

    A DomainError is permanent: the job fails and the message is consumed, but for a lost race
    (ConcurrentModification: another write of the same records committed first), after which the job is
    queued again and its message sent again at once, up to MAX_ATTEMPTS runs, and for Unavailable (503: a
    busy or silent dependency), which is transient. A transient error puts the job back to queued and
    propagates, so SQS delivers the message again.
    """
    if message.job_type in _keeps_its_job and message.business_time is not None and message.job_type in _handlers:
        return _dispatch_kept(message)
    now = wiring.clock().now()
    scope = keys.tenant_scope(message.tenant)
    job = table.gateway().get(scope, keys.job(message.tenant, message.job_locator))
    if job is None or not _claimable(job, now):
        return None
    handler = _handlers.get(job["jobType"])
    ctx = _job_context(message, job)
    version = int(job["version"])
    lease_until = now + timedelta(seconds=settings().job_lease_seconds)
    try:
        _move(
            scope,
            message,
            version,
            JobStatus.RUNNING,
            now,
            {
                **_lease_keys(message.tenant, message.job_locator, lease_until),
                "attempts": int(job["attempts"]) + 1,
            },
        )
    except ConcurrentModification:
        return None  # another delivery of the same message won the race
    with observability.invocation(
        message.correlation_id, tenant=message.tenant, job_type=job["jobType"], job_locator=message.job_locator
    ):
        outcome, started = "error", time.perf_counter()
        try:
            status = _run(ctx, scope, message, job, handler, version + 1)
            outcome = "retried" if status == JobStatus.QUEUED else status.value
            return status
        finally:
            observability.emit(
                {
                    "Jobs": (1, observability.COUNT),
                    "JobDuration": ((time.perf_counter() - started) * 1000, observability.MILLISECONDS),
                },
                {"jobType": job["jobType"], "outcome": outcome},
                rollups=({"outcome": outcome},),
                attempt=int(job["attempts"]) + 1,
            )


# --- jobs that keep their job item themselves (`keeps_its_job`) ---------------------------------------------


@dataclass
class _Kept:
    message: JobMessage
    finished: bool = False
    """Whether the handler's own write finished the job item (`finish_in`, committed)."""


_kept: ContextVar[_Kept | None] = ContextVar("kept_job", default=None)


def kept_job_key() -> keys.Key | None:
    """The job item's key of the `keeps_its_job` job this handler runs for, for the handler's own read of it
    (None when dispatch ran it as any other job: it read and claimed the item itself)."""
    kept = _kept.get()
    return None if kept is None else keys.job(kept.message.tenant, kept.message.job_locator)


def kept_job_over(item: dict[str, Any] | None) -> bool:
    """Whether the job item the handler read (at `kept_job_key`) says the job is over: finished, failed (the
    reaper gave it up), or gone; a message of it delivered again must not run it. False when dispatch claimed it."""
    if _kept.get() is None:
        return False
    return item is None or item.get("status") not in (JobStatus.QUEUED.value, JobStatus.RUNNING.value)


def finish_in(uow: Any, result: dict[str, Any]) -> None:
    """Add to `uow` (the handler's last write) the move of its `keeps_its_job` job to finished with `result`, so
    the job ends with the work it did, in the same write; nothing when dispatch ran it as any other job."""
    kept = _kept.get()
    if kept is None:
        return
    uow.add(_kept_finish(kept.message, JobStatus.FINISHED, wiring.clock().now(), {"result": result}))
    uow.after_commit(partial(setattr, kept, "finished", True))


def _kept_finish(message: JobMessage, status: JobStatus, now: datetime, changes: dict[str, Any]) -> WriteOp:
    """Finished or failed on condition that the job is still queued or running (its version is not known: it was
    not read), its version and attempts counted up, its lease removed (the reaper leaves it alone)."""
    op = table.update(
        keys.job(message.tenant, message.job_locator),
        {"status": status.value, "updatedAt": now, "finishedAt": now, **changes},
        remove=("GSI1PK", "GSI1SK", "leaseUntil"),
    )
    params = op.params
    names = {**params.get("ExpressionAttributeNames", {}), "#kstatus": "status", "#kversion": "version"}
    names["#kattempts"] = "attempts"
    values = {
        **params.get("ExpressionAttributeValues", {}),
        ":kqueued": codec.serialize_value(JobStatus.QUEUED.value),
        ":krunning": codec.serialize_value(JobStatus.RUNNING.value),
        ":kone": codec.serialize_value(1),
    }
    set_part, _, remove_part = params["UpdateExpression"].partition(" REMOVE ")
    expression = f"{set_part} ADD #kversion :kone, #kattempts :kone REMOVE {remove_part}"
    op.params = {
        **params,
        "UpdateExpression": expression,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
        "ConditionExpression": f"{params['ConditionExpression']} AND #kstatus IN (:kqueued, :krunning)",
    }
    return op


def _dispatch_kept(message: JobMessage) -> JobStatus | None:
    """`dispatch` of a `keeps_its_job` job: its context from the message, no read or move of its job item before
    the handler; the job finished by the handler's last write, or else here; a lost race sent again up to
    MAX_ATTEMPTS runs (the message counts them), a transient error propagated with the job still queued."""
    handler, model = _handlers[message.job_type]
    caused_at = message.business_time
    ctx = CallContext(
        principal=SYSTEM,
        request_id=message.correlation_id,
        now=wiring.tenant_clocks().business_now(message.tenant, caused_at),
        tenant_locator=message.tenant,
    )
    scope = keys.tenant_scope(message.tenant)
    kept = _Kept(message)
    with observability.invocation(
        message.correlation_id, tenant=message.tenant, job_type=message.job_type, job_locator=message.job_locator
    ):
        outcome, started = "error", time.perf_counter()
        token = _kept.set(kept)
        try:
            status = _run_kept(ctx, scope, kept, handler, model)
            outcome = "retried" if status == JobStatus.QUEUED else status.value
            return status
        finally:
            _kept.reset(token)
            observability.emit(
                {
                    "Jobs": (1, observability.COUNT),
                    "JobDuration": ((time.perf_counter() - started) * 1000, observability.MILLISECONDS),
                },
                {"jobType": message.job_type, "outcome": outcome},
                rollups=({"outcome": outcome},),
                attempt=message.attempt,
            )


def _run_kept(ctx: CallContext, scope: str, kept: _Kept, handler: Handler, model: type[BaseModel]) -> JobStatus:
    message = kept.message
    try:
        result = handler(ctx, _parsed(model, {"jobType": message.job_type, "payload": message.payload}))
    except ConcurrentModification as error:
        if message.attempt < MAX_ATTEMPTS:  # lost a race: the other writer committed, run again
            wiring.job_queue().send(message.model_copy(update={"attempt": message.attempt + 1}).model_dump_json())
            return JobStatus.QUEUED
        _finish_kept(scope, message, JobStatus.FAILED, {"error": f"{error.code}: {error.message}"})
        return JobStatus.FAILED
    except Unavailable:
        logger().warning("job step unavailable: delivered again", exc_info=True)
        raise  # still queued: its message comes back
    except DomainError as error:
        _finish_kept(scope, message, JobStatus.FAILED, {"error": f"{error.code}: {error.message}"})
        return JobStatus.FAILED
    except Exception:
        logger().exception("job failed with a transient error")
        raise
    if not kept.finished:
        _finish_kept(scope, message, JobStatus.FINISHED, {"result": result or {}})
    return JobStatus.FINISHED


def _finish_kept(scope: str, message: JobMessage, status: JobStatus, changes: dict[str, Any]) -> None:
    try:
        table.gateway().write(scope, _kept_finish(message, status, wiring.clock().now(), changes))
    except ConcurrentModification:
        pass  # another delivery of the message finished it, or the reaper gave it up: it is over either way


def _claimable(job: dict[str, Any], now: datetime) -> bool:
    """Queued, or running on a lease that ran out (its worker was killed, e.g. by the function timeout)."""
    if job["status"] == JobStatus.QUEUED.value:
        return True
    return job["status"] == JobStatus.RUNNING.value and "leaseUntil" in job and parse_datetime(job["leaseUntil"]) <= now


def _run(
    ctx: CallContext,
    scope: str,
    message: JobMessage,
    job: dict[str, Any],
    handler: tuple[Handler, type[BaseModel]] | None,
    version: int,
) -> JobStatus:
    try:
        if handler is None:
            raise codes.JOB_UNKNOWN_TYPE(f"no handler for job type {job['jobType']}")
        run, model = handler
        result = run(ctx, _parsed(model, job))
    except ConcurrentModification as error:
        if int(job["attempts"]) + 1 < MAX_ATTEMPTS:  # lost a race: the other writer committed, run again
            _move(scope, message, version, JobStatus.QUEUED, wiring.clock().now(), {})
            wiring.job_queue().send(message.model_dump_json())
            return JobStatus.QUEUED
        _finish(
            scope, message, version, JobStatus.FAILED, wiring.clock().now(), {"error": f"{error.code}: {error.message}"}
        )
        return JobStatus.FAILED
    except Unavailable:
        # a dependency was busy or did not answer (DynamoDB throttled, a timeout): transient, as SQS sees it
        logger().warning("job step unavailable: delivered again", exc_info=True)
        _move(scope, message, version, JobStatus.QUEUED, wiring.clock().now(), {})
        raise
    except DomainError as error:
        _finish(
            scope, message, version, JobStatus.FAILED, wiring.clock().now(), {"error": f"{error.code}: {error.message}"}
        )
        return JobStatus.FAILED
    except Exception:
        logger().exception("job failed with a transient error")
        _move(scope, message, version, JobStatus.QUEUED, wiring.clock().now(), {})
        raise
    _finish(scope, message, version, JobStatus.FINISHED, wiring.clock().now(), {"result": result or {}})
    return JobStatus.FINISHED


def _parsed(model: type[BaseModel], job: dict[str, Any]) -> BaseModel:
    try:
        return model.model_validate(dict(job.get("payload") or {}))
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in e['loc']) or 'payload'}: {e['msg']}" for e in error.errors()
        )
        raise codes.JOB_INVALID_PAYLOAD(
            f"The payload of this {job['jobType']} job does not fit {model.__name__}: {problems}"
        ) from None


def _move(
    scope: str, message: JobMessage, version: int, status: JobStatus, now: datetime, changes: dict[str, Any]
) -> None:
    table.gateway().write(scope, _status_update(message, version, status, now, changes))


def _finish(
    scope: str, message: JobMessage, version: int, status: JobStatus, now: datetime, changes: dict[str, Any]
) -> None:
    op = _status_update(
        message, version, status, now, {**changes, "finishedAt": now}, remove=("GSI1PK", "GSI1SK", "leaseUntil")
    )
    table.gateway().write(scope, op)


def _status_update(
    message: JobMessage,
    version: int,
    status: JobStatus,
    now: datetime,
    changes: dict[str, Any],
    remove: tuple[str, ...] = (),
) -> WriteOp:
    return table.update(
        keys.job(message.tenant, message.job_locator),
        {"status": status.value, "updatedAt": now, **changes},
        expected_version=version,
        remove=remove,
    )


def reap_expired(tenant: str, now: datetime) -> int:
    """Re-queue the tenant's jobs whose lease ran out (sending their message again), up to MAX_ATTEMPTS
    times per job, then fail them. Counting re-queues rather than handler runs bounds a job whose message
    keeps getting lost too. Answers how many jobs were re-queued or failed."""
    expired, _ = table.gateway().query(
        keys.tenant_scope(tenant), keys.job_leases_index(tenant), index="GSI1", sk_to=isoformat(now) + "~", limit=100
    )
    return sum(_requeue(tenant, job, now) for job in expired if parse_datetime(job["leaseUntil"]) <= now)


def take_over(tenant: str, moved_before: datetime, now: datetime) -> int:
    """Re-queue, as the reaper does, every job of the tenant on a lease whose status last moved before
    `moved_before`, whether or not that lease has run out: `make run` at its start, when every lease an
    earlier run took is dead and no message of it is left (SQS is not saved). Answers how many jobs were
    re-queued or failed."""
    scope, index = keys.tenant_scope(tenant), keys.job_leases_index(tenant)
    handled, start_key = 0, None
    while True:
        leased, start_key = table.gateway().query(scope, index, index="GSI1", limit=100, start_key=start_key)
        handled += sum(_requeue(tenant, job, now) for job in leased if parse_datetime(job["updatedAt"]) < moved_before)
        if start_key is None:
            return handled


def _requeue(tenant: str, job: dict[str, Any], now: datetime) -> bool:
    """Back to queued on a new lease, its message sent again; failed instead once it was re-queued
    MAX_ATTEMPTS times. False when the job moved on meanwhile."""
    scope = keys.tenant_scope(tenant)
    message = JobMessage(
        job_type=job["jobType"],
        tenant=tenant,
        job_locator=job["locator"],
        payload=dict(job.get("payload") or {}),
        correlation_id=job["correlationId"],
        attempt=int(job["attempts"]) + 1,
        business_time=parse_datetime(job["businessTime"]) if job.get("businessTime") else None,
    )
    requeues = int(job.get("requeues", 0))
    try:
        if requeues >= MAX_ATTEMPTS:
            _finish(
                scope,
                message,
                int(job["version"]),
                JobStatus.FAILED,
                now,
                {"error": "job.lease_expired: gave up after the last attempt"},
            )
            observability.emit(
                {"Jobs": (1, observability.COUNT)},
                {"jobType": job["jobType"], "outcome": "failed"},
                rollups=({"outcome": "failed"},),
                job_locator=job["locator"],
                error="job.lease_expired",
            )
            _give_up(message, job)
        else:
            lease_until = now + requeue_lease(job["status"], requeues)
            _move(
                scope,
                message,
                int(job["version"]),
                JobStatus.QUEUED,
                now,
                {**_lease_keys(tenant, job["locator"], lease_until), "requeues": requeues + 1},
            )
            wiring.job_queue().send(message.model_dump_json())
    except ConcurrentModification:
        return False
    return True


def requeue_lease(status: str, requeues: int) -> timedelta:
    """The lease a re-queued job gets: one lease for a job whose run was cut short (its worker died), and for one
    still queued (never started: its message lost, or behind a backlog of other jobs, as a large migration's
    accounts are) a lease that doubles with each re-queue, so MAX_ATTEMPTS re-queues span 63 leases (15.75 hours
    at the deployed 900 s) before the job is failed, and a backlog's messages are not sent again every lease."""
    lease = timedelta(seconds=settings().job_lease_seconds)
    return lease * 2 ** (requeues + 1) if status == JobStatus.QUEUED.value else lease


def _give_up(message: JobMessage, job: dict[str, Any]) -> None:
    """The job type's `on_give_up`, if it has one (a payload that does not parse has nothing to tell it)."""
    hook, handler = _given_up.get(message.job_type), _handlers.get(message.job_type)
    if hook is None or handler is None:
        return
    try:
        parsed = _parsed(handler[1], job)
    except DomainError:
        return
    hook(_job_context(message, job), parsed)


def _job_context(message: JobMessage, job: dict[str, Any]) -> CallContext:
    """The handler's context: the tenant's business time for the job (`businessTime`, see the module)."""
    caused_at = parse_datetime(job["businessTime"]) if job.get("businessTime") else None
    now = wiring.tenant_clocks().business_now(message.tenant, caused_at)
    return CallContext(principal=SYSTEM, request_id=message.correlation_id, now=now, tenant_locator=message.tenant)


class InlineJobQueue:
    """The test double of the SQS queue: records messages, and `drain()` runs them in order."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.sent: list[JobMessage] = []
        self.calls = 0
        """Sends as SQS would count them: one per `send`, one per `send_batch`."""

    def send(self, body: str) -> None:
        self.calls += 1
        self._record(body)

    def send_batch(self, bodies: list[str]) -> None:
        if not 0 < len(bodies) <= SEND_BATCH:
            raise ValueError(f"a batch of {len(bodies)} messages: SQS takes 1 to {SEND_BATCH}")
        self.calls += 1
        for body in bodies:
            self._record(body)

    def _record(self, body: str) -> None:
        self.messages.append(body)
        self.sent.append(JobMessage.model_validate_json(body))

    def drain(self, max_rounds: int = 1000, *, job_types: frozenset[str] | None = None) -> int:
        """Dispatch until the queue is empty (jobs that enqueue jobs included), or, with `job_types`, until
        no message of those types is left (the others stay queued). Answers how many ran."""
        ran = 0
        while True:
            waiting = [
                m for m in self.messages if job_types is None or JobMessage.model_validate_json(m).job_type in job_types
            ]
            if not waiting:
                return ran
            if ran >= max_rounds:
                raise RuntimeError("jobs keep enqueueing jobs: more than max_rounds dispatched")
            self.messages.remove(waiting[0])
            dispatch(JobMessage.model_validate_json(waiting[0]))
            ran += 1


@job_handler(JobType.REAP_JOBS, payload=NoPayload)
def _reap(ctx: CallContext, payload: NoPayload) -> dict[str, Any]:
    """Leases are real time: the reaper compares them with the real clock, whatever the tenant's clock says."""
    return {"requeuedOrFailed": reap_expired(ctx.tenant, wiring.clock().now())}
