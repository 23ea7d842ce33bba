"""What this process remembers of tables, so repeated lookups cost no round trip.

- Selections (which versions exist), per tenant and record: trusted for SELECTION_TTL_SECONDS after
  they were read, measured on the request clock, and replaced at once by this process's own uploads.
  A stale selection still serves as a guess of the version, so the refresh can read the row with it.
- Rows (lookup rows and range-table items, absent ones included) and whole constraint tables, per
  version: a version never changes once stored, so these never go stale; a new version has new keys.

Each map is bounded, least recently used out, because one process serves many tenants.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from chalicelib.tables.constraints import ConstraintTable
from chalicelib.tables.models import Selection

SELECTION_TTL_SECONDS = 5
MAX_SELECTIONS = 2_000
MAX_ROWS = 50_000
MAX_CONSTRAINT_TABLES = 64

K = TypeVar("K")
V = TypeVar("V")


class _Lru(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


@dataclass(frozen=True)
class CachedSelection:
    selection: Selection
    read_at: datetime

    def fresh(self, now: datetime) -> bool:
        return timedelta(0) <= now - self.read_at < timedelta(seconds=SELECTION_TTL_SECONDS)


@dataclass(frozen=True)
class _Absent:
    """A row looked up and not found (remembered too: the version will never gain it)."""


ABSENT = _Absent()

_selections: _Lru[tuple[str, str], CachedSelection] = _Lru(MAX_SELECTIONS)
_rows: _Lru[tuple[str, str, str], dict[str, Any] | _Absent] = _Lru(MAX_ROWS)
_constraint_tables: _Lru[tuple[str, str], ConstraintTable] = _Lru(MAX_CONSTRAINT_TABLES)


def selection(tenant: str, record: str) -> CachedSelection | None:
    return _selections.get((tenant, record))


def put_selection(tenant: str, record: str, value: Selection, read_at: datetime) -> None:
    _selections.put((tenant, record), CachedSelection(value, read_at))


def row(tenant: str, version: str, item: str) -> dict[str, Any] | _Absent | None:
    """The item, ABSENT when it is known not to exist, None when not remembered."""
    return _rows.get((tenant, version, item))


def put_row(tenant: str, version: str, item: str, value: dict[str, Any] | None) -> None:
    _rows.put((tenant, version, item), ABSENT if value is None else value)


def constraint_table(tenant: str, version: str) -> ConstraintTable | None:
    return _constraint_tables.get((tenant, version))


def put_constraint_table(tenant: str, version: str, table: ConstraintTable) -> None:
    _constraint_tables.put((tenant, version), table)


def clear() -> None:
    """Forget everything (a cold process, in tests and benchmarks)."""
    for entries in (_selections, _rows, _constraint_tables):
        entries.clear()
