"""Every documents API test runs twice: with tenant code in the local sandbox, and on the `lambda` runner,
where the tenant's templates render (and its plugins run) in its tenant function, published by the
deployment's job in moto's Lambda and run by the local invoker in the sandbox (tests/plugins/lambda_mode.py).
The request and answer bytes are the same on both paths, so the same assertions hold."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.plugins.lambda_mode import lambda_runner


@pytest.fixture(params=["local", "lambda"], autouse=True)
def tenant_code_runner(request, monkeypatch, jobs) -> Iterator[str]:
    if request.param == "local":
        yield "local"
        return
    request.getfixturevalue("aws")
    with lambda_runner(monkeypatch, jobs):
        yield "lambda"
