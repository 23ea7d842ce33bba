"""LambdaRunner: the replay protocol against the real plugin handler (child.lambda_handler, run in a
fresh process per invocation as a Lambda environment would), function errors, and the storage
invoke call against a stubbed Lambda client."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest

from chalicelib.core import codes
from chalicelib.core.errors import NotFound, Unavailable
from chalicelib.plugins.lambda_runner import LambdaRunner
from chalicelib.plugins.local import CHILD
from chalicelib.plugins.models import PluginFailure
from tests.plugins.conftest import FakeHost, modules

RATING = """
import pas

def rate(request):
    try:
        pas.lookup("Missing", ["x"])
    except Exception:
        pass  # swallowing whatever pas raises must not fool the replay
    rate = pas.lookup("Rates", [request["static"]["class"]])["rate"]
    factor = pas.range_lookup("Bands", ["NY"], request["static"]["age"])["factor"]
    return {"premium": rate * factor, "at": pas.now().isoformat()}

def fails(request):
    raise ValueError("no rate for " + request["static"]["class"])
"""


@dataclass
class Answer:
    payload: bytes
    function_error: str | None


class FakeLambda:
    """Plays the per-tenant functions: each invocation runs child.lambda_handler in a new process
    whose task root holds the function's plugin files."""

    def __init__(self, root: Path, files: dict[str, bytes]):
        self.root = root
        self.invocations: list[tuple[str, str | None]] = []
        for path, content in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(content)

    def __call__(self, function_name: str, payload: bytes, qualifier: str | None) -> Answer:
        self.invocations.append((function_name, qualifier))
        script = (
            f"import sys, json; sys.path.insert(0, {str(CHILD.parent)!r}); import child; "
            "print(json.dumps(child.lambda_handler(json.loads(sys.stdin.read()), None)))"
        )
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", script],
            input=payload,
            capture_output=True,
            env={"LAMBDA_TASK_ROOT": str(self.root)},
            timeout=30,
        )
        if done.returncode:
            error = {"errorType": "Runtime.ExitError", "errorMessage": done.stderr.decode()[-300:]}
            return Answer(json.dumps(error).encode(), "Unhandled")
        return Answer(done.stdout, None)


@pytest.fixture
def host() -> FakeHost:
    return FakeHost(
        tables={"Rates": {("sedan",): {"rate": Decimal("812.40")}}},
        ranges={"Bands": [(("NY",), Decimal(0), Decimal(25), {"factor": Decimal("1.35")})]},
    )


def test_pas_calls_are_answered_by_replaying_the_plugin_with_the_answers_so_far(tmp_path, host, tenant, version):
    function = FakeLambda(tmp_path, modules(rating=RATING))
    runner = LambdaRunner("pas-tenant-{tenant}", invoke=function)

    result = runner.call(tenant, version, {}, "rate", {"static": {"class": "sedan", "age": 19}}, host)

    assert result == {"premium": Decimal("1096.7400"), "at": "2026-01-15T09:30:00+00:00"}
    assert function.invocations == [(f"pas-tenant-{tenant}", version)] * 4
    assert [call[:2] for call in host.calls] == [("lookup", "Missing"), ("lookup", "Rates"), ("range_lookup", "Bands")]


BATCHED = """
import pas

def rate(request):
    rows = pas.lookups("Rates", [[kind] for kind in request["kinds"]])
    return {"rates": [row["rate"] if row else None for row in rows]}
"""


def test_lookups_asked_together_are_answered_in_one_replay(tmp_path, tenant, version):
    host = FakeHost(tables={"Rates": {("sedan",): {"rate": Decimal("812.40")}, ("van",): {"rate": Decimal(900)}}})
    function = FakeLambda(tmp_path, modules(rating=BATCHED))
    runner = LambdaRunner("pas-tenant-{tenant}", invoke=function)

    result = runner.call(tenant, version, {}, "rate", {"kinds": ["sedan", "boat", "van"]}, host)

    assert result == {"rates": [Decimal("812.40"), None, 900]}
    assert len(function.invocations) == 2
    assert [call[2] for call in host.calls] == [("sedan",), ("boat",), ("van",)]


def test_a_plugin_exception_in_the_function_is_a_plugin_failure(tmp_path, host, tenant, version):
    runner = LambdaRunner("pas-tenant-{tenant}", invoke=FakeLambda(tmp_path, modules(rating=RATING)))

    result = runner.call(tenant, version, {}, "fails", {"static": {"class": "boat"}}, host)

    assert isinstance(result, PluginFailure)
    assert result.message == (
        "The plugin function fails failed: ValueError: no rate for boat (plugins/python/rating.py line 14)"
    )


@pytest.mark.parametrize(
    "error, reason, detail",
    [
        (
            {"errorMessage": "2026-01-15T09:30:00Z Task timed out after 5.00 seconds"},
            "timeout",
            "its Lambda function timed out (2026-01-15T09:30:00Z Task timed out after 5.00 seconds)",
        ),
        (
            {"errorType": "Runtime.OutOfMemory", "errorMessage": "Runtime exited with error: signal: killed"},
            "memory_limit",
            "its Lambda function ran out of memory (Runtime exited with error: signal: killed)",
        ),
        (
            {"errorType": "Runtime.ImportModuleError"},
            "crashed",
            "its Lambda function failed: Runtime.ImportModuleError",
        ),
    ],
)
def test_a_failed_invocation_says_how_the_function_failed(host, tenant, version, error, reason, detail):
    runner = LambdaRunner("f-{tenant}", invoke=lambda *_: Answer(json.dumps(error).encode(), "Unhandled"))

    result = runner.call(tenant, version, {}, "rate", {}, host)

    assert (result.reason, result.detail) == (reason, detail)


def test_a_function_not_deployed_for_the_version_is_not_ready_yet(host, tenant, version):
    """No alias for the version (its deployment's publish job has not run, or failed): 503, never another
    version's code."""
    asked = []

    def missing(name, payload, qualifier):
        asked.append((name, qualifier))
        raise codes.not_found("plugin_function", "x")

    with pytest.raises(Unavailable) as not_ready:
        LambdaRunner("pas-tenant-{tenant}", invoke=missing).call(tenant, version, {}, "rate", {}, host)

    assert (not_ready.value.code, not_ready.value.status) == ("tenantCode.not_ready", 503)
    assert f"pas-tenant-{tenant}" in not_ready.value.message and version in not_ready.value.message
    assert asked == [(f"pas-tenant-{tenant}", version)]


def test_the_wall_clock_holds_over_the_replays_of_one_call(host, tenant, version):
    def slow(*_):
        import time

        time.sleep(0.06)
        return Answer(
            json.dumps({"message": '{"need": [{"pas": "lookup", "table": "Rates", "key": ["sedan"]}]}'}).encode(), None
        )

    result = LambdaRunner("f-{tenant}", invoke=slow, timeout_seconds=0.1).call(tenant, version, {}, "rate", {}, host)

    assert (result.reason, result.detail) == ("timeout", "it ran longer than 0.1 s (wall clock)")


def test_an_answer_outside_the_protocol_is_malformed(host, tenant, version):
    runner = LambdaRunner("f-{tenant}", invoke=lambda *_: Answer(b'"hello"', None))

    result = runner.call(tenant, version, {}, "rate", {}, host)

    assert (result.reason, result.detail) == ("malformed", "the plugin function answered outside the plugin protocol")


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    "payload, function_error, reason, detail",
    [
        (DEEP, None, "malformed", "the plugin function answered outside the plugin protocol"),
        (DEEP, "Unhandled", "crashed", "its Lambda function failed: no detail"),
        (
            json.dumps({"message": '{"result": {"x": ' + "[" * 40 + "]" * 40 + "}}"}).encode(),
            None,
            "malformed",
            "it sent JSON nested more than 32 deep",
        ),
        (
            json.dumps({"message": '{"result": {"x": 1E+999999}}'}).encode(),
            None,
            "malformed",
            "it sent the number 1.000000E+999999, which DynamoDB cannot store (at most 38 significant digits, between "
            "1E-130 and 9.9E+125 in size)",
        ),
        (
            b'{"errorMessage": "\\ud800 went wrong"}',
            "Unhandled",
            "crashed",
            "its Lambda function failed: \\ud800 went wrong",
        ),
    ],
)
def test_a_hostile_payload_is_a_plugin_failure(host, tenant, version, payload, function_error, reason, detail):
    runner = LambdaRunner("f-{tenant}", invoke=lambda *_: Answer(payload, function_error))

    result = runner.call(tenant, version, {}, "rate", {}, host)

    assert (result.reason, result.detail) == (reason, detail)


# --- storage.functions.invoke --------------------------------------------------------------------


@pytest.fixture
def stubbed_lambda(aws):
    from botocore.stub import Stubber

    from chalicelib.storage import functions

    with Stubber(functions.lambda_client()) as stubber:
        yield stubber


def test_invoke_sends_the_payload_to_the_qualified_function(stubbed_lambda):
    from botocore.response import StreamingBody

    from chalicelib.storage import functions

    body = b'{"message": "{}"}'
    stubbed_lambda.add_response(
        "invoke",
        {"StatusCode": 200, "Payload": StreamingBody(io.BytesIO(body), len(body))},
        {
            "FunctionName": "pas-tenant-t",
            "InvocationType": "RequestResponse",
            "Payload": b"{}",
            "Qualifier": "01JAAAAAAAAAAAAAAAAAAAAAAA",
        },
    )

    invocation = functions.invoke("pas-tenant-t", b"{}", "01JAAAAAAAAAAAAAAAAAAAAAAA")

    assert (invocation.payload, invocation.function_error) == (body, None)


@pytest.mark.parametrize(
    "code, error", [("ResourceNotFoundException", NotFound), ("TooManyRequestsException", Unavailable)]
)
def test_invoke_turns_lambda_errors_into_domain_errors(stubbed_lambda, code, error):
    from chalicelib.storage import functions

    stubbed_lambda.add_client_error("invoke", service_error_code=code, http_status_code=404)

    with pytest.raises(error):
        functions.invoke("pas-tenant-t", b"{}", None)


def test_invocations_wait_for_the_function_and_are_never_sent_twice_by_the_client(aws):
    from chalicelib.storage import clients, functions

    config = functions.lambda_client().meta.config
    assert config.read_timeout == functions.INVOKE_READ_TIMEOUT_SECONDS > 20  # the tenant function's timeout
    assert config.retries["total_max_attempts"] == 1  # the first attempt only
    assert clients.client("lambda").meta.config.read_timeout == 10  # the control plane's client is the usual one
