"""A render in the tenant function (documents/rendering.py, `PAS_PLUGIN_RUNNER=lambda`) when the function does not
answer as the renderer does: each case is the document's failure the tenant reads, or 503 `tenantCode.not_ready`
before the version's code is live. The invoker is a stand-in answering what Lambda would (no process started)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.core import codes
from chalicelib.core.errors import Unavailable
from chalicelib.documents import rendering
from chalicelib.storage.functions import Invocation


class Function:
    def __init__(self) -> None:
        self.answer: Invocation | BaseException = Invocation(b"{}", None)
        self.calls: list[tuple[str, dict[str, Any], str | None]] = []

    def __call__(self, name: str, payload: bytes, qualifier: str | None) -> Invocation:
        self.calls.append((name, json.loads(payload), qualifier))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


@pytest.fixture
def function() -> Iterator[Function]:
    stand_in = Function()
    rendering.use_tenant_function(stand_in)
    yield stand_in
    rendering.use_tenant_function(None)


def render(**options: Any) -> rendering.Rendered | rendering.RenderFailed:
    return rendering.render(
        "liquid", "<p>{{ name }}</p>", {"name": "Ada"}, "html", tenant="t1", version="v7", **options
    )


def test_the_renderers_answer_comes_back_from_the_versions_alias(function):
    function.answer = Invocation(json.dumps({"render": json.dumps({"text": "<p>Ada</p>"})}).encode(), None)

    assert render(fonts={"Body": b"ttf"}) == rendering.Rendered(b"<p>Ada</p>", "text/html; charset=utf-8")
    ((name, event, qualifier),) = function.calls
    assert (name, qualifier, event["files"]) == ("pas-tenant-t1", "v7", {"plugins/fonts/Body.ttf": "dHRm"})
    assert json.loads(event["render"])["fonts"] == {"Body": "/sandbox/plugins/fonts/Body.ttf"}


@pytest.mark.parametrize(
    "answer, failure",
    [
        (
            Invocation(b'{"errorMessage": "2026-01-15 Task timed out after 30.00 seconds"}', "Unhandled"),
            "rendering took longer than the tenant function's timeout (2026-01-15 Task timed out after 30.00 seconds)",
        ),
        (
            Invocation(b'{"errorType": "Runtime.OutOfMemory"}', "Unhandled"),
            "the tenant function failed: Runtime.OutOfMemory",
        ),
        (Invocation(b"not json", "Unhandled"), "the tenant function failed: no detail"),
        (
            Invocation(b'{"render": "{not the protocol"}', None),
            "the tenant function answered outside the renderer's protocol",
        ),
        (Invocation(b'{"imports": "[]"}', None), "the tenant function answered outside the renderer's protocol"),
        (Invocation(b'{"render": "[1]"}', None), "the tenant function answered outside the renderer's protocol"),
        (Invocation(b" " * 300_000, None), "the renderer's answer is larger than 204096 bytes"),
        (
            Invocation(json.dumps({"render": json.dumps({"error": {"stage": "conversion"}})}).encode(), None),
            "the conversion failed",
        ),
    ],
)
def test_an_answer_outside_the_protocol_is_the_documents_failure(function, answer, failure):
    function.answer = answer

    result = render(limits=rendering.Limits(max_output_bytes=100_000))

    assert isinstance(result, rendering.RenderFailed) and result.message == failure


def test_a_render_larger_than_one_invocation_fails_before_the_call(function):
    result = render(fonts={"Huge": b"\0" * (5 * rendering.MB)})

    assert result == rendering.RenderFailed(
        "render", "the template, its data and fonts are larger than the tenant function takes in one call (6 MB)"
    )
    assert function.calls == []


def test_a_version_whose_code_is_not_published_is_503_not_ready(function):
    function.answer = codes.not_found("plugin_function", "pas-tenant-t1:v7")  # as storage/functions.py raises it

    with pytest.raises(Unavailable) as raised:
        render()

    assert raised.value.code == "tenantCode.not_ready"
    assert raised.value.message == (
        "The tenant function pas-tenant-t1 has no code for configuration v7: its deployment is publishing it, "
        "or failed to (GET /config/{tenantLocator}/deployments says which)"
    )
