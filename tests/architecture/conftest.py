"""The fuzzing run's tally: how many requests it sent, over how many operations, summed over the xdist
workers at the end of the session. A run of every operation that sent fewer than MIN_REQUESTS fails."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_SESSION = os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()
"""The process that runs the session: an xdist worker's parent, or this one."""
_FOLDER = Path(tempfile.gettempdir()) / f"pas-fuzz-{_SESSION}"


class Tally:
    def __init__(self) -> None:
        self.requests: dict[str, int] = {}

    def request(self, operation: str) -> None:
        self.requests[operation] = self.requests.get(operation, 0) + 1


@pytest.fixture(scope="session")
def fuzz_tally() -> Iterator[Tally]:
    tally = Tally()
    yield tally
    _FOLDER.mkdir(exist_ok=True)
    (_FOLDER / f"{os.getpid()}.json").write_text(json.dumps(tally.requests))


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput") or not _FOLDER.exists():
        return
    from tests.architecture.fuzzing import MIN_REQUESTS, OPERATIONS

    counted: dict[str, int] = {}
    for part in _FOLDER.glob("*.json"):
        for operation, requests in json.loads(part.read_text()).items():
            counted[operation] = counted.get(operation, 0) + requests
        part.unlink()
    _FOLDER.rmdir()
    total = sum(counted.values())
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"fuzzing: {total} requests over {len(counted)} operations")
    if len(counted) >= OPERATIONS - 5 and total < MIN_REQUESTS:  # a whole run (a few answer only OPTIONS)
        if reporter is not None:
            reporter.write_line(f"fuzzing sent {total} requests, fewer than {MIN_REQUESTS}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
