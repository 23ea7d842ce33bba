"""One registry of job names (runtime/job_types.py) and one module that loads every handler (workers/handlers.py)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from chalicelib.runtime.job_types import JobType
from tests.conftest import ROOT


def _probe(code: str) -> object:
    """Run `code` in a fresh interpreter (what a cold container holds) and answer the JSON it prints."""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_worker_loads_a_handler_for_every_job_type_and_no_other_before_it_dispatches_its_first_message():
    handled = _probe(
        "import json\n"
        "from chalicelib.runtime.jobs import JobMessage, registered_job_types\n"
        "from chalicelib.workers import queue\n"
        "before = registered_job_types()\n"
        "queue.dispatch = lambda message: print(json.dumps([before, registered_job_types()]))\n"
        "queue.run_message(JobMessage(job_type='jobs.reap', tenant='t', job_locator='j', correlation_id='c')"
        ".model_dump_json())\n"
    )
    assert handled == [["jobs.reap"], sorted(job_type.value for job_type in JobType)]


def test_importing_the_app_loads_no_domain_job_handler_yet_a_request_may_enqueue_every_job_type():
    """createTenant enqueues tables.bootstrap in the API's container, which never loads the tables handlers."""
    enqueued = _probe(
        "import json, app\n"
        "from datetime import datetime, timezone\n"
        "from chalicelib.core.context import SYSTEM, CallContext\n"
        "from chalicelib.runtime import jobs\n"
        "from chalicelib.runtime.job_types import JobType\n"
        "class Work:\n"
        "    ctx = CallContext(principal=SYSTEM, request_id='r', now=datetime.now(timezone.utc), tenant_locator='t')\n"
        "    def __init__(self): self.items = []\n"
        "    def add(self, op): self.items.append(op)\n"
        "    def after_commit(self, action): pass\n"
        "work = Work()\n"
        "for job_type in JobType: jobs.enqueue(work, job_type)\n"
        "print(json.dumps([jobs.registered_job_types(), len(work.items)]))\n"
    )
    assert enqueued == [["jobs.reap"], len(JobType)]


def test_every_domain_job_handlers_module_is_loaded_by_workers_handlers():
    from chalicelib.workers.handlers import load_job_handlers

    on_disk = {
        f"chalicelib.{path.parent.name}.job_handlers" for path in (ROOT / "chalicelib").glob("*/job_handlers.py")
    }
    assert on_disk
    assert {module.__name__ for module in load_job_handlers()} == on_disk


def _python_files():
    yield ROOT / "app.py"
    yield from sorted((ROOT / "chalicelib").rglob("*.py"))


def test_no_job_name_is_written_outside_the_registry():
    names = {job_type.value for job_type in JobType}
    written = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}"
        for path in _python_files()
        if path != ROOT / "chalicelib" / "runtime" / "job_types.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
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


def test_the_worker_loads_a_handler_for_every_due_kind_and_no_other():
    """runtime/due_kinds.py names every kind of due entry; the domains' job_handlers modules handle them."""
    from chalicelib.runtime.due_kinds import DueKind

    handled = _probe(
        "import json\n"
        "from chalicelib.runtime import due\n"
        "from chalicelib.workers.handlers import load_job_handlers\n"
        "load_job_handlers()\n"
        "print(json.dumps(due.registered_kinds()))\n"
    )
    assert handled == sorted(kind.value for kind in DueKind)
