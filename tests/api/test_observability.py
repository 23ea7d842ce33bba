"""What an operator sees (chalicelib/runtime/observability.py): the EMF documents a request, an error answer, a
job, a render, a plugin call, an invoice and a payment write to stdout, the correlation id a request hands
down to its jobs and theirs, and the traces of the API, job and schedule functions without their answers."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, cast
from urllib.parse import urlencode

import pytest
from pydantic import BaseModel

from chalicelib.core.ids import new_locator
from chalicelib.runtime import jobs as job_runtime
from chalicelib.runtime import observability, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler
from tests.api.billing.support import billed_policy, billing, billing_tenant, invoices_of_account
from tests.api.documents.support import documents, documents_tenant
from tests.api.quotes.support import auto, create, new_account
from tests.api.transactions.support import UNKNOWN
from tests.builders import system_ctx
from tests.support.api import call, ok
from tests.support.configs import configured_tenant
from tests.support.schedules import invoke_schedule


def documents_of(output: str) -> list[dict[str, Any]]:
    """The EMF documents among the lines of `output`."""
    return [json.loads(line) for line in output.splitlines() if line.startswith('{"_aws"')]


def emitted(capsys, metric: str) -> list[dict[str, Any]]:
    """The EMF documents written to stdout since the last call that hold `metric`."""
    return [
        document
        for document in documents_of(capsys.readouterr().out)
        if metric in [m["Name"] for m in document["_aws"]["CloudWatchMetrics"][0]["Metrics"]]
    ]


def directive(document: dict[str, Any]) -> dict[str, Any]:
    (only,) = document["_aws"]["CloudWatchMetrics"]
    return only


def test_a_request_emits_its_count_and_latency_by_route_and_status_with_the_tenant_a_property(
    api, admin_token, tenant, capsys
):
    capsys.readouterr()
    response = call(api, "GET", f"/clock/{tenant}", admin_token)
    assert response.status_code == 200

    (document,) = emitted(capsys, "Requests")
    assert directive(document) == {
        "Namespace": "PAS",
        "Dimensions": [["route", "status", "service"], ["service", "status"]],
        "Metrics": [{"Name": "Requests", "Unit": "Count"}, {"Name": "Latency", "Unit": "Milliseconds"}],
    }
    assert (document["route"], document["status"], document["service"]) == ("GET /clock/{tenantLocator}", "200", "pas")
    assert document["Requests"] == [1.0] and document["Latency"][0] > 0
    # properties, searchable in the log, never dimensions: one metric per tenant would cost per tenant
    assert document["tenant"] == tenant
    assert document["correlation_id"] == response.headers["X-Request-Id"]
    assert document["operation"] == "fetch_clock"


def test_an_error_answer_emits_errors_by_route_and_code(api, admin_token, tenant, capsys):
    capsys.readouterr()
    missing = call(api, "GET", f"/policy/{tenant}/accounts/{UNKNOWN}", admin_token)
    refused = api.http.request("PATCH", f"/clock/{tenant}", headers={"Authorization": f"Bearer {admin_token}"})
    assert (missing.status_code, refused.status_code) == (404, 405)

    output = documents_of(capsys.readouterr().out)
    requests = [(d["route"], d["status"]) for d in output if "Requests" in d]
    assert requests == [
        ("GET /policy/{tenantLocator}/accounts/{locator}", "404"),
        ("PATCH /clock/{tenantLocator}", "405"),
    ]
    errors = [d for d in output if "Errors" in d]
    assert [directive(d)["Dimensions"] for d in errors] == [[["route", "code", "service"], ["service", "code"]]] * 2
    assert [(d["route"], d["code"], d["status"], d["Errors"]) for d in errors] == [
        ("GET /policy/{tenantLocator}/accounts/{locator}", "account.not_found", 404, [1.0]),
        ("PATCH /clock/{tenantLocator}", "request.method_not_allowed", 405, [1.0]),
    ]
    assert errors[0]["correlation_id"] == json.loads(missing.body)["requestId"] == missing.headers["X-Request-Id"]


def test_the_jobs_of_a_request_carry_its_id_as_their_correlation_id_and_emit_their_outcome(
    api, admin_token, jobs, capsys
):
    sandbox = configured_tenant(api, admin_token, test_clock=True)
    response = call(api, "POST", f"/clock/{sandbox}/advance", admin_token, {"to": "2026-06-01T00:00:00Z"})
    request_id = response.headers["X-Request-Id"]
    capsys.readouterr()

    jobs.drain()

    assert {message.correlation_id for message in jobs.sent} == {request_id}
    (document,) = emitted(capsys, "Jobs")
    assert directive(document) == {
        "Namespace": "PAS",
        "Dimensions": [["jobType", "outcome", "service"], ["service", "outcome"]],
        "Metrics": [{"Name": "Jobs", "Unit": "Count"}, {"Name": "JobDuration", "Unit": "Milliseconds"}],
    }
    assert (document["jobType"], document["outcome"], document["Jobs"]) == (JobType.CLOCK_ADVANCE, "finished", [1.0])
    assert document["correlation_id"] == request_id
    assert document["tenant"] == sandbox and document["job_locator"] == jobs.sent[0].job_locator
    assert document["JobDuration"][0] > 0


RELAY = cast(JobType, "test.observability.relay")  # a job type of this test alone


class Relay(BaseModel):
    hop: int
    fail: bool = False


@job_handler(RELAY, payload=Relay)
def relay(ctx, payload: Relay):
    """Logs a line, and enqueues the next hop until the third; `fail`: refuses (a permanent failure)."""
    observability.logger().info("relaying", extra={"hop": payload.hop})
    if payload.fail:
        from chalicelib.core import codes

        raise codes.JOB_INVALID_PAYLOAD("this hop refuses")
    if payload.hop < 3:
        job_runtime.enqueue_once(ctx, RELAY, Relay(hop=payload.hop + 1), locator=new_locator())
    return {"hop": payload.hop}


def test_every_log_line_of_a_job_and_of_the_jobs_it_enqueues_carries_the_originating_correlation_id(
    tenant, jobs, capsys
):
    origin = new_locator()
    with observability.invocation(origin):
        uow = wiring.unit_of_work(_with_request_id(tenant, origin))
        job_runtime.enqueue(uow, RELAY, Relay(hop=1))
        uow.commit()
    capsys.readouterr()

    assert jobs.drain() == 3

    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    logged = [line for line in lines if line.get("message") == "relaying"]
    assert [(line["hop"], line["correlation_id"], line["tenant"], line["job_type"]) for line in logged] == [
        (1, origin, tenant, RELAY),
        (2, origin, tenant, RELAY),
        (3, origin, tenant, RELAY),
    ]
    assert [(d["outcome"], d["correlation_id"]) for d in lines if "Jobs" in d] == [("finished", origin)] * 3
    assert observability.correlation_id() is None  # nothing stays behind once the invocation is over


def _with_request_id(tenant: str, request_id: str):
    from chalicelib.core.context import SYSTEM, CallContext

    return CallContext(principal=SYSTEM, request_id=request_id, now=wiring.clock().now(), tenant_locator=tenant)


def test_a_job_that_fails_emits_its_failure_for_the_job_failures_alarm(tenant, jobs, capsys):
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    job_runtime.enqueue(uow, RELAY, Relay(hop=1, fail=True))
    uow.commit()
    capsys.readouterr()

    jobs.drain()

    (document,) = emitted(capsys, "Jobs")
    # the alarm watches Jobs under (service, outcome=failed), whatever the job type (infra/template.json)
    assert ["service", "outcome"] in directive(document)["Dimensions"]
    assert (document["outcome"], document["service"], document["jobType"]) == ("failed", "pas", RELAY)


def test_renders_emit_their_engine_format_outcome_and_duration(api, admin_token, jobs, capsys):
    tenant = documents_tenant(api, admin_token)
    quote = create(api, admin_token, tenant, auto(new_account(api, admin_token, tenant)))
    reference = {"referenceType": "quote", "referenceLocator": quote["locator"]}
    capsys.readouterr()

    rendered = call(
        api,
        "POST",
        documents(tenant, f"/render?{urlencode({**reference, 'templateFormat': 'liquid'})}"),
        admin_token,
        {"template": "<b>{{ account.data.lastName }}</b>"},
    )
    broken = call(
        api, "POST", documents(tenant, f"/render?{urlencode(reference)}"), admin_token, {"template": "{% for %}"}
    )
    assert (rendered.status_code, broken.status_code) == (200, 400)

    renders = emitted(capsys, "Renders")
    assert [directive(d)["Metrics"] for d in renders] == [
        [{"Name": "Renders", "Unit": "Count"}, {"Name": "RenderDuration", "Unit": "Milliseconds"}]
    ] * 2
    assert [(d["engine"], d["format"], d["outcome"], d["tenant"]) for d in renders] == [
        ("liquid", "html", "ok", tenant),
        ("liquid", "html", "render_failed", tenant),
    ]
    assert [d["correlation_id"] for d in renders] == [rendered.headers["X-Request-Id"], broken.headers["X-Request-Id"]]
    assert all(d["RenderDuration"][0] > 0 for d in renders)


def test_plugin_calls_emit_their_kind_outcome_and_duration(api, admin_token, capsys):
    from chalicelib.plugins import service
    from chalicelib.plugins.local import Limits, LocalProcessRunner
    from chalicelib.plugins.models import PluginFailure
    from tests.plugins.conftest import FakeHost
    from tests.plugins.support import deployed, request

    source = (
        b"def validate(request):\n    return {'errors': []}\n\ndef underwrite_Auto(request):\n    raise ValueError()\n"
    )
    ctx, version = deployed(api, admin_token, {"plugins/python/auto.py": source})
    runner = LocalProcessRunner(Limits(timeout_seconds=2))
    service.use_runner(runner)
    try:
        capsys.readouterr()
        with observability.invocation("plugin-test", tenant=ctx.tenant):
            assert service.validate(ctx, version, request(ctx.tenant, "1HG"), FakeHost()) == []
            with pytest.raises(PluginFailure):
                service.underwrite(ctx, version, request(ctx.tenant, "1HG"), FakeHost())
    finally:
        service.use_runner(None)
        runner.close()

    calls = emitted(capsys, "PluginCalls")
    assert [directive(d)["Dimensions"] for d in calls] == [[["kind", "outcome", "service"]]] * 2
    assert [(d["kind"], d["outcome"], d["function"], d["version"], d["tenant"]) for d in calls] == [
        ("validate", "ok", "validate", version, ctx.tenant),
        ("underwrite", "failed", "underwrite_Auto", version, ctx.tenant),
    ]
    assert calls[1]["reason"] == "exception" and all(d["PluginCallDuration"][0] > 0 for d in calls)


def test_an_invoice_generated_and_a_payment_posted_are_counted(api, admin_token, jobs, capsys):
    tenant = billing_tenant(api, admin_token, "FullPay")
    capsys.readouterr()
    account, _ = billed_policy(api, admin_token, tenant, jobs)
    [invoice] = invoices_of_account(api, admin_token, tenant, account)

    (generated,) = emitted(capsys, "InvoicesGenerated")
    assert (generated["currency"], generated["tenant"], generated["invoice_locator"]) == (
        "USD",
        tenant,
        invoice["locator"],
    )
    payment = ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            admin_token,
            {"accountLocator": account, "type": "check", "amount": 1225, "data": {"checkNumber": "1"}},
        )
    )
    capsys.readouterr()
    posted = call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/post"), admin_token)
    assert ok(posted)["paymentState"] == "posted"

    (counted,) = emitted(capsys, "PaymentsPosted")
    assert directive(counted)["Dimensions"] == [["currency", "service"]]
    assert (counted["PaymentsPosted"], counted["payment_locator"], counted["correlation_id"]) == (
        [1.0],
        payment["locator"],
        posted.headers["X-Request-Id"],
    )


# --- traces --------------------------------------------------------------------------------------------------


class Subsegment:
    def __init__(self, name: str):
        self.name = name
        self.annotations: dict[str, Any] = {}
        self.metadata: dict[str, Any] = {}

    def put_annotation(self, key: str, value: Any) -> None:
        self.annotations[key] = value

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        self.metadata[key] = value

    def add_exception(self, exception: BaseException, stack: Any, remote: bool = False) -> None:
        self.metadata["exception"] = exception


class Recording:
    """A Tracer provider that keeps the subsegments it was asked for (the X-Ray SDK's in Lambda)."""

    def __init__(self) -> None:
        self.subsegments: list[Subsegment] = []
        self.current: list[Subsegment] = []

    @contextmanager
    def in_subsegment(self, name: str | None = None, **kwargs: Any):
        segment = Subsegment(name or "")
        self.subsegments.append(segment)
        self.current.append(segment)
        try:
            yield segment
        finally:
            self.current.pop()

    def put_annotation(self, key: str, value: Any) -> None:
        self.current[-1].put_annotation(key, value)

    def put_metadata(self, key: str, value: Any, namespace: str = "default") -> None:
        self.current[-1].put_metadata(key, value, namespace)

    def patch(self, modules: Any) -> None:
        pass

    def patch_all(self) -> None:
        pass


@pytest.fixture
def traces():
    from aws_lambda_powertools import Tracer

    Tracer._reset_config()
    recording = Recording()
    observability.use_tracer(Tracer(service="pas", disabled=False, auto_patch=False, provider=recording))
    yield recording
    Tracer._reset_config()
    observability.use_tracer(None)


def test_the_api_job_and_schedule_functions_are_traced_without_their_answers(
    api, admin_token, tenant, jobs, traces, monkeypatch
):
    from chalicelib.workers import schedules

    monkeypatch.setattr(schedules, "TENANTS_PER_STEP", 1)  # the schedule's first page: one tenant's job
    assert call(api, "GET", f"/clock/{tenant}", admin_token).status_code == 200
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    job_runtime.enqueue(uow, RELAY, Relay(hop=3))
    uow.commit()
    (body,) = jobs.messages
    jobs.messages.clear()
    api.lambda_.invoke("run_job", api.events.generate_sqs_event(message_bodies=[body], queue_name="pas-jobs"))
    invoke_schedule(api, "reap_jobs")

    assert [s.name for s in traces.subsegments] == ["## api_handler", "## run_job", "## reap_jobs"]
    api_trace = traces.subsegments[0]
    assert api_trace.annotations == {
        "route": "GET /clock/{tenantLocator}",
        "ColdStart": api_trace.annotations["ColdStart"],
        "Service": "pas",
    }
    # the answers hold tenants' data: never in a trace
    assert all(not any(key.endswith("response") for key in s.metadata) for s in traces.subsegments)
    assert job_runtime.get_job(tenant, jobs.sent[0].job_locator)["status"] == "finished"
