"""The top-level functions of tenant Python modules, found by parsing them in another process under limits
the kernel enforces (python_source_child.py): 2 MB of hostile source took 14 s and 1.3 GB to parse in the
service's own process, and held every other request for as long.

The parser runs in the sandbox (kernel.py: namespaces, seccomp, an unprivileged user) where this machine
has one; where it has none (AWS Lambda, which has no namespaces for a function to make, or a machine
without bubblewrap) it runs as a plain child process with an empty environment, under the same rlimits.
What a package's modules define is remembered per process by their content (a deployment's modules are
parsed again when the version is first used), unless the parser ran out of time, which a busy machine can
cause.
"""

from __future__ import annotations

import base64
import hashlib
import json
import signal
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from chalicelib.core import codes
from chalicelib.sandbox import kernel

SCRIPT = Path(__file__).with_name("python_source_child.py")
MB = 1024 * 1024
REMEMBERED = 64
"""Packages whose parse results a process keeps, least recently used forgotten first."""


@dataclass(frozen=True)
class ParseLimits:
    memory_bytes: int = 128 * MB
    """Address space of the parser: 256 KB of ordinary code takes about 15 MB to parse; a module that needs
    more than this is built to exhaust memory."""
    cpu_seconds: int = 5
    """CPU time of the parser for all the modules of one package (256 KB of ordinary code: 0.05 s)."""
    wall_seconds: float = 20.0
    """The host kills the parser then, whatever it does."""


@dataclass(frozen=True)
class Parsed:
    """One module's top-level function names, or why it could not be parsed (a message naming its path)."""

    functions: tuple[str, ...] = ()
    error: str | None = None


def top_level_functions(
    modules: Mapping[str, bytes], limits: ParseLimits = ParseLimits(), *, sandboxed: bool | None = None
) -> dict[str, Parsed]:
    """What each module of `modules` (path -> source) defines at its top level. `sandboxed` None: in the
    sandbox when this machine can make one. Unavailable when no parser can be started."""
    if not modules:
        return {}
    if sandboxed is None:
        sandboxed = _sandbox_available()
    key = _content_key(modules, limits, sandboxed)
    with _lock:
        if key in _remembered:
            _remembered.move_to_end(key)
            return dict(_remembered[key])
    paths = sorted(modules)
    source = json.dumps({path: base64.b64encode(modules[path]).decode("ascii") for path in paths}).encode()
    limit_arguments = (str(limits.memory_bytes), str(limits.cpu_seconds))
    disk: kernel.Disk | None = None
    try:
        if sandboxed:
            disk = kernel.Disk({}, size_bytes=MB, max_files=16)
            parser = kernel.start(SCRIPT, disk, python=sys.executable, arguments=limit_arguments)
        else:
            parser = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", str(SCRIPT), *limit_arguments],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={},
                close_fds=True,
                start_new_session=True,
                cwd="/",
            )
        output, stopped = _run(parser, source, limits)
    except (OSError, kernel.SandboxUnavailable) as error:
        raise codes.SERVICE_UNAVAILABLE(f"the plugin modules cannot be parsed now: {error}") from None
    finally:
        if disk is not None:
            disk.remove()
    results = _results(paths, output, stopped, parser.returncode, limits)
    if len(output.splitlines()) == len(paths):
        with _lock:
            _remembered[key] = results
            while len(_remembered) > REMEMBERED:
                _remembered.popitem(last=False)
    return dict(results)


_remembered: OrderedDict[str, dict[str, Parsed]] = OrderedDict()
_lock = threading.Lock()


def _content_key(modules: Mapping[str, bytes], limits: ParseLimits, sandboxed: bool) -> str:
    digest = hashlib.sha256(repr((limits, sandboxed)).encode())
    for path in sorted(modules):
        for part in (path.encode(), modules[path]):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
    return digest.hexdigest()


def _sandbox_available() -> bool:
    try:
        kernel.check()
    except kernel.SandboxUnavailable:
        return False
    return True


def _run(parser: subprocess.Popen[bytes], source: bytes, limits: ParseLimits) -> tuple[bytes, str | None]:
    """The parser's output, and why it was stopped early (None when it ended by itself)."""
    try:
        output, _ = parser.communicate(source, timeout=limits.wall_seconds)
        return output, None
    except subprocess.TimeoutExpired:
        parser.kill()
        try:
            output, _ = parser.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # bwrap was killed before its sandbox could arrange to die with it
            output = b""
        return output, f"{limits.wall_seconds:g} s of wall-clock time"


def _results(
    paths: list[str], output: bytes, stopped: str | None, status: int | None, limits: ParseLimits
) -> dict[str, Parsed]:
    results: dict[str, Parsed] = {}
    for line in output.splitlines():
        try:
            answer = json.loads(line)
        except ValueError:
            break  # the last line, cut short when the parser was stopped
        results[answer["path"]] = Parsed(tuple(answer.get("functions") or ()), answer.get("error"))
    missing = [path for path in paths if path not in results]
    if missing:
        results[missing[0]] = Parsed(
            error=f"{missing[0]}: cannot be parsed within the parser's limits ({_exceeded(stopped, status, limits)})"
        )
    return results


def _exceeded(stopped: str | None, status: int | None, limits: ParseLimits) -> str:
    if stopped is not None:
        return stopped
    code = status or 0
    if code > 128:
        code = -(code - 128)  # bwrap reports a child killed by signal N as 128 + N
    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"{limits.cpu_seconds} s of CPU time"
    return f"the parser ended with status {status}"
