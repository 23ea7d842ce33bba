"""Rendering a tenant's template, and converting it to PDF: locally in a sandboxed process (render_child.py)
inside sandbox/kernel.py's kernel boundary, the one plugins run in: its own namespaces (no network, no
host files but /usr, the Python installation and the template libraries read-only at /libs), an
unprivileged user, both seccomp filters, a small tmpfs as its only disk, and the limits below. The host
holds the wall clock: a process past its deadline is killed, and its answer is read up to a bound.

One process per render: a template can leave nothing behind for the next one. A few renderers are started
ahead of their requests, with the libraries imported (WarmRenderers, settings `warm_renderers`): each still
renders exactly one document and is discarded.

On AWS (`PAS_PLUGIN_RUNNER=lambda`) the same request goes to the tenant's function
(plugins/tenant_handler.py), which renders it with the same render_child.py and libraries and answers the
same bytes; its isolation is the function's (no rights but its logs, no network), its limits its memory and
timeout (plugins/tenant_code.py derives them from the Limits below).
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import simplejson

from chalicelib.core import codes
from chalicelib.core.errors import NotFound
from chalicelib.runtime import wiring
from chalicelib.runtime.observability import logger
from chalicelib.sandbox import kernel, runtimes
from chalicelib.settings import settings

CHILD = runtimes.RENDERER_SCRIPT
MB = 1024 * 1024
LIBRARIES = runtimes.RENDERER_LIBRARIES
"""What the template engines and the PDF converter import, copied read-only into every renderer's /libs."""
MAX_INVOKE_BYTES = 6 * MB
"""Lambda's limit on a synchronous invocation's request (and on its answer: a PDF over about 4.4 MB, base64 in
the answer, fails in the tenant function with Lambda's own error)."""
FONTS = "plugins/fonts"
"""Where a render's custom fonts lie on its disk (read-only)."""


Limits = runtimes.RendererLimits
"""The renderer's limits (sandbox/runtimes.py: the tenant function's memory and timeout derive from them)."""


@dataclass(frozen=True)
class Rendered:
    content: bytes
    media_type: str


@dataclass(frozen=True)
class RenderFailed:
    stage: Literal["render", "conversion"]
    message: str


Engine = Literal["liquid", "velocity"]


def render(
    engine: Engine,
    template: str,
    data: dict[str, Any],
    output_format: str,
    *,
    snippets: dict[str, str] | None = None,
    page: dict[str, Any] | None = None,
    fonts: dict[str, bytes] | None = None,
    limits: Limits | None = None,
    tenant: str | None = None,
    version: str | None = None,
) -> Rendered | RenderFailed:
    """`template` rendered with `data` (its top-level keys are the template's variables) as `output_format`
    (`pdf`: the HTML converted, with the TrueType `fonts` by family name, read-only on the sandbox's disk,
    as its @font-face families; anything else: the text as rendered).

    Where: in the local sandbox, or, when the tenant's code runs in its function (`PAS_PLUGIN_RUNNER=lambda`,
    the plugins' setting) and the render names its `tenant` and configuration `version`, in the tenant
    function at that version's alias: the same request bytes, the same answer bytes. Before that version's
    code is live, 503 `tenantCode.not_ready`."""
    limits = limits or Limits()
    font_files = {name: f"{FONTS}/{name}.ttf" for name in fonts or {}}
    request = {
        "engine": engine,
        "template": template,
        "snippets": snippets or {},
        "data": data,
        "format": output_format,
        "page": page or {},
        "fonts": {name: f"{kernel.SANDBOX_HOME}/{path}" for name, path in font_files.items()},
        "limits": {
            "memory_bytes": limits.memory_bytes,
            "cpu_seconds": limits.cpu_seconds,
            "max_open_files": limits.max_open_files,
            "max_file_bytes": limits.max_output_bytes * 2,
            "max_output_bytes": limits.max_output_bytes,
        },
    }
    disk_files = {path: (fonts or {})[name] for name, path in font_files.items()}
    request_bytes = simplejson.dumps(request, use_decimal=True).encode("utf-8")
    invoke = _tenant_function_invoke() if tenant is not None and version is not None else None
    if invoke is not None and tenant is not None and version is not None:
        answer = _in_tenant_function(invoke, tenant, version, request_bytes, disk_files, limits)
    else:
        answer = _run(request_bytes, disk_files, limits)
    return _result(answer, output_format)


def _result(answer: dict[str, Any] | RenderFailed, output_format: str) -> Rendered | RenderFailed:
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
    return Rendered(
        text.encode("utf-8"), "text/html; charset=utf-8" if output_format == "html" else "text/plain; charset=utf-8"
    )


# --- in the tenant function ----------------------------------------------------------------------------

Invoke = Callable[[str, bytes, "str | None"], Any]
"""(function name, payload, qualifier) -> an object with `payload` and `function_error`
(storage/functions.py's Invocation)."""

_invoke_override: Invoke | None = None


def use_tenant_function(invoke: Invoke | None) -> None:
    """Render in the tenant function through `invoke` whatever the settings say (tests: a local invoker);
    None: as the settings say."""
    global _invoke_override
    _invoke_override = invoke


def _tenant_function_invoke() -> Invoke | None:
    if _invoke_override is not None:
        return _invoke_override
    if settings().plugin_runner == "lambda":
        return wiring.invoke_function
    return None


def _in_tenant_function(
    invoke: Invoke, tenant: str, version: str, request: bytes, files: dict[str, bytes], limits: Limits
) -> dict[str, Any] | RenderFailed:
    """The render as an invocation of the tenant function at the version's alias."""
    name = settings().plugin_function_name.format(tenant=tenant)
    event = {
        "render": request.decode("utf-8"),
        "files": {path: base64.b64encode(content).decode("ascii") for path, content in files.items()},
    }
    payload = json.dumps(event).encode("utf-8")
    if len(payload) > MAX_INVOKE_BYTES:
        return RenderFailed(
            "render",
            "the template, its data and fonts are larger than the tenant function "
            f"takes in one call ({MAX_INVOKE_BYTES // MB} MB)",
        )
    try:
        invocation = invoke(name, payload, version)
    except NotFound:
        raise codes.TENANT_CODE_NOT_READY(
            f"The tenant function {name} has no code for configuration {version}: its deployment is "
            "publishing it, or failed to (GET /config/{tenantLocator}/deployments says which)"
        ) from None
    bound = limits.max_output_bytes * 2 + 4096
    if len(invocation.payload) > bound + 1024:
        return RenderFailed("render", f"the renderer's answer is larger than {bound} bytes")
    try:
        body = json.loads(invocation.payload)
    except (ValueError, RecursionError):
        body = None
    if invocation.function_error:
        error = body if isinstance(body, dict) else {}
        said = str(error.get("errorMessage") or error.get("errorType") or "no detail")[:500]
        if "timed out" in said:
            return RenderFailed("render", f"rendering took longer than the tenant function's timeout ({said})")
        return RenderFailed("render", f"the tenant function failed: {said}")
    text = body.get("render") if isinstance(body, dict) else None
    try:
        parsed = simplejson.loads(text) if isinstance(text, str) else None
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return RenderFailed("render", "the tenant function answered outside the renderer's protocol")
    return parsed


def _run(request: bytes, files: dict[str, bytes], limits: Limits) -> dict[str, Any] | RenderFailed:
    """The render in the local sandbox: by a warm renderer when one waits and the render needs nothing it lacks
    (files on its disk, a disk of another size), else by one started now (the setup line, then the request)."""
    warm = _pool().take() if not files and limits.disk_bytes == Limits().disk_bytes else None
    if warm is not None:
        return _finish(warm, request, limits)
    try:
        setup = _setup(preload=False)
    except kernel.SandboxUnavailable as error:
        return RenderFailed("render", f"the renderer could not start: {error}")
    disk = kernel.Disk(files, size_bytes=limits.disk_bytes + sum(map(len, files.values())), max_files=1024)
    try:
        process = kernel.start(CHILD, disk, python=sys.executable, libraries=kernel.libraries(LIBRARIES))
    except (OSError, kernel.SandboxUnavailable) as error:
        disk.remove()
        return RenderFailed("render", f"the renderer could not start: {error}")
    return _finish(_Renderer(process, disk), setup + request, limits)


def _setup(*, preload: bool) -> bytes:
    """The renderer's first line: the second seccomp filter, and whether to import the libraries at once."""
    program = base64.b64encode(kernel.filters().before_plugins).decode("ascii")
    return simplejson.dumps({"seccomp": program, "preload": preload}).encode("utf-8") + b"\n"


READY = b"\n"
"""What a warm renderer writes once its libraries are imported, before its answer."""


@dataclass(frozen=True, eq=False)  # each one is itself: compared by identity
class _Renderer:
    process: subprocess.Popen[bytes]
    disk: kernel.Disk
    warm: threading.Event = field(default_factory=threading.Event)
    """Set once it said READY (a renderer taken before that is still further on than one started now)."""

    def discard(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self.disk.remove()


def _finish(renderer: _Renderer, request: bytes, limits: Limits) -> dict[str, Any] | RenderFailed:
    """The one render of `renderer`, which is then discarded."""
    try:
        return _exchange(renderer.process, request, limits)
    finally:
        renderer.discard()


class WarmRenderers:
    """Up to `size` renderers started ahead of their request (issue 28: a render no longer pays the process's
    start and the libraries' imports, 200-260 ms). Each is started as any renderer is (its own empty disk,
    the kernel boundary) and sent its setup line with `preload`: it imports the template engines and the
    PDF converter, then waits for its request. It renders that one request and is discarded like any other
    (nothing of one render is left for the next); taking one starts its replacement in the background. The
    sandbox launcher's thread is their parent, so they die with this process; `close` (at exit) removes
    them and their disks."""

    def __init__(self, size: int):
        self.size = size
        self._ready: list[_Renderer] = []
        self._starting = 0
        self._closed = False
        self._lock = threading.Lock()

    def take(self) -> _Renderer | None:
        """A waiting renderer that is still alive, a warm one first, or None (then the render starts its own)."""
        with self._lock:
            dead = [renderer for renderer in self._ready if renderer.process.poll() is not None]
            alive = [renderer for renderer in self._ready if renderer not in dead]
            taken = next((renderer for renderer in alive if renderer.warm.is_set()), alive[0] if alive else None)
            self._ready = [renderer for renderer in alive if renderer is not taken]
        for renderer in dead:
            renderer.discard()
        self.fill()
        return taken

    def waiting(self) -> int:
        """How many warm renderers wait now."""
        with self._lock:
            return sum(renderer.warm.is_set() for renderer in self._ready)

    def fill(self) -> None:
        """Start the renderers missing, in the background."""
        with self._lock:
            missing = 0 if self._closed else self.size - len(self._ready) - self._starting
            self._starting += max(missing, 0)
        for _ in range(missing):
            threading.Thread(target=self._start_one, name="warm-renderer", daemon=True).start()

    def _start_one(self) -> None:
        renderer = None
        try:
            disk = kernel.Disk({}, size_bytes=Limits().disk_bytes, max_files=1024)
            try:
                process = kernel.start(CHILD, disk, python=sys.executable, libraries=kernel.libraries(LIBRARIES))
            except BaseException:
                disk.remove()
                raise
            renderer = _Renderer(process, disk)
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(_setup(preload=True))
            process.stdin.flush()
        except Exception as error:  # the next take tries again; a render meanwhile starts its own
            logger().warning("a warm renderer did not start", extra={"reason": str(error)[:300]})
            if renderer is not None:
                renderer.discard()
            renderer = None
        with self._lock:
            self._starting -= 1
            keep = renderer is not None and not self._closed
            if keep and renderer is not None:
                self._ready.append(renderer)
        if renderer is not None and not keep:
            renderer.discard()
        elif renderer is not None:
            self._when_ready(renderer)

    def _when_ready(self, renderer: _Renderer, within: float = 30) -> None:
        """Mark `renderer` warm once it said READY, which is read here unless a render took it meanwhile (its
        exchange reads it then, and _answer leaves it out); one that ends instead is discarded."""
        assert renderer.process.stdout is not None
        fd = renderer.process.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        said = poller.poll(within * 1000)
        with self._lock:
            if renderer not in self._ready:
                return  # taken (or closed) meanwhile
            line = os.read(fd, len(READY)) if said else b""
            if line == READY:
                renderer.warm.set()
                return
            self._ready.remove(renderer)
        logger().warning("a warm renderer ended before it was ready", extra={"said": line[:100].decode("latin-1")})
        renderer.discard()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            waiting, self._ready = self._ready, []
        for renderer in waiting:
            renderer.discard()


_warm: list[WarmRenderers] = []
_warm_lock = threading.Lock()


def _pool() -> WarmRenderers:
    """This process's warm renderers (settings `warm_renderers`), made on first use, closed at exit."""
    with _warm_lock:
        if not _warm:
            _warm.append(WarmRenderers(settings().warm_renderers or 0))
            atexit.register(close_warm_renderers)
        return _warm[0]


def close_warm_renderers() -> None:
    """End the renderers waiting (at exit; a process that skips its interpreter's exit calls it itself)."""
    with _warm_lock:
        for pool in _warm:
            pool.close()


def start_warm_renderers() -> None:
    """Start this process's warm renderers now (a server's start), not with its first render."""
    _pool().fill()


def use_warm_renderers(size: int | None) -> WarmRenderers:
    """Replace this process's warm renderers by `size` of them (tests, benchmarks; None: as settings say), the
    old ones closed; answers the new ones, which start with the next render."""
    _pool()
    with _warm_lock:
        _warm[0].close()
        _warm[0] = WarmRenderers((settings().warm_renderers or 0) if size is None else size)
        return _warm[0]


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
                    pending = pending[os.write(fd_in, pending) :]
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
    answer = answer.removeprefix(READY)  # a warm renderer's
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
    return RenderFailed(
        "render",
        f"the renderer stopped without an answer (status {code}): it ran out of "
        "memory or CPU time, or was refused an operation",
    )
