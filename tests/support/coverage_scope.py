"""Which tests coverage measures (a pytest plugin: tests/conftest.py loads it; it does nothing unless coverage runs).

A cheaper measure of line coverage than `make coverage` (which sets PAS_COVERAGE_EVERY_TEST=1 and measures every
test): `pytest -n 2 --cov=chalicelib` run directly. It is not in `make test`: at stop 46 it reached 96.6 %, over the
.coveragerc floor of 95 % (the four scripts that run only as subprocesses are now also called in process by their
tests), but its time is over the suite's 10 minutes (benchmarks/README.md, "The suite's own cost, stop 46"). On Python
3.11 coverage's tracer slows every frame it is set over, measured or not, and a few generative tests spend most of the
suite's CPU drawing more of the same requests, histories and seeds over code the other tests already run. Those tests
(UNTRACED) run with coverage stopped, from their first fixture's setup to their last fixture's teardown; every other
test, collection and the session's start are measured as before. A line that only an untraced test runs counts as
missed, so the total is a lower bound of the whole suite's coverage: the floor is never met by what was not measured.

The pause is coverage's own API (`Coverage.stop()` / `start()` of the running `Coverage.current()`): whether it is
pytest-cov's (`--cov`, each xdist worker's own) or `coverage run`'s. Consecutive untraced tests share one pause.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

UNTRACED: dict[str, str] = {
    "tests/architecture/test_fuzzing.py::": "schemathesis's 2,500 drawn requests over every operation (two thirds of "
    "a request's CPU is drawing it); the same routes' code runs in tests/api",
    "tests/architecture/test_no_server_errors.py::": "the no-500 sweep of every operation with hostile bodies",
    "tests/jobs/test_billing_ledger.py::test_the_ledger_balances_": "the ledger's four property tests: 240 random "
    "histories through the billing services, each a repeat of what the ledger's example tests run once",
    "tests/simulation/": "the seeded fault simulation's 200 seeds of one workload",
}
"""Node id prefixes of the tests coverage does not measure, with why: generative tests whose CPU buys more draws of
code the example tests run. Keep it short: every test listed is a test whose lines the floor does not see."""


def untraced(nodeid: str) -> bool:
    """Whether coverage stops for this test: listed in UNTRACED, unless PAS_COVERAGE_EVERY_TEST=1 (`make coverage`:
    the whole suite measured)."""
    return os.environ.get("PAS_COVERAGE_EVERY_TEST") != "1" and nodeid.startswith(tuple(UNTRACED))


class _Paused:
    coverage: Any | None = None
    """The `Coverage` this plugin stopped (while stopped it is no longer `Coverage.current()`), to start again."""
    controller: Any | None = None
    """pytest-cov's controller, told it is not started meanwhile (its `--cov-context=test` switches no context then)."""


def _current_coverage() -> Any | None:
    module = sys.modules.get("coverage")  # never imported here: without coverage running there is nothing to pause
    return None if module is None else module.Coverage.current()


def coverage_measures() -> bool:
    """Whether coverage measures this process, running or paused here (tests/support/untraced.py asks)."""
    return _Paused.coverage is not None or _current_coverage() is not None


def _import_chalicelib() -> None:
    """Every chalicelib module imported, measured, before the first pause: a module records its top-level lines (its
    imports, defs, classes) when first imported, and many are imported on first use (the routes' LazyModule); first
    used by an untraced test they would count as missed in this process whatever the others ran. Not the scripts run
    as processes of their own (`if __name__ == "__main__":`, the sandbox's children, the tenant function's handler):
    their in-process tests import them (tests/plugins/test_*_in_process.py, tests/documents/test_render_child_in_
    process.py), coverage does not follow their processes. Every other module is imported by the service's
    code, so the suite imports it in its measured tests too."""
    import chalicelib

    root = Path(chalicelib.__file__).parent
    for found in pkgutil.walk_packages(chalicelib.__path__, "chalicelib."):
        relative = Path(*found.name.split(".")[1:])
        source = root / relative / "__init__.py" if found.ispkg else root / relative.with_suffix(".py")
        if 'if __name__ == "__main__":' not in source.read_text(encoding="utf-8"):
            importlib.import_module(found.name)


def _resume() -> None:
    if _Paused.coverage is not None:
        _Paused.coverage.start()
        _Paused.coverage = None
        if _Paused.controller is not None:
            _Paused.controller.started, _Paused.controller = True, None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if untraced(item.nodeid):
        if _Paused.coverage is None:
            _Paused.coverage = _current_coverage()
            if _Paused.coverage is not None:
                _import_chalicelib()
                _Paused.coverage.stop()
                _Paused.controller = getattr(item.config.pluginmanager.getplugin("_cov"), "cov_controller", None)
                if _Paused.controller is not None:
                    _Paused.controller.started = False
    else:
        _resume()
    try:
        return (yield)
    finally:
        if nextitem is None:  # the worker's last test (or its batch's): measure what follows as before
            _resume()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish() -> None:
    _resume()
