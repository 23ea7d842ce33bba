"""The tenant function's handler (plugins/tenant_handler.py) called in this process on the three events it gets:
a render (the custom fonts written to a scratch disk the request then names, nothing outside plugins/ written),
a plugin call by the replay protocol, the publish job's import check. Its package imports the plugin child and the
renderer as top-level modules (`child`, `render_child`): here they are the service's own files. The script's local
serving (its user, limits and channel) runs only in the sandbox: tests/plugins/test_tenant_handler.py."""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chalicelib.documents import render_child
from chalicelib.plugins import child, tenant_handler

LIMITS = {"max_output_bytes": 10_000}


@pytest.fixture
def package(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    before = set(sys.modules)
    monkeypatch.setitem(sys.modules, "child", child)
    monkeypatch.setitem(sys.modules, "render_child", render_child)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(child, "_lambda_plugins", None)
    monkeypatch.setattr(child, "_pas_for_lambda", child._Pas())
    monkeypatch.setitem(sys.modules, "pas", sys.modules.get("pas"))
    yield
    for name in set(sys.modules) - before - {"pas", "child", "render_child"}:
        del sys.modules[name]


def render_event(template: str, **request: Any) -> dict[str, Any]:
    body = {"engine": "liquid", "template": template, "snippets": {}, "data": {"name": "Ada"}, "format": "html"}
    return {"render": json.dumps({**body, "limits": LIMITS, **request})}


def test_a_render_gets_its_fonts_on_a_scratch_disk_and_nothing_else_is_written(package, monkeypatch):
    seen: dict[str, Any] = {}
    run = render_child.run

    def recorded(request: dict[str, Any]) -> dict[str, Any]:
        seen["fonts"] = dict(request["fonts"])
        seen["font bytes"] = Path(request["fonts"]["Body"]).read_bytes()
        seen["disk"] = sorted(
            str(path.relative_to(Path(request["fonts"]["Body"]).parents[2]))
            for path in Path(request["fonts"]["Body"]).parents[2].rglob("*")
        )
        return run(request)

    monkeypatch.setattr(render_child, "run", recorded)
    files = {
        "plugins/fonts/body.ttf": base64.b64encode(b"font bytes").decode(),
        "other/x.ttf": base64.b64encode(b"no").decode(),
        "plugins/../../escape.ttf": base64.b64encode(b"no").decode(),
        "/plugins/absolute.ttf": base64.b64encode(b"no").decode(),
    }
    fonts = {"Body": "/sandbox/plugins/fonts/body.ttf", "Elsewhere": "/usr/share/fonts/x.ttf"}
    event = render_event("<p>{{ name }}</p>", fonts=fonts)
    answer = tenant_handler.handler({**event, "files": files}, None)

    assert answer == {"render": json.dumps({"text": "<p>Ada</p>"})}
    assert seen["font bytes"] == b"font bytes"
    assert seen["fonts"]["Elsewhere"] == "/usr/share/fonts/x.ttf"  # not on the scratch disk: left as named
    assert seen["disk"] == ["plugins", "plugins/fonts", "plugins/fonts/body.ttf"]
    assert not os.path.exists(seen["fonts"]["Body"])  # the scratch disk is gone with the render


def test_a_render_that_fails_answers_its_stage_as_the_local_renderer_does(package):
    limit = sys.getrecursionlimit()
    answer = tenant_handler.handler(render_event("{{ name }}{{ name }}", limits={"max_output_bytes": 3}), None)

    assert json.loads(answer["render"]) == {
        "error": {"stage": "render", "message": "the rendered text is larger than 3 bytes"}
    }
    assert sys.getrecursionlimit() == limit  # the renderer's 2000 is set for the render only


def test_a_plugin_call_and_the_import_check_reach_the_plugin_child(package, tmp_path, monkeypatch):
    folder = tmp_path / "plugins" / "python"
    folder.mkdir(parents=True)
    (folder / "rating.py").write_text("def rate(request):\n    return {'premium': request['base'] * 2}\n")
    (folder / "broken.py").write_text("raise RuntimeError('not today')\n\ndef never(request):\n    return {}\n")
    monkeypatch.setenv("LAMBDA_TASK_ROOT", str(tmp_path))
    message = json.dumps({"call": "rate", "request": {"base": 1.05}, "now": "2026-01-15T09:30:00Z", "answers": []})

    assert tenant_handler.handler({"message": message}, None) == {"message": '{"result":{"premium":2.10}}'}
    assert json.loads(tenant_handler.handler({"imports": True}, None)["imports"]) == [
        "RuntimeError: not today (plugins/python/broken.py line 1)"
    ]
