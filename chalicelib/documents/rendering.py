"""Rendering a tenant's template, and converting it to PDF, in a sandboxed process (render_child.py)
inside sandbox/kernel.py's kernel boundary, the one plugins run in: its own namespaces (no network, no
host files but /usr, the Python installation and the template libraries read-only at /libs), an
unprivileged user, both seccomp filters, a small tmpfs as its only disk, and the limits below. The host
holds the wall clock: a process past its deadline is killed, and its answer is read up to a bound.

One process per render: a template can leave nothing behind for the next one.
"""
from __future__ import annotations

import base64
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import simplejson

from chalicelib.sandbox import kernel

CHILD = Path(__file__).with_name("render_child.py")
MB = 1024 * 1024
LIBRARIES = (
    "liquid", "airspeed", "xhtml2pdf", "reportlab", "html5lib", "webencodings", "six.py", "pypdf", "PIL",
    "pillow.libs", "arabic_reshaper", "svglib", "lxml", "cssselect2", "tinycss2", "babel", "pytz", "markupsafe",
    "cachetools", "dateutil", "importlib_resources", "typing_extensions.py", "charset_normalizer",
)
"""What the template engines and the PDF converter import, copied read-only into every renderer's /libs."""
FONTS = "plugins/fonts"
"""Where a render's custom fonts lie on its disk (read-only)."""


@dataclass(frozen=True)
class Limits:
    timeout_seconds: float = 20.0
    """Wall clock of one render, PDF conversion included; the host kills the process when it passes."""
    cpu_seconds: int = 20
    memory_bytes: int = 768 * MB
    """Address space: the converter's libraries alone map about 200 MB."""
    max_output_bytes: int = 10 * MB
    """The rendered text and the PDF, each."""
    disk_bytes: int = 32 * MB
    max_open_files: int = 64


@dataclass(frozen=True)
class Rendered:
    content: bytes
    media_type: str


@dataclass(frozen=True)
class RenderFailed:
    stage: Literal["render", "conversion"]
    message: str


Engine = Literal["liquid", "velocity"]


def render(engine: Engine, template: str, data: dict[str, Any], output_format: str, *,
           snippets: dict[str, str] | None = None, page: dict[str, Any] | None = None,
           fonts: dict[str, bytes] | None = None, limits: Limits = Limits()) -> Rendered | RenderFailed:
    """`template` rendered with `data` (its top-level keys are the template's variables) as `output_format`
    (`pdf`: the HTML converted, with the TrueType `fonts` by family name, read-only on the sandbox's disk,
    as its @font-face families; anything else: the text as rendered)."""
    font_files = {name: f"{FONTS}/{name}.ttf" for name in fonts or {}}
    request = {
        "engine": engine, "template": template, "snippets": snippets or {}, "data": data, "format": output_format,
        "page": page or {}, "fonts": {name: f"{kernel.SANDBOX_HOME}/{path}" for name, path in font_files.items()},
        "seccomp": base64.b64encode(kernel.filters().before_plugins).decode("ascii"),
        "limits": {"memory_bytes": limits.memory_bytes, "cpu_seconds": limits.cpu_seconds,
                   "max_open_files": limits.max_open_files, "max_file_bytes": limits.max_output_bytes * 2,
                   "max_output_bytes": limits.max_output_bytes},
    }
    disk_files = {path: (fonts or {})[name] for name, path in font_files.items()}
    answer = _run(simplejson.dumps(request, use_decimal=True).encode("utf-8"), disk_files, limits)
    if isinstance(answer, RenderFailed):
        return answer
    if "error" in answer:
        error = answer["error"]
        if error.get("stage") == "conversion":
            return RenderFailed("conversion", str(error.get("message", "the conversion failed")))
        return RenderFailed("render", str(error.get("message", "the renderer failed")))
    if "pdf" in answer:
        return Rendered(base64.b64decode(answer["pdf"]), "application/pdf")
    text = str(answer.get("text", ""))
    return Rendered(text.encode("utf-8"), "text/html; charset=utf-8" if output_format == "html" else
                    "text/plain; charset=utf-8")


def _run(request: bytes, files: dict[str, bytes], limits: Limits) -> dict[str, Any] | RenderFailed:
    disk = kernel.Disk(files, size_bytes=limits.disk_bytes + sum(map(len, files.values())), max_files=1024)
    try:
        try:
            process = kernel.start(CHILD, disk, python=sys.executable, libraries=kernel.libraries(LIBRARIES))
        except (OSError, kernel.SandboxUnavailable) as error:
            return RenderFailed("render", f"the renderer could not start: {error}")
        try:
            return _exchange(process, request, limits)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=5)
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()
    finally:
        disk.remove()


def _exchange(process: subprocess.Popen[bytes], request: bytes, limits: Limits) -> dict[str, Any] | RenderFailed:
    """Writes the request, reads the answer (at most twice the output limit, base64 included) before the
    deadline."""
    assert process.stdin is not None and process.stdout is not None
    deadline = time.monotonic() + limits.timeout_seconds
    fd_in, fd_out = process.stdin.fileno(), process.stdout.fileno()
    os.set_blocking(fd_in, False)
    os.set_blocking(fd_out, False)
    pending, answer = memoryview(request), bytearray()
    bound = limits.max_output_bytes * 2 + 4096
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return RenderFailed("render", f"rendering took longer than {limits.timeout_seconds:g} s")
        poller = select.poll()
        poller.register(fd_out, select.POLLIN)
        if pending:
            poller.register(fd_in, select.POLLOUT)
        for fd, _ in poller.poll(remaining * 1000):
            if fd == fd_in and pending:
                try:
                    pending = pending[os.write(fd_in, pending):]
                except BrokenPipeError:
                    pending = memoryview(b"")
                if not pending:
                    process.stdin.close()
            elif fd == fd_out:
                chunk = os.read(fd_out, 1 << 16)
                if not chunk:
                    return _answer(process, bytes(answer))
                answer += chunk
                if len(answer) > bound:
                    return RenderFailed("render", f"the renderer's answer is larger than {bound} bytes")


def _answer(process: subprocess.Popen[bytes], answer: bytes) -> dict[str, Any] | RenderFailed:
    try:
        parsed = simplejson.loads(answer) if answer else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    try:
        code = process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        code = None
    return RenderFailed("render", f"the renderer stopped without an answer (status {code}): it ran out of "
                                  "memory or CPU time, or was refused an operation")
