"""LocalProcessRunner: tenant plugins in separate, contained, warm Python processes on this machine.

Each process runs chalicelib/plugins/child.py inside the kernel boundary that sandbox/kernel.py builds
(bubblewrap namespaces, an unprivileged user, seccomp filters, a tmpfs of a fixed size and number of
files as its only writable disk, read-only Python and only the tenant's `plugins/python/` files
visible), under
`python -I -S -B` with an empty environment, stdin and stdout as the JSON-lines channel and stderr
discarded. Before it says it is ready (and so before any plugin code is imported) the child lowers
its own resource limits (Limits below), installs its second seccomp filter (no execve) and, as a
second line that explains refusals early, its audit hook (child.py's docstring).

The host enforces the wall clock: it waits for each answer with a deadline and kills the process
when the deadline passes. Every write and read on the channel is bounded by that deadline, and a
process that breaks the protocol, exceeds a limit or dies is never reused.

Warm reuse: processes are pooled by (tenant, configuration version), so nothing a plugin leaves in
memory or on its disk reaches another tenant or version. A call takes an idle process of its key or
starts one (at most `processes_per_version` per key, `max_processes` in all, the least recently used
idle process of another key making room), and gives it back after the call. A call for a new
configuration version of a tenant retires that tenant's processes of other versions; idle processes
are stopped after `idle_seconds`; a process is retired before it can run out of its lifetime CPU
budget. Thread-safe.

Fair share: a tenant may hold at most max(1, max_processes // (n + 1)) processes at once, n being the
number of tenants with calls running or waiting: the share each would have if one more tenant came, so
one tenant flooding the pool leaves room for the next (alone, a tenant has half the pool; sixteen
tenants, one process each). A call beyond its tenant's share waits for one of its tenant's calls to end.
When calls wait for a process, the one whose tenant holds the fewest goes first (then the earliest).

This is the runner of `make run` and the tests. Production uses LambdaRunner, where each tenant's
plugins run in their own function with a role that has no data access and no network.
"""

from __future__ import annotations

import base64
import itertools
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from chalicelib.core.clock import isoformat
from chalicelib.plugins import protocol
from chalicelib.plugins.models import HostApi, PluginFailure, PluginResult
from chalicelib.sandbox import kernel

PLUGIN_FOLDER = "plugins/python/"
CHILD = Path(__file__).with_name("child.py")
MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    timeout_seconds: float = 5.0
    """Wall clock of one call, pas calls included; the host kills the process when it passes."""
    cpu_seconds: int = 120
    """CPU time of a process over its life (kernel-enforced: SIGXCPU); retired before it runs out."""
    memory_bytes: int = 256 * MB
    """Address space of the process (RLIMIT_AS): an allocation beyond it raises MemoryError."""
    max_open_files: int = 32
    max_file_bytes: int = 1 * MB
    """Largest file the plugin may write in its scratch directory (RLIMIT_FSIZE)."""
    disk_bytes: int = 16 * MB
    """All the plugin may write, its scratch directory being a tmpfs of this size."""
    max_files: int = 4096
    """Files and folders on that tmpfs, its package's included (run as root: kernel.Disk)."""
    startup_seconds: float = 10.0
    max_message_bytes: int = 2 * MB
    """Largest line the plugin may send (its answer, or a pas call): the host parses it in its own
    process, and JSON can take 25 times its size in memory once parsed."""

    def for_child(self) -> dict[str, int]:
        fields = asdict(self)
        return {name: fields[name] for name in ("cpu_seconds", "memory_bytes", "max_open_files", "max_file_bytes")}


class _Broken(Exception):
    """The process cannot go on: it is killed and the call answers `failure`."""

    def __init__(self, failure: PluginFailure):
        super().__init__(failure.message)
        self.failure = failure


class _Process:
    """One plugin process and its disk; used by one call at a time."""

    def __init__(
        self, key: tuple[str, str], module_files: Mapping[str, bytes], limits: Limits, python: str, audit_hook: bool
    ):
        self.key = key
        self.limits = limits
        self.buffer = bytearray()
        self.cpu = 0.0
        self.reusable = True
        self.last_used = time.monotonic()
        try:
            filters = kernel.filters()
            self.disk = kernel.Disk(
                {path: content for path, content in module_files.items() if path.startswith(PLUGIN_FOLDER)},
                size_bytes=limits.disk_bytes,
                max_files=limits.max_files,
            )
        except (OSError, kernel.SandboxUnavailable) as error:
            raise _Broken(_not_started(error)) from None
        try:
            self.proc = kernel.start(CHILD, self.disk, python=python)
        except (OSError, kernel.SandboxUnavailable) as error:
            self.disk.remove()
            raise _Broken(_not_started(error)) from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.fd_in, self.fd_out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self.fd_in, False)
        os.set_blocking(self.fd_out, False)
        try:
            deadline = time.monotonic() + limits.startup_seconds
            self._send(
                {
                    "root": ".",
                    "limits": limits.for_child(),
                    "auditHook": audit_hook,
                    "seccomp": base64.b64encode(filters.before_plugins).decode("ascii"),
                },
                "(start)",
                deadline,
            )
            if self._receive("(start)", deadline) != {"ready": True}:
                raise _Broken(PluginFailure("(start)", "unavailable", "the plugin process did not start properly"))
            self.disk.started()
        except _Broken:
            self.stop()
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, function: str, request: Mapping[str, Any], host: HostApi) -> PluginResult:
        """One call; on any failure that leaves the process unusable it is stopped here."""
        deadline = time.monotonic() + self.limits.timeout_seconds
        try:
            self._send({"call": function, "request": request, "now": isoformat(host.now())}, function, deadline)
            for _ in range(protocol.MAX_HOST_CALLS + 1):
                message = self._receive(function, deadline)
                if "pas" not in message:
                    return self._finish(message, function)
                self._send(protocol.answer_pas(message, host), function, deadline)
            raise _Broken(protocol.too_many_calls(function))
        except protocol.Malformed as error:
            self.stop()
            return PluginFailure(function, "malformed", str(error))
        except _Broken as broken:
            self.stop()
            return broken.failure
        except BaseException:
            self.stop()  # the host API failed mid-call (or the caller was interrupted)
            raise
        finally:
            self.last_used = time.monotonic()

    def _finish(self, message: dict[str, Any], function: str) -> PluginResult:
        cpu = message.get("cpu")
        if isinstance(cpu, (int, Decimal)) and not isinstance(cpu, bool):
            self.cpu = float(cpu)
        result = protocol.result_of(message.get("answer"), function)
        if isinstance(result, PluginFailure) and result.reason == "memory_limit":
            self.reusable = False  # a process that ran out of memory may be left half-done
        if self.cpu + self.limits.timeout_seconds >= self.limits.cpu_seconds:
            self.reusable = False
        return result

    def _send(self, message: Mapping[str, Any], function: str, deadline: float) -> None:
        data = memoryview(protocol.encode(message))
        while data:
            self._wait(select.POLLOUT, function, deadline)
            try:
                data = data[os.write(self.fd_in, data) :]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                raise _Broken(self._death(function)) from None

    def _receive(self, function: str, deadline: float) -> dict[str, Any]:
        while (end := self.buffer.find(b"\n")) < 0:
            if len(self.buffer) > self.limits.max_message_bytes:
                raise _Broken(
                    PluginFailure(
                        function, "malformed", f"it sent more than {self.limits.max_message_bytes // MB} MB at once"
                    )
                )
            self._wait(select.POLLIN, function, deadline)
            try:
                chunk = os.read(self.fd_out, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                raise _Broken(self._death(function))
            self.buffer += chunk
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        return protocol.decode(line)

    def _wait(self, event: int, function: str, deadline: float) -> None:
        poller = select.poll()
        poller.register(self.fd_in if event == select.POLLOUT else self.fd_out, event)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Broken(
                    PluginFailure(
                        function, "timeout", f"it ran longer than {self.limits.timeout_seconds:g} s (wall clock)"
                    )
                )
            if poller.poll(remaining * 1000):
                return

    def _death(self, function: str) -> PluginFailure:
        """Why the process ended (it closed the channel)."""
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return PluginFailure(function, "crashed", "its process closed the plugin channel")
        if code > 128:
            code = -(code - 128)  # bwrap reports a child killed by signal N as 128 + N
        if code == -signal.SIGXCPU:
            return PluginFailure(
                function, "cpu_limit", f"its process used up its CPU-time limit ({self.limits.cpu_seconds} s)"
            )
        if code < 0:
            return PluginFailure(function, "crashed", f"its process died of {signal.Signals(-code).name}")
        return PluginFailure(function, "crashed", f"its process exited with status {code}")

    def stop(self) -> None:
        self.reusable = False
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass  # a process stuck in the kernel; the OS reaps it once it dies
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass
        self.disk.remove()


def _not_started(error: OSError | kernel.SandboxUnavailable) -> PluginFailure:
    if isinstance(error, kernel.SandboxUnavailable):
        return PluginFailure("(start)", "unavailable", str(error))
    return PluginFailure("(start)", "unavailable", f"the plugin process could not start: {error}")


class LocalProcessRunner:
    """The PluginRunner of `make run` and the tests (see the module docstring)."""

    def __init__(
        self,
        limits: Limits = Limits(),
        *,
        max_processes: int = 16,
        processes_per_version: int = 2,
        idle_seconds: float = 300.0,
        python: str = sys.executable,
        audit_hook: bool = True,
    ):
        self.limits = limits
        self.audit_hook = audit_hook
        self.max_processes = max_processes
        self.processes_per_version = processes_per_version
        self.idle_seconds = idle_seconds
        self.python = python
        self._idle: dict[tuple[str, str], list[_Process]] = {}
        self._counts: Counter[tuple[str, str]] = Counter()
        self._held: Counter[str] = Counter()
        """Processes each tenant's calls hold (starting ones included)."""
        self._waiting: dict[int, tuple[str, str]] = {}
        """The key of each call waiting for a process, by arrival."""
        self._arrivals = itertools.count()
        self._versions: dict[str, str] = {}
        self._changed = threading.Condition()

    def call(
        self,
        tenant: str,
        config_version: str,
        module_files: Mapping[str, bytes],
        function_name: str,
        request: Mapping[str, Any],
        host: HostApi,
    ) -> PluginResult:
        try:
            process = self._checkout((tenant, config_version), module_files)
        except _Broken as broken:
            return PluginFailure(function_name, broken.failure.reason, broken.failure.detail)
        try:
            return process.call(function_name, request, host)
        finally:
            self._give_back(process)

    def processes(self, tenant: str, config_version: str) -> int:
        """Live processes of a key (idle and busy), for tests and benchmarks."""
        with self._changed:
            return self._counts[(tenant, config_version)]

    def close(self) -> None:
        """Stop every idle process; busy ones stop when their call returns."""
        with self._changed:
            idle = [process for processes in self._idle.values() for process in processes]
            self._idle.clear()
            for process in idle:
                self._counts[process.key] -= 1
            self._versions.clear()
        for process in idle:
            process.stop()

    # --- the pool --------------------------------------------------------------------------------

    def _checkout(self, key: tuple[str, str], module_files: Mapping[str, bytes]) -> _Process:
        tenant = key[0]
        deadline = time.monotonic() + self.limits.timeout_seconds
        doomed: list[_Process] = []
        arrival = next(self._arrivals)
        try:
            with self._changed:
                self._retire_other_versions(key, doomed)
                self._take_stale(doomed)
                self._waiting[arrival] = key
                try:
                    while True:
                        if self._turn(arrival, key):
                            process = self._idle_process(key, doomed)
                            if process is not None:
                                self._held[tenant] += 1
                                return process
                            if self._counts[key] < self.processes_per_version and self._make_room(doomed):
                                self._counts[key] += 1
                                self._held[tenant] += 1
                                break
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            raise _Broken(PluginFailure("(start)", "unavailable", self._busy(tenant)))
                        self._changed.wait(remaining)
                finally:
                    del self._waiting[arrival]
                    self._changed.notify_all()  # the calls behind this one may go now
        finally:
            for process in doomed:
                process.stop()
        try:
            return _Process(key, module_files, self.limits, self.python, self.audit_hook)
        except BaseException:
            with self._changed:
                self._counts[key] -= 1
                self._release(tenant)
                self._changed.notify_all()
            raise

    def _share(self) -> int:
        """Processes a tenant may hold at once now (the module docstring says why)."""
        tenants = {tenant for tenant, held in self._held.items() if held} | {key[0] for key in self._waiting.values()}
        return max(1, self.max_processes // (len(tenants) + 1))

    def _turn(self, arrival: int, key: tuple[str, str]) -> bool:
        """Whether the waiting call `arrival` may take a process: its tenant holds less than its share and no
        waiting call that could go is ahead of it (its tenant holding fewer, or as many and it came earlier)."""
        share = self._share()
        if self._held[key[0]] >= share:
            return False
        place = (self._held[key[0]], arrival)
        return not any(
            (self._held[other[0]], other_arrival) < place and self._could_go(other, share)
            for other_arrival, other in self._waiting.items()
        )

    def _could_go(self, key: tuple[str, str], share: int) -> bool:
        room = (sum(self._counts.values()) < self.max_processes or any(self._idle.values())) and self._counts[
            key
        ] < self.processes_per_version
        return self._held[key[0]] < share and (bool(self._idle.get(key)) or room)

    def _idle_process(self, key: tuple[str, str], doomed: list[_Process]) -> _Process | None:
        idle = self._idle.get(key)
        while idle:
            process = idle.pop()
            if process.alive():
                return process
            self._counts[key] -= 1
            doomed.append(process)
        return None

    def _busy(self, tenant: str) -> str:
        share = self._share()
        if self._held[tenant] >= share:
            return f"the {share} plugin processes this tenant may hold at once are busy"
        return "every plugin process is busy"

    def _release(self, tenant: str) -> None:
        self._held[tenant] -= 1
        if not self._held[tenant]:
            del self._held[tenant]

    def _give_back(self, process: _Process) -> None:
        with self._changed:
            self._release(process.key[0])
            current = self._versions.get(process.key[0]) == process.key[1]
            keep = current and process.reusable and process.alive()
            if keep:
                self._idle.setdefault(process.key, []).append(process)
            else:
                self._counts[process.key] -= 1
            self._changed.notify_all()
        if not keep:
            process.stop()

    def _retire_other_versions(self, key: tuple[str, str], doomed: list[_Process]) -> None:
        tenant, version = key
        previous = self._versions.get(tenant)
        self._versions[tenant] = version
        if previous is not None and previous != version:
            for process in self._idle.pop((tenant, previous), []):
                self._counts[process.key] -= 1
                doomed.append(process)

    def _take_stale(self, doomed: list[_Process]) -> None:
        horizon = time.monotonic() - self.idle_seconds
        for key, processes in list(self._idle.items()):
            stale = [process for process in processes if process.last_used < horizon]
            for process in stale:
                processes.remove(process)
                self._counts[key] -= 1
                doomed.append(process)

    def _make_room(self, doomed: list[_Process]) -> bool:
        """True when one more process fits, stopping the least recently used idle one if needed."""
        if sum(self._counts.values()) < self.max_processes:
            return True
        candidates = [process for processes in self._idle.values() for process in processes]
        if not candidates:
            return False
        oldest = min(candidates, key=lambda process: process.last_used)
        self._idle[oldest.key].remove(oldest)
        self._counts[oldest.key] -= 1
        doomed.append(oldest)
        return True
