"""The deployed models of this process, by tenant and version.

A version never changes once deployed, so an entry never goes stale: the only question a request
asks the table is which version is current. The cache is bounded (least recently used out) because
one process serves many tenants and a large model holds a few megabytes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from chalicelib.configuration.models import DeployedConfiguration

MAX_ENTRIES = 32

_entries: OrderedDict[tuple[str, str], DeployedConfiguration] = OrderedDict()
_lock = threading.Lock()


def get(tenant: str, version: str) -> DeployedConfiguration | None:
    with _lock:
        found = _entries.get((tenant, version))
        if found is not None:
            _entries.move_to_end((tenant, version))
        return found


def put(tenant: str, configuration: DeployedConfiguration) -> None:
    with _lock:
        _entries[(tenant, configuration.version)] = configuration
        _entries.move_to_end((tenant, configuration.version))
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)


def clear() -> None:
    """Forget every model (a cold process, in tests and benchmarks)."""
    with _lock:
        _entries.clear()
