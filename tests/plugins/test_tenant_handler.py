"""The tenant function's handler (plugins/tenant_handler.py) gets, for a render, byte for byte the request the
local renderer reads on its stdin, and answers byte for byte what the local renderer writes on its stdout;
run here by the local invoker in the sandbox from the function's own package (tenant_code.package)."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import reportlab
from pypdf import PdfReader

from chalicelib.core.errors import DomainError
from chalicelib.documents import rendering
from chalicelib.plugins import tenant_code
from chalicelib.plugins.local_lambda import LocalLambda
from chalicelib.plugins.repository import Invocation

VERA = (Path(reportlab.__file__).parent / "fonts" / "Vera.ttf").read_bytes()
DATA = {"name": "Ada", "premium": Decimal("1200.10"), "items": [{"n": 1}, {"n": 2}]}


class Recorded:
    """The two paths' bytes: what the local renderer read and wrote, what the tenant function got and said."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.local_requests: list[bytes] = []
        self.local_answers: list[bytes] = []
        self.events: list[dict[str, Any]] = []
        self.function_answers: list[bytes] = []
        self.qualifiers: list[tuple[str, str | None]] = []
        run, answer = rendering._run, rendering._answer

        def recorded_run(request: bytes, files: Any, limits: Any) -> Any:
            self.local_requests.append(request)
            return run(request, files, limits)

        def recorded_answer(process: Any, output: bytes) -> Any:
            self.local_answers.append(output)
            return answer(process, output)

        monkeypatch.setattr(rendering, "_run", recorded_run)
        monkeypatch.setattr(rendering, "_answer", recorded_answer)
        self.invoker = LocalLambda()
        self.folder = self.invoker._unzip(tenant_code.package({}))
        rendering.use_tenant_function(self)

    def __call__(self, function_name: str, payload: bytes, qualifier: str | None) -> Invocation:
        self.qualifiers.append((function_name, qualifier))
        self.events.append(json.loads(payload))
        invocation = LocalLambda._run(self.folder, payload, tenant_code.MEMORY_MB, tenant_code.TIMEOUT_SECONDS)
        if invocation.function_error is None:
            self.function_answers.append(json.loads(invocation.payload)["render"].encode())
        return invocation


@pytest.fixture
def recorded(monkeypatch):
    paths = Recorded(monkeypatch)
    yield paths
    rendering.use_tenant_function(None)
    paths.invoker.close()


@pytest.mark.parametrize(
    "engine, template, output_format",
    [
        ("liquid", "<p>{{ data.name }} {{ premium }}{% for i in items %} {{ i.n }}{% endfor %}</p>", "html"),
        ("velocity", "$name #foreach($i in $items)$i.n #end$premium", "text"),
        ("liquid", "{% for %}", "html"),
    ],
)
def test_a_render_is_the_same_bytes_in_the_sandbox_and_in_the_tenant_function(
    recorded, engine, template, output_format
):
    local = rendering.render(engine, template, DATA, output_format)
    remote = rendering.render(engine, template, DATA, output_format, tenant="t-1", version="01JVERSION")

    assert remote == local
    [request] = recorded.local_requests  # what follows the local renderer's setup line (its seccomp filter)
    [event] = recorded.events
    assert event == {"render": request.decode(), "files": {}}
    assert recorded.function_answers == recorded.local_answers
    assert recorded.qualifiers == [("pas-tenant-t-1", "01JVERSION")]


def test_a_pdf_with_a_custom_font_renders_alike_in_both(recorded):
    template = '<p style="font-family: Brand">Dear {{ name }}</p>'

    local = rendering.render("liquid", template, DATA, "pdf", fonts={"Brand": VERA})
    remote = rendering.render("liquid", template, DATA, "pdf", fonts={"Brand": VERA}, tenant="t-1", version="01JV")

    [event] = recorded.events
    assert [event["render"].encode()] == recorded.local_requests
    assert list(event["files"]) == ["plugins/fonts/Brand.ttf"]
    texts, fonts = [], []
    for rendered in (local, remote):
        assert isinstance(rendered, rendering.Rendered) and rendered.media_type == "application/pdf"
        page = PdfReader(io.BytesIO(rendered.content)).pages[0]
        texts.append(page.extract_text().strip())
        fonts.append(sorted(str(font["/BaseFont"]).split("+")[-1] for font in page["/Resources"]["/Font"].values()))
    assert texts == ["Dear Ada", "Dear Ada"] and fonts[0] == fonts[1] and "BitstreamVeraSans-Roman" in fonts[0]


def test_a_request_over_lambdas_limit_fails_the_render_without_an_invocation(recorded):
    result = rendering.render(
        "liquid", "x", {"blob": "x" * (rendering.MAX_INVOKE_BYTES + 1)}, "html", tenant="t", version="v"
    )

    assert isinstance(result, rendering.RenderFailed)
    assert (
        result.message == "the template, its data and fonts are larger than the tenant function takes in one "
        "call (6 MB)"
    )
    assert recorded.events == []


def test_a_render_before_the_versions_code_is_live_is_not_ready():
    from chalicelib.core import codes

    def no_alias(*_: Any) -> Invocation:
        raise codes.not_found("plugin_function", "pas-tenant-t:v")

    rendering.use_tenant_function(no_alias)
    try:
        with pytest.raises(DomainError) as not_ready:
            rendering.render("liquid", "x", {}, "html", tenant="t", version="01JV")
    finally:
        rendering.use_tenant_function(None)
    assert (not_ready.value.code, not_ready.value.status) == ("tenantCode.not_ready", 503)


def test_a_function_error_is_a_render_failure(recorded):
    rendering.use_tenant_function(
        lambda *_: Invocation(
            json.dumps(
                {
                    "errorType": "Function.ResponseSizeTooLarge",
                    "errorMessage": "Response payload size exceeded maximum allowed payload size (6291556 bytes).",
                }
            ).encode(),
            "Unhandled",
        )
    )

    result = rendering.render("liquid", "x", {}, "html", tenant="t", version="01JV")

    assert result == rendering.RenderFailed(
        "render",
        "the tenant function failed: Response payload size exceeded maximum allowed payload size (6291556 bytes).",
    )
