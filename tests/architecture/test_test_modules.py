"""No module imports from a test module (tests/**/test_*.py): what tests share lives in support modules
(tests/support/, a folder's support.py, tests/jobs/support.py, ...), so running, moving or deleting one test module
never changes what another one runs, and pytest does not import a test module a second time under another name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST_MODULE = re.compile(r"^tests(\.\w+)*\.test_\w+$")


def imports_of_test_modules(source: str) -> list[tuple[int, str]]:
    """(line, module) of every import of a test module in `source`, at any depth (inside functions too)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if TEST_MODULE.match(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.level:  # `from .test_sibling import ...`
            if (node.module or "").rpartition(".")[2].startswith("test_"):
                found.append((node.lineno, "." * node.level + (node.module or "")))
        elif isinstance(node, ast.ImportFrom) and node.module:
            if TEST_MODULE.match(node.module):
                found.append((node.lineno, node.module))
            else:  # `from tests.jobs import test_auto_renewal`
                found += [
                    (node.lineno, f"{node.module}.{alias.name}")
                    for alias in node.names
                    if TEST_MODULE.match(f"{node.module}.{alias.name}")
                ]
    return found


def test_no_module_imports_from_a_test_module():
    modules = sorted([*(ROOT / "tests").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")])
    assert len(modules) > 300

    found = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in modules
        for line, module in imports_of_test_modules(path.read_text())
    ]

    assert found == [], "move what they share into a support module:\n" + "\n".join(found)


def test_each_kind_of_import_of_a_test_module_is_found_and_support_modules_pass():
    source = """
from tests.jobs.test_billing_time_travel import advance
import tests.api.identity.test_escalation
from tests.jobs import test_auto_renewal, support


def helper():
    from tests.plugins.test_service import deployed
from tests.jobs.support import PLANS
from tests.support.clock import advance
from tests.api.transactions.real_packages import CASES
from .test_sibling import something
"""
    assert sorted(imports_of_test_modules(source)) == [
        (2, "tests.jobs.test_billing_time_travel"),
        (3, "tests.api.identity.test_escalation"),
        (4, "tests.jobs.test_auto_renewal"),
        (8, "tests.plugins.test_service"),
        (12, ".test_sibling"),
    ]
