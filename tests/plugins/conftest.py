"""A fake HostApi over in-memory tables, a shared warm runner, and plugin packages as module files."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.core import codes
from chalicelib.core.ids import new_locator, new_tenant_locator
from chalicelib.plugins.local import Limits, LocalProcessRunner

NOW = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)


class FakeHost:
    """`tables`: name -> {key tuple: row}; `ranges`: name -> [(key tuple, low, high, row)], a row
    matching when low <= bound < high. Records every call in `calls`."""

    def __init__(
        self,
        tables: dict[str, dict[tuple[str, ...], dict[str, Any]]] | None = None,
        ranges: dict[str, list[tuple[tuple[str, ...], Decimal, Decimal, dict[str, Any]]]] | None = None,
    ):
        self.tables = tables or {}
        self.ranges = ranges or {}
        self.calls: list[tuple[Any, ...]] = []

    def lookup(self, table: str, key: list[str], date: str | None) -> dict[str, Any] | None:
        self.calls.append(("lookup", table, tuple(key), date))
        if table not in self.tables:
            raise codes.not_found("table", table)
        return self.tables[table].get(tuple(key))

    def range_lookup(self, table: str, key: list[str], bound: Decimal, date: str | None) -> dict[str, Any] | None:
        self.calls.append(("range_lookup", table, tuple(key), bound, date))
        if table not in self.ranges:
            raise codes.not_found("table", table)
        return next(
            (row for row_key, low, high, row in self.ranges[table] if row_key == tuple(key) and low <= bound < high),
            None,
        )

    def now(self) -> datetime:
        return NOW


def modules(**sources: str) -> dict[str, bytes]:
    """Module files as a deployed package holds them: modules(rating="def rate(r): ...")."""
    return {f"plugins/python/{name}.py": source.encode() for name, source in sources.items()}


@pytest.fixture(scope="module")
def runner() -> Iterator[LocalProcessRunner]:
    """One warm runner per test module, with a short wall clock so hanging plugins fail fast."""
    local = LocalProcessRunner(Limits(timeout_seconds=1.5))
    yield local
    local.close()


@pytest.fixture
def tenant() -> str:
    """A fresh tenant locator (the runner needs no tenant record)."""
    return new_tenant_locator()


@pytest.fixture
def version() -> str:
    return new_locator()
