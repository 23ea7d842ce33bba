"""Test clocks through the API (chalicelib/clock): moving a tenant's test clock forward, for every test that
travels in time."""

from __future__ import annotations

from typing import Any

from tests.support.api import call, ok


def request_advance(api: Any, token: str, tenant: str, to: str) -> Any:
    """`POST /clock/{tenant}/advance` to `to`: the response, whatever it is (the advance itself runs as its jobs
    are drained)."""
    return call(api, "POST", f"/clock/{tenant}/advance", token, {"to": to})


def advance(api: Any, token: str, tenant: str, jobs: Any, to: str) -> Any:
    """Advances the tenant's test clock to `to` and runs the advance to its end (`jobs`, the InlineJobQueue,
    drained: every due entry up to `to` at its own time, and the jobs they enqueue); checks the clock ready at
    `to`'s side again. Answers the advance's response (its request id names the events of the work it ran)."""
    response = request_advance(api, token, tenant, to)
    ok(response)
    jobs.drain()
    assert ok(call(api, "GET", f"/clock/{tenant}", token))["status"] == "ready"
    return response
