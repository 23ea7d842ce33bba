"""Coverage's tracer off while the emulated AWS answers (`make test` measures line coverage of chalicelib).

On Python 3.11 coverage traces with sys.settrace: once a trace function is set, every frame of every module pays for
it (each instruction goes through the interpreter's tracing path), whether or not coverage records its lines. Most
of a test's CPU is botocore and moto answering a DynamoDB or S3 call (the ledger tests: ~90 %), none of it chalicelib,
and no chalicelib code runs once the request is made (moto's in-process DynamoDB and S3 call nothing of ours; our
own request serialiser, storage.clients.json_bodies, runs before it, traced). So the tracer is stopped from the
request's send (botocore's `_make_request`) to its answer and started again when it returns, and while the answer is
parsed (storage.clients reads DynamoDB's attribute values there): the lines coverage
records are the same (tests/architecture/test_untraced_aws_calls.py holds them to those recorded without this), at a
fraction of the cost.

Only coverage's C tracer is paused (`CTracer.stop()` clears a flag and the tracer takes itself off at its next event;
`start()` sets it again on this thread); under any other trace function (a debugger, coverage's Python tracer) the
calls run traced as before.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

UNTRACED_SERVICES = frozenset({"dynamodb", "s3"})
"""The emulated services whose calls run without coverage's tracer: moto answers them in this thread and calls back
into no code of ours. (Lambda is not among them: moto's invoke may run our tenant function's handler.)"""


def coverage_tracer() -> Any | None:
    """This thread's coverage C tracer, if coverage is measuring with it."""
    tracer = sys.gettrace()
    return tracer if type(tracer).__name__ == "CTracer" and type(tracer).__module__ == "coverage" else None


def _coverage_measures() -> bool:
    """Whether coverage measures this process: its tracer on now, or a `Coverage` started, or one paused for an
    untraced test (tests/support/coverage_scope.py)."""
    from tests.support.coverage_scope import coverage_measures

    return coverage_tracer() is not None or coverage_measures()


@contextmanager
def aws_calls_untraced() -> Iterator[None]:
    """While coverage measures this process: botocore's calls to UNTRACED_SERVICES run with its C tracer stopped
    (each call looks for the tracer: coverage may be paused when this is entered, tests/support/coverage_scope.py).
    Otherwise, or with PAS_TRACE_AWS_CALLS=1 (to compare), nothing."""
    if not _coverage_measures() or os.environ.get("PAS_TRACE_AWS_CALLS") == "1":
        yield
        return
    from botocore.client import BaseClient
    from botocore.parsers import ResponseParser

    original: Callable[..., Any] = BaseClient._make_request
    original_parse: Callable[..., Any] = ResponseParser.parse
    paused = threading.local()

    def _make_request(client: Any, operation_model: Any, request_dict: Any, request_context: Any) -> Any:
        tracer = coverage_tracer()
        if tracer is None or client.meta.service_model.service_name not in UNTRACED_SERVICES:
            return original(client, operation_model, request_dict, request_context)
        # the endpoint makes the answer's parser inside the call: made once here, traced, it records the lines
        # storage.clients runs to make it (the call's own is made untraced)
        client._endpoint._response_parser_factory.create_parser(client.meta.service_model.protocol)
        tracer.stop()
        paused.tracer = tracer
        try:
            return original(client, operation_model, request_dict, request_context)
        finally:
            paused.tracer = None
            tracer.start()

    def parse(parser: Any, response: Any, shape: Any) -> Any:
        """The answer's parsing traced again: storage.clients reads DynamoDB's attribute values in it."""
        tracer = getattr(paused, "tracer", None)
        if tracer is None:
            return original_parse(parser, response, shape)
        tracer.start()
        try:
            return original_parse(parser, response, shape)
        finally:
            tracer.stop()

    BaseClient._make_request = _make_request
    ResponseParser.parse = parse
    try:
        yield
    finally:
        BaseClient._make_request = original
        ResponseParser.parse = original_parse
