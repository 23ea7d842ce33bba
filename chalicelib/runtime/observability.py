"""Logs, metrics and traces in the Powertools pattern of the handler cookbook, built on first use so that
importing the app stays cheap (Powertools and the X-Ray SDK load on the first invocation, not at a cold
start's import).

- **Logger** (`logger()`): one Powertools Logger, JSON lines on stdout. Within an invocation (`invocation`)
  every line carries `correlation_id`: a request's id (its answer's `requestId`), which the jobs it enqueues
  carry in their message (`JobMessage.correlation_id`) and the worker sets again, as do the jobs those
  enqueue; a schedule's run has one of its own. Keys are per thread (Powertools' thread-safe keys), so
  parallel requests of `make run` never share them.
- **Metrics** (`emit`, `count`): one CloudWatch EMF document per unit of work, written as a line to stdout
  (CloudWatch Logs turns it into metrics; under `make run` it is in the log), namespace `PAS` (deployed:
  `PAS/<stack name>`, from POWERTOOLS_METRICS_NAMESPACE, so two stacks of one account keep theirs), dimensions
  `service` plus the unit's own, each document built by a Powertools EMF provider of its own (Powertools'
  `Metrics` keeps one metric set per process, which parallel requests would share). The tenant, the
  correlation id and the invocation's other keys are properties of the document, never dimensions.
- **Tracer** (`traced`): Powertools' `capture_lambda_handler` around every API, job and schedule function,
  responses never captured (they hold tenants' data). Disabled outside Lambda (`POWERTOOLS_TRACE_DISABLED`
  in the tests and `make run`), so nothing needs X-Ray there.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import IO, Any, TypeVar, cast

from chalicelib.settings import settings

NAMESPACE = "PAS"
SERVICE = "pas"
T = TypeVar("T")

_lock = threading.Lock()
_logger: Any = None
_tracer: Any = None
_properties: ContextVar[Mapping[str, Any]] = ContextVar("observability_properties", default=MappingProxyType({}))
"""What the current invocation's metrics carry as properties (and its log lines as keys)."""


class _Stdout:
    """Stands for `sys.stdout` as it is at the time of each write (a test's capture, say), not as it was when
    the Logger was built."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


def logger() -> Any:
    """The one Logger of the process. Built under a lock: two Powertools Loggers of one service, built at
    once by parallel requests, share a handler whose formatter ends up broken (every log call raises)."""
    global _logger
    if _logger is None:
        with _lock:
            if _logger is None:
                from aws_lambda_powertools import Logger

                _logger = Logger(service=SERVICE, stream=cast(IO[str], _Stdout()))
    return _logger


def tracer() -> Any:
    """The one Tracer of the process; it patches botocore only (the calls to DynamoDB, S3, SQS, Lambda)."""
    global _tracer
    if _tracer is None:
        with _lock:
            if _tracer is None:
                from aws_lambda_powertools import Tracer

                _tracer = Tracer(service=SERVICE, patch_modules=["botocore"])
    return _tracer


def use_tracer(replacement: Any) -> None:
    """Replace the process's Tracer (tests: one over a recording provider); None: built again on next use."""
    global _tracer
    with _lock:
        _tracer = replacement


def correlation_id() -> str | None:
    """The current invocation's correlation id (None outside one)."""
    return _properties.get().get("correlation_id")


@contextmanager
def invocation(correlation: str, lambda_context: Any = None, **keys: Any) -> Iterator[None]:
    """Everything within is one unit of work of `correlation`: its log lines carry the id and `keys` (and the
    Lambda context's function name and request id, when there is one), its metrics carry them as properties.
    Nested (a job run inline within a test's request), the outer invocation's keys come back after it."""
    log = logger()
    before_keys = log.thread_safe_get_current_keys()
    added = {"correlation_id": correlation, **{k: v for k, v in keys.items() if v is not None}}
    if lambda_context is not None:
        added.update(_lambda_keys(lambda_context))
    token = _properties.set({**_properties.get(), **added})
    log.thread_safe_append_keys(**added)
    try:
        yield
    finally:
        _properties.reset(token)
        log.thread_safe_clear_keys()
        if before_keys:
            log.thread_safe_append_keys(**before_keys)


def tag(**keys: Any) -> None:
    """Add `keys` to the current invocation (e.g. the tenant, once the request is authorised)."""
    present = {k: v for k, v in keys.items() if v is not None}
    _properties.set({**_properties.get(), **present})
    logger().thread_safe_append_keys(**present)


def _lambda_keys(context: Any) -> dict[str, Any]:
    from aws_lambda_powertools.logging.lambda_context import build_lambda_context_model

    try:
        model = build_lambda_context_model(context)
    except AttributeError:  # not a Lambda context (a local caller's stand-in)
        return {}
    return {"function_name": model.function_name, "function_request_id": model.function_request_id}


def traced(name: str, run: Callable[[], T], **annotations: str) -> T:
    """`run()` as a Lambda handler named `name` traced by the Tracer (subsegment `## name`, with the cold start,
    the service and `annotations`), its answer kept out of the trace (an exception is recorded). Where traces
    go nowhere (`settings.tracing` false: tests, `make run`) and no Tracer was given, `run()` alone: the X-Ray
    SDK takes as long to import as chalice, pydantic and boto3 together, on a cold start's first request."""
    if _tracer is None and not settings().tracing:
        return run()
    current = tracer()

    def handler(event: Any, context: Any) -> T:
        for key, value in annotations.items():
            current.put_annotation(key, value)
        return run()

    handler.__name__ = name
    answer: T = current.capture_lambda_handler(handler, capture_response=False)(None, None)
    return answer


def handler(fn: Callable[[Any], T]) -> Callable[[Any], T]:
    """A Chalice event function (`fn(event)`: the SQS worker, a schedule) as the cookbook's handler: traced,
    and one invocation whose correlation id is new (a schedule's run: the jobs it enqueues carry it)."""
    import functools

    from chalicelib.core.ids import new_locator

    @functools.wraps(fn)
    def observed(event: Any) -> T:
        with invocation(new_locator(), getattr(event, "context", None), function=fn.__name__):
            return traced(fn.__name__, lambda: fn(event))

    return observed


# --- metrics -----------------------------------------------------------------------------------------------

COUNT, MILLISECONDS = "Count", "Milliseconds"


def emit(
    metrics: Mapping[str, tuple[float, str]],
    dimensions: Mapping[str, str],
    *,
    rollups: tuple[Mapping[str, str], ...] = (),
    **properties: Any,
) -> None:
    """Write one EMF document: `metrics` (name -> (value, unit)) under `service` and `dimensions`, and under each
    of `rollups` too (further dimension sets, each with `service`: e.g. every job's outcome whatever its
    type); the invocation's keys and `properties` as properties."""
    from aws_lambda_powertools.metrics.functions import is_metrics_disabled

    if is_metrics_disabled():
        return
    from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

    provider = AmazonCloudWatchEMFProvider(service=SERVICE)  # POWERTOOLS_METRICS_NAMESPACE: the stack's own
    provider.namespace = provider.namespace or NAMESPACE
    for name, (amount, unit) in metrics.items():
        provider.add_metric(name=name, unit=unit, value=amount)
    for name, dimension in dimensions.items():
        provider.add_dimension(name=name, value=dimension)
    for rollup in rollups:
        provider.add_dimensions(service=SERVICE, **rollup)
    for key, value in {**_properties.get(), **properties}.items():
        if value is not None:
            provider.add_metadata(key=key, value=value)
    document = provider.serialize_metric_set()
    sys.stdout.write(json.dumps(document, separators=(",", ":"), default=str) + "\n")
    sys.stdout.flush()


def count(name: str, dimensions: Mapping[str, str] | None = None, **properties: Any) -> None:
    """One occurrence of `name` (an invoice generated, a payment posted)."""
    emit({name: (1, COUNT)}, dimensions or {}, **properties)


@contextmanager
def timed(name: str, dimensions: Mapping[str, str], **properties: Any) -> Iterator[dict[str, Any]]:
    """Times the block and emits `<name>s` (a count) and `<name>Duration` (milliseconds) under `dimensions` and
    `outcome`: `ok`, unless the block sets another in the dict it is given (`outcome`, and more properties)
    or raises (`error`)."""
    found: dict[str, Any] = {"outcome": "ok"}
    started = time.perf_counter()
    try:
        yield found
    except BaseException:
        found["outcome"] = "error"
        raise
    finally:
        elapsed = (time.perf_counter() - started) * 1000
        outcome = str(found.pop("outcome"))
        emit(
            {f"{name}s": (1, COUNT), f"{name}Duration": (elapsed, MILLISECONDS)},
            {**dimensions, "outcome": outcome},
            **{**properties, **found},
        )
