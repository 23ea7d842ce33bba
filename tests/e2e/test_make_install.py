"""The install step of `make run` / `make test` says what it does: on a fresh clone it runs for minutes, and
`pip install --quiet` printed nothing all that time. A stand-in Python records what make asks of it, so the
step runs without a network and in a moment."""

from __future__ import annotations

import subprocess

from tests.e2e.support import ROOT

STAND_IN = """#!/bin/sh
case "$1 $2" in
  "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;
  "-c "*) ;;
  *) echo "stand-in python: $*" ;;
esac
"""


def test_a_first_install_announces_each_step_and_leaves_pip_its_progress_output(tmp_path):
    python = tmp_path / "python3.11"
    python.write_text(STAND_IN)
    python.chmod(0o755)
    venv = tmp_path / "venv"

    ran = subprocess.run(
        ["make", "--no-print-directory", f"VENV={venv}", f"PYTHON_FOR_VENV={python}", f"{venv}/.installed"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    pip = next(line for line in lines if line.startswith("stand-in python: -m pip install"))
    assert "--quiet" not in pip and "-q" not in pip.split() and "-r requirements-dev.txt" in pip
    assert (
        lines.index(f"creating {venv} (Python 3.11)")
        < lines.index(
            f"installing requirements-dev.txt (and requirements.txt) into {venv}: a few minutes on a first run"
        )
        < lines.index(pip)
        < lines.index(f"{venv} is ready")
    )
    assert (venv / ".installed").exists()
