"""What `pas` prints: rich text and live progress bars on a terminal; plain lines (no colour, no cursor
movement, one line per change) when NO_COLOR is set or stdout is not a terminal; JSON with `--json`. Errors go
to stderr, on one line."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TextColumn

from pas_cli import jsonio


def plain_wanted() -> bool:
    return bool(os.environ.get("NO_COLOR")) or not sys.stdout.isatty()


class Output:
    def __init__(self, as_json: bool = False) -> None:
        self.as_json = as_json
        self.plain = plain_wanted()
        options: dict[str, Any] = {"highlight": False, "emoji": False, "soft_wrap": True}
        if self.plain:
            options.update(color_system=None, force_terminal=False, force_interactive=False)
        self.console = Console(**options)
        self.errors = Console(stderr=True, **options)

    def say(self, text: str, style: str | None = None) -> None:
        """A line for a person (nothing with --json)."""
        if not self.as_json:
            self.console.print(escape(text), style=style)

    def json(self, value: Any) -> None:
        self.console.out(jsonio.dumps(value), highlight=False)

    def raw_json(self, raw: bytes) -> None:
        """An answer of the service as it answered it."""
        self.console.out(raw.decode("utf-8").strip(), highlight=False)

    def error(self, text: str) -> None:
        self.errors.print(escape(f"error: {text}"), style="bold red")

    @contextmanager
    def progress(self) -> Iterator[Bars]:
        """Bars that move in place on a terminal, lines in plain mode, nothing with --json."""
        bars = Bars(self)
        if self.plain or self.as_json:
            yield bars
            return
        with Progress(
            SpinnerColumn(finished_text="[green]✓"),
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[state]}"),
            console=self.console,
            transient=False,
        ) as live:
            bars.live = live
            yield bars


class Bars:
    """Named bars, each from 0 to its total, with a state word; in plain mode a line whenever a state changes."""

    def __init__(self, output: Output) -> None:
        self.output = output
        self.live: Progress | None = None
        self.tasks: dict[str, TaskID] = {}
        self.states: dict[str, str] = {}

    def update(self, name: str, state: str, completed: float = 0, total: float = 1) -> None:
        if self.live is not None:
            if name not in self.tasks:
                self.tasks[name] = self.live.add_task(name, total=total, state=state)
            self.live.update(self.tasks[name], completed=completed, total=total, state=state)
        elif self.states.get(name) != state:
            self.output.say(f"{name}: {state}")
        self.states[name] = state
