"""Warm renderers (documents/rendering.py WarmRenderers, issue 28 point 4): started ahead of their request with
the libraries imported, each renders exactly one document and is then discarded (never a second render in
the same process), a render that needs what a waiting one lacks (its fonts on the disk) starts its own, and
closing leaves no process and no disk behind. Off in every other test (settings: none on the test stage)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import reportlab

from chalicelib.documents import rendering
from chalicelib.documents.rendering import Rendered
from chalicelib.settings import Settings

VERA = (Path(reportlab.__file__).parent / "fonts" / "Vera.ttf").read_bytes()


@pytest.fixture
def warm() -> Iterator[rendering.WarmRenderers]:
    pool = rendering.use_warm_renderers(1)
    try:
        yield pool
    finally:
        rendering.use_warm_renderers(None)


def waiting(pool: rendering.WarmRenderers, within: float = 30) -> list[int]:
    """The process ids of the renderers waiting, once `pool.size` of them are (waiting at most `within` s)."""
    deadline = time.monotonic() + within
    while pool.waiting() < pool.size and time.monotonic() < deadline:
        time.sleep(0.05)
    return [renderer.process.pid for renderer in pool._ready]


def test_the_pool_is_off_on_the_test_stage_and_on_the_lambda_runner():
    assert rendering.use_warm_renderers(None).size == 0
    assert [
        Settings(stage="dev").warm_renderers,
        Settings(stage="dev", plugin_runner="lambda").warm_renderers,
        Settings(stage="test", warm_renderers=1).warm_renderers,
    ] == [2, 0, 1]


def test_each_warm_renderer_renders_one_document_and_is_discarded(warm):
    warm.fill()
    seen = []
    for number in range(3):
        (pid,) = waiting(warm)
        renderer = warm._ready[0]
        result = rendering.render("liquid", "<p>Render {{ n }}</p>", {"n": number}, "html")
        assert result == Rendered(f"<p>Render {number}</p>".encode(), "text/html; charset=utf-8")
        assert renderer.process.poll() is not None  # it rendered this one and ended
        assert not os.path.exists(renderer.disk.folder)  # its disk is gone
        seen.append(pid)
    assert len(set(seen)) == 3  # never the same process twice
    pdf = rendering.render("velocity", "<p>$n</p>", {"n": 7}, "pdf")
    assert isinstance(pdf, Rendered) and pdf.content.startswith(b"%PDF-")


def test_a_renderer_taken_before_it_is_warm_answers_as_any_other(warm):
    warm.fill()  # and at once, while it imports its libraries
    assert rendering.render("liquid", "<b>{{ x }}</b>", {"x": "now"}, "html") == Rendered(
        b"<b>now</b>", "text/html; charset=utf-8"
    )


def test_a_render_with_fonts_starts_its_own_and_leaves_the_waiting_one(warm):
    warm.fill()
    (pid,) = waiting(warm)
    result = rendering.render("liquid", '<p style="font-family: Brand">x</p>', {}, "pdf", fonts={"Brand": VERA})
    assert isinstance(result, Rendered) and result.content.startswith(b"%PDF-")
    assert [renderer.process.pid for renderer in warm._ready] == [pid]


def test_closing_leaves_no_process_and_no_disk(warm):
    warm.fill()
    waiting(warm)
    (renderer,) = warm._ready
    warm.close()
    assert renderer.process.poll() is not None and not os.path.exists(renderer.disk.folder)
    warm.fill()
    assert warm._ready == [] and warm._starting == 0  # a closed pool starts nothing
    assert rendering.render("liquid", "{{ 1 }}", {}, "text") == Rendered(b"1", "text/plain; charset=utf-8")
