"""`pas` driven as a subprocess against the local stack (local/run.py, as tests/e2e starts it: moto server,
`chalice local`, the worker), one stack for the session; every test signs in to a config directory of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e import conftest as e2e
from tests.e2e.support import ROOT

PAS = Path(sys.executable).with_name("pas")
GADGETCOVER = ROOT / "docs" / "examples" / "gadgetcover"

Pas = Callable[..., subprocess.CompletedProcess[str]]
local_stack = e2e.local_stack
"""The e2e tests' session-stack fixture: one `make run` for the session's CLI tests."""


def environment(config_home: Path, **extra: str) -> dict[str, str]:
    """The test's own config directory, nothing of the caller's PAS_* settings, no colour unless asked."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PAS_") and k not in ("NO_COLOR", "FORCE_COLOR")}
    return {**environ, "XDG_CONFIG_HOME": str(config_home), "COLUMNS": "200", **extra}


@pytest.fixture
def config_home(tmp_path) -> Path:
    return tmp_path / "config"


@pytest.fixture
def pas(config_home) -> Pas:
    """Runs `pas ARGS...` (stdout piped: not a terminal), answering the completed process; `new_session`: without
    a controlling terminal (a password prompt then reads stdin)."""

    assert PAS.exists(), f"{PAS} is missing: `make` installs pas into .venv (pip install -e . of pyproject.toml)"

    def run(
        *args: str,
        timeout: float = 300,
        env: dict[str, str] | None = None,
        input: str | None = None,
        new_session: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(PAS), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=ROOT,
            env=environment(config_home, **(env or {})),
            input=input,
            start_new_session=new_session,
        )

    return run


@pytest.fixture
def signed_in(pas, local_stack) -> Pas:
    """`pas` with the default profile signed in to the stack as the administrator."""
    done = pas("login", "--url", local_stack.base_url, "--username", "admin@example.com", env={"PAS_PASSWORD": "admin"})
    assert done.returncode == 0, done.stderr
    return pas
