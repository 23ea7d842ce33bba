"""A seeded fault plan for the service's DynamoDB calls (issue 31; DECISIONS.md "make run": `PAS_FAULT_SEED`,
`PAS_FAULT_RATE`).

One `random.Random(seed)` decides, at every attempt botocore sends (its `before-send` event, registered
ahead of moto's stubber, so botocore's own retries see the faults as they would see AWS's), whether to:

- `throttle`: answer `ThrottlingException` or `ProvisionedThroughputExceededException` without applying
  the call (botocore retries it with its backoff; the service answers 503 once its attempts run out);
- `timeout_before`: a read timeout before the call reaches the store (nothing applied);
- `timeout_after`: the call is applied, then its answer is lost (a read timeout): botocore sends it again,
  so a write is attempted twice, the second time against the state the first one left;
- `partial_batch`: a BatchWriteItem applies only some of its requests, or a BatchGetItem reads only some of
  its keys, and the answer names the rest as `UnprocessedItems` / `UnprocessedKeys`;
- or pass.

Installed on a client by `install(client)` (the tests' fixture on `clients.dynamodb()`; under `make run`,
`from_environment` in local/gateway.py and in local/run.py's worker when `PAS_FAULT_RATE` > 0); production
code never installs it. Installed, the plan is the client's
transport: botocore runs every `before-send` handler and takes the first answer, so moto's stubber, left
beside it, would apply a call the plan throttles; the plan takes its place and forwards what it lets
through. The same seed and the same sequence of calls give the same faults: `injected` counts them by kind
and `log` lists (operation, kind) in order.

Job deliveries are faulted from the same random (`delivery()`): a message `duplicate`d (run twice), `delay`ed
(not run now, delivered again later), or its run `kill`ed between two writes (`kill_after(n)`: the n-th next
DynamoDB call of that thread raises WorkerKilled, which no `except Exception` of the job sees, as nothing of a
killed Lambda runs; its message comes back, and the job's lease tells the next delivery what to do).
"""

from __future__ import annotations

import binascii
import json
import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

KINDS = ("throttle", "timeout_before", "timeout_after", "partial_batch")
THROTTLING_CODES = ("ThrottlingException", "ProvisionedThroughputExceededException")
BATCHES = ("BatchWriteItem", "BatchGetItem")
EVENT = "before-send.dynamodb"
DELIVERY_KINDS = ("duplicate", "delay", "kill")
SEED_VARIABLE, RATE_VARIABLE = "PAS_FAULT_SEED", "PAS_FAULT_RATE"
GATEWAY_STREAM, WORKER_STREAM = 0, 1
"""`from_environment`'s streams: the processes of `make run` draw their own faults from one seed."""
KILL_WITHIN = 8
"""A killed run dies at one of its next KILL_WITHIN DynamoDB calls (or finishes first)."""


class WorkerKilled(BaseException):
    """The worker died in the middle of a job (an injected fault): a BaseException, so that no handler of the
    job's own code (`except Exception`) records anything, as nothing of a killed process runs."""


@dataclass
class FaultPlan:
    seed: int
    rate: float
    kinds: tuple[str, ...] = KINDS
    random: random.Random = field(init=False)
    injected: Counter[str] = field(init=False, default_factory=Counter)
    log: list[tuple[str, str]] = field(init=False, default_factory=list)
    enabled: bool = field(init=False, default=True)
    _kills: dict[int, int] = field(init=False, default_factory=dict)
    """thread ident -> DynamoDB calls left before that thread's job is killed"""

    def __post_init__(self) -> None:
        if not 0 <= self.rate <= 1:
            raise ValueError(f"a fault rate is between 0 and 1, not {self.rate}")
        unknown = set(self.kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds: {sorted(unknown)}")
        self.random = random.Random(self.seed)

    def decide(self, operation: str) -> str | None:
        """The fault of the next attempt of `operation`, or None. Every attempt draws the same number of
        values, so what one decision answers never shifts the ones after it."""
        if not self.enabled:
            return None
        strike, pick = self.random.random(), self.random.random()
        if strike >= self.rate:
            return None
        kinds = [kind for kind in self.kinds if kind != "partial_batch" or operation in BATCHES]
        if not kinds:
            return None
        kind = kinds[int(pick * len(kinds))]
        self.injected[kind] += 1
        self.log.append((operation, kind))
        return kind

    def delivery(self) -> str | None:
        """The fault of the next job delivery (one of DELIVERY_KINDS), or None; drawn as `decide` draws."""
        if not self.enabled:
            return None
        strike, pick = self.random.random(), self.random.random()
        if strike >= self.rate:
            return None
        kind = DELIVERY_KINDS[int(pick * len(DELIVERY_KINDS))]
        self.injected[kind] += 1
        self.log.append(("delivery", kind))
        return kind

    def kill_after(self, calls: int | None) -> None:
        """This thread's `calls`-th next DynamoDB call raises WorkerKilled (None: no kill pending)."""
        if calls is None:
            self._kills.pop(threading.get_ident(), None)
        else:
            self._kills[threading.get_ident()] = calls

    def before_send(self, request: Any, event_name: str, **_: Any) -> Any:
        operation = event_name.rsplit(".", 1)[-1]
        left = self._kills.get(threading.get_ident())
        if left is not None:
            if left <= 1:
                self.kill_after(None)
                raise WorkerKilled(f"the worker was killed before a {operation} (injected)")
            self._kills[threading.get_ident()] = left - 1
        kind = self.decide(operation)
        if kind is None:
            return _forward(event_name, request)
        if kind == "throttle":
            code = THROTTLING_CODES[self.random.randrange(len(THROTTLING_CODES))]
            return _error_response(request, code, "Rate of requests exceeds the allowed throughput (injected)")
        if kind == "timeout_before":
            raise _timeout(request)
        if kind == "timeout_after":
            _forward(event_name, request)
            raise _timeout(request)
        return self._partial(event_name, operation, request)

    def _partial(self, event_name: str, operation: str, request: Any) -> Any:
        body = json.loads(request.body)
        ((table, asked),) = body["RequestItems"].items()
        wanted = asked if operation == "BatchWriteItem" else asked["Keys"]
        if len(wanted) < 2:
            return _forward(event_name, request)  # nothing to split: the call goes through whole
        kept = self.random.randrange(1, len(wanted))
        sent, held = wanted[:kept], wanted[kept:]
        body["RequestItems"][table] = sent if operation == "BatchWriteItem" else {**asked, "Keys": sent}
        answer = _forward(event_name, _with_body(request, json.dumps(body).encode()))
        if answer.status_code != 200:
            return answer
        result = json.loads(answer.content)
        if operation == "BatchWriteItem":
            result["UnprocessedItems"] = {table: held}
        else:
            result["UnprocessedKeys"] = {table: {**asked, "Keys": held}}
        return _response(request, 200, json.dumps(result).encode(), answer.headers)

    def install(self, client: Any) -> None:
        from moto.core.models import botocore_stubber

        client.meta.events.unregister("before-send", botocore_stubber)
        client.meta.events.register_first(EVENT, self.before_send)

    def uninstall(self, client: Any) -> None:
        from moto.core.models import botocore_stubber

        client.meta.events.unregister(EVENT, self.before_send)
        client.meta.events.register("before-send", botocore_stubber)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No faults inside the block (a checker's reads), and no values drawn: the plan resumes where it was."""
        enabled, self.enabled = self.enabled, False
        try:
            yield
        finally:
            self.enabled = enabled


def from_environment(environ: Mapping[str, str], stream: int = 0) -> FaultPlan | None:
    """The plan `make run` asks for with PAS_FAULT_SEED (an integer, default 0) and PAS_FAULT_RATE (0 to 1,
    default 0: None, no plan). Each process of the stack passes its own `stream`, so the gateway and the worker
    draw different faults from one seed. A bad value stops the start with a message naming the variable."""
    rate_text, seed_text = environ.get(RATE_VARIABLE, "").strip(), environ.get(SEED_VARIABLE, "").strip()
    try:
        rate = float(rate_text) if rate_text else 0.0
    except ValueError:
        raise SystemExit(f"{RATE_VARIABLE} is a number from 0 to 1, not {rate_text!r}") from None
    if not 0 <= rate <= 1:
        raise SystemExit(f"{RATE_VARIABLE} is a number from 0 to 1, not {rate_text!r}")
    try:
        seed = int(seed_text) if seed_text else 0
    except ValueError:
        raise SystemExit(f"{SEED_VARIABLE} is an integer, not {seed_text!r}") from None
    if rate == 0:
        return None
    return FaultPlan(seed * 1000 + stream, rate)


def install_from_environment(environ: Mapping[str, str], client: Any, stream: int, name: str) -> FaultPlan | None:
    """`from_environment`'s plan installed on `client` (the process's DynamoDB client), announced on stderr."""
    import sys

    plan = from_environment(environ, stream)
    if plan is not None:
        plan.install(client)
        print(
            f"{name}: injecting faults into its DynamoDB calls and job deliveries at rate {plan.rate} "
            f"({SEED_VARIABLE}={environ.get(SEED_VARIABLE) or 0})",
            file=sys.stderr,
            flush=True,
        )
    return plan


@contextmanager
def no_backoff() -> Iterator[None]:
    """botocore's retries without their sleeps (a simulation's throttles would otherwise sleep for real)."""
    from botocore.retries import standard

    delay: Callable[..., float] = standard.ExponentialBackoff.delay_amount
    standard.ExponentialBackoff.delay_amount = lambda self, context: 0  # type: ignore[method-assign]
    try:
        yield
    finally:
        standard.ExponentialBackoff.delay_amount = delay  # type: ignore[method-assign]


def _forward(event_name: str, request: Any) -> Any:
    """`request` sent on to the store: moto in process (its stubber, when a mock is on), else the endpoint
    over HTTP (`make run`'s moto server)."""
    from moto.core.models import botocore_stubber

    if botocore_stubber.enabled:
        answer = botocore_stubber(event_name=event_name, request=request)
        if answer is not None:
            return answer
    global _http
    if _http is None:
        from botocore.httpsession import URLLib3Session

        _http = URLLib3Session()  # a pool of connections shared by every thread, as a client's own
    return _http.send(request)


_http: Any = None


def _with_body(request: Any, body: bytes) -> Any:
    from botocore.awsrequest import AWSPreparedRequest

    headers = dict(request.headers.items())
    headers["Content-Length"] = str(len(body))
    return AWSPreparedRequest(
        method=request.method, url=request.url, headers=headers, body=body, stream_output=request.stream_output
    )


def _error_response(request: Any, code: str, message: str) -> Any:
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message}).encode()
    return _response(request, 400, body, {})


def _response(request: Any, status: int, body: bytes, headers: Any) -> Any:
    from botocore.awsrequest import AWSResponse
    from moto.core.botocore_stubber import MockRawResponse

    kept = {
        name: value for name, value in dict(headers).items() if name.lower() not in ("content-length", "x-amz-crc32")
    }
    kept.update(
        {
            "Content-Type": "application/x-amz-json-1.0",
            "Content-Length": str(len(body)),
            "x-amz-crc32": str(binascii.crc32(body) & 0xFFFFFFFF),
        }
    )
    return AWSResponse(request.url, status, kept, MockRawResponse(body))


def _timeout(request: Any) -> Exception:
    from botocore.exceptions import ReadTimeoutError

    return ReadTimeoutError(endpoint_url=request.url)
