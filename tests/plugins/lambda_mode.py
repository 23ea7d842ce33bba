"""Tenant code on the `lambda` runner in the tests: PAS_PLUGIN_RUNNER=lambda, moto's Lambda and IAM as the
control plane, and the local invoker (plugins/local_lambda.py) running the published code in the sandbox
(moto runs no code without docker). `eager_publishing` makes the tenantCode.publish job run as soon as its
deployment commits, as an idle worker would within a second (and leaves it out of the queue's records)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from chalicelib.documents import rendering
from chalicelib.plugins import service as plugins
from chalicelib.plugins.lambda_runner import LambdaRunner
from chalicelib.plugins.local_lambda import LocalLambda
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import InlineJobQueue, JobMessage, dispatch
from chalicelib.settings import reload, settings


@contextmanager
def lambda_runner(
    monkeypatch: pytest.MonkeyPatch, jobs: InlineJobQueue, *, eager_publishing: bool = True, **environment: str
) -> Iterator[LocalLambda]:
    """Everything tenant code does goes through the tenant function while this lasts; answers the invoker."""
    for name, value in {"PAS_PLUGIN_RUNNER": "lambda", **environment}.items():
        monkeypatch.setenv(name, value)
    reload()
    invoker = LocalLambda()
    plugins.use_runner(LambdaRunner(settings().plugin_function_name, invoke=invoker))
    rendering.use_tenant_function(invoker)
    if eager_publishing:
        send = jobs.send

        def publish_at_once(body: str) -> None:
            message = JobMessage.model_validate_json(body)
            if message.job_type == JobType.TENANT_CODE_PUBLISH:
                dispatch(message)  # not recorded: the tests count the jobs their own requests send
            else:
                send(body)

        monkeypatch.setattr(jobs, "send", publish_at_once)
    try:
        yield invoker
    finally:
        plugins.use_runner(None)
        rendering.use_tenant_function(None)
        invoker.close()
        for name in {"PAS_PLUGIN_RUNNER", *environment}:
            monkeypatch.delenv(name, raising=False)
        reload()


def lambda_client() -> Any:
    from chalicelib.storage import clients

    return clients.client("lambda")
