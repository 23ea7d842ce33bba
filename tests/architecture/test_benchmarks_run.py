"""Every benchmark runs, at a smoke size, so a change that breaks one fails the suite (issue 28 point 5: two had
crashed unnoticed after the code they drive changed). Each runs as `make bench` runs it, in a fresh interpreter
of its own, and must exit 0; its figures are not judged here (benchmarks/README.md records them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"

SMOKE = {
    "anonymization.py": ["--policies", "1", "--events", "10"],
    "auth_roundtrips.py": ["--requests", "3", "--import-runs", "1"],
    "auto_renewal.py": ["--books", "2"],
    "billing.py": ["--books", "2", "--open-invoices", "2", "--clock-policies", "1"],
    "billing_delinquency.py": ["--books", "2", "--open-invoices", "2"],
    "billing_fleet.py": ["--policies", "3"],
    "cold_start.py": ["--smoke"],
    "config_deploy.py": ["--repeat", "1"],
    "documents.py": ["--renders", "1"],
    "migration.py": ["--accounts", "2", "--kill"],
    "migration_workers.py": ["--accounts", "4"],
    "history_reads.py": ["--requests", "1", "--earlier", "1", "2", "--elements", "5"],
    "local_stack.py": ["--skip-stack", "--items", "50", "--runs", "2", "--bulk-rows", "50"],
    "plugin_stack.py": ["--tenants", "1", "--prices", "2"],
    "plugins.py": ["--calls", "10"],
    "quotes.py": ["--requests", "1"],
    "schedules.py": ["--requests", "1", "--rows", "50"],
    "tables.py": ["--rows", "100", "--lookups", "10"],  # its hot-key line reads 100 keys
    "tenant_function.py": ["--calls", "1"],
    "transactions.py": ["--smoke", "--requests", "1"],
}
"""The arguments of each benchmark's smoke run: every part of it, at the least size that runs it."""
MORE_SMOKE = [("billing_fleet.py", ["--policies", "3", "--delinquency"])]
"""A benchmark's other phases that one run cannot reach (billing_fleet.py pays its invoice or lets it lapse)."""
RUNS = [*SMOKE.items(), *MORE_SMOKE]


def test_every_benchmark_has_a_smoke_run():
    scripts = sorted(path.name for path in BENCHMARKS.glob("[!_]*.py"))
    assert scripts == sorted(SMOKE), "give a new benchmark its smoke arguments here"


@pytest.mark.parametrize(("script", "arguments"), RUNS, ids=[*SMOKE, *(" ".join([s, *a]) for s, a in MORE_SMOKE)])
def test_the_benchmark_runs(script, arguments):
    environ = {
        name: value for name, value in os.environ.items() if not name.startswith(("AWS_", "PAS_", "POWERTOOLS_"))
    }  # as from a shell: no test settings
    result = subprocess.run(
        [sys.executable, "-u", str(BENCHMARKS / script), *arguments],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, (
        f"{script} {' '.join(arguments)}: exit {result.returncode}\n{result.stdout[-1500:]}\n{result.stderr[-3000:]}"
    )
