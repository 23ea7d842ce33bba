"""One registry of job names (runtime/job_types.py) and one module that loads every handler (workers/handlers.py)."""
from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from chalicelib.runtime.job_types import JobType
from tests.conftest import ROOT


def _handled_job_types_after_importing(module: str) -> list[str]:
    probe = (f"import json, {module}; from chalicelib.runtime.jobs import registered_job_types; "
             "print(json.dumps(registered_job_types()))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


@pytest.mark.parametrize("entry_point", ["chalicelib.workers.queue", "chalicelib.workers.schedules"])
def test_the_worker_and_the_schedules_alone_load_a_handler_for_every_job_type_and_no_other(entry_point):
    assert _handled_job_types_after_importing(entry_point) == sorted(job_type.value for job_type in JobType)


def test_every_domain_job_handlers_module_is_loaded_by_workers_handlers():
    from chalicelib.workers.handlers import DOMAIN_JOB_HANDLERS

    on_disk = {f"chalicelib.{path.parent.name}.job_handlers"
               for path in (ROOT / "chalicelib").glob("*/job_handlers.py")}
    assert on_disk
    assert {module.__name__ for module in DOMAIN_JOB_HANDLERS} == on_disk


def _python_files():
    yield ROOT / "app.py"
    yield from sorted((ROOT / "chalicelib").rglob("*.py"))


def test_no_job_name_is_written_outside_the_registry():
    names = {job_type.value for job_type in JobType}
    written = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}"
        for path in _python_files() if path != ROOT / "chalicelib" / "runtime" / "job_types.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and any(node.value == name or node.value.startswith(f"{name}#") for name in names)
    ]
    assert written == []


def test_the_app_imports_no_job_handlers_module():
    """Handlers load with the worker that runs them, not by an import the app keeps for its side effect."""
    imported = [
        f"{node.module}.{alias.name}" if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(ast.parse((ROOT / "app.py").read_text()))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert "chalicelib.workers.queue.bp" in imported
    assert [name for name in imported if "job_handlers" in name] == []
