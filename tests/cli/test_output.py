"""On a terminal `pas` draws colours, boxes and live bars; with NO_COLOR, or into a pipe, plain lines only."""

from __future__ import annotations

import os
import pty
import subprocess

from tests.cli.conftest import GADGETCOVER, PAS, environment
from tests.e2e.support import ROOT

ESCAPE = "\x1b"


def in_a_terminal(config_home, *args: str, **env: str) -> str:
    """`pas ARGS...` with stdout and stderr on a pseudo-terminal; answers what it wrote there."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [str(PAS), *args],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        cwd=ROOT,
        env=environment(config_home, TERM="xterm-256color", **env),
        start_new_session=True,
    )
    os.close(terminal)
    written = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        written += chunk
    process.wait(timeout=120)
    os.close(controller)
    return written.decode("utf-8", "replace")


def test_a_terminal_gets_colour_and_live_bars_and_no_color_plain_lines(signed_in, config_home):
    coloured = in_a_terminal(config_home, "config", "deploy", str(GADGETCOVER), "--create", "Coloured")
    assert ESCAPE in coloured and "deployed version " in coloured
    assert "table GadgetRates2026: created" not in coloured  # a bar, not a line

    plain = in_a_terminal(config_home, "config", "deploy", str(GADGETCOVER), "--create", "Plain", NO_COLOR="1")
    assert ESCAPE not in plain
    assert plain.replace("\r\n", "\n").splitlines()[-1] == "table GadgetRates2026: created"

    assert "╭" in in_a_terminal(config_home, "--help")
    help_text = in_a_terminal(config_home, "--help", NO_COLOR="1")
    assert ESCAPE not in help_text and "╭" not in help_text and help_text.startswith("Usage: pas")

    error = in_a_terminal(config_home, "clock", "show", "--tenant", "nobody", NO_COLOR="1")
    assert ESCAPE not in error and error.startswith("error: ")
    assert ESCAPE in in_a_terminal(config_home, "clock", "show", "--tenant", "nobody")


def test_a_pipe_gets_plain_text(signed_in):
    piped = signed_in("config", "deploy", str(GADGETCOVER), "--create", "Piped")
    help_text = signed_in("--help")

    for output in (piped.stdout, piped.stderr, help_text.stdout):
        assert ESCAPE not in output and "╭" not in output
    assert piped.stdout.splitlines()[-1] == "table GadgetRates2026: created"
