"""Modules that route modules load on first use, so `import app` (a cold start) builds no domain models.

A route module writes

    if TYPE_CHECKING:
        from chalicelib.accounts import schemas, service
    else:
        schemas, service = lazy_modules("chalicelib.accounts", "schemas", "service")

so type checkers and import-linter see the real imports (the layering contracts still bind them), while at
run time `service.create_account` imports chalicelib.accounts.service the first time a request needs it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stands for a module until an attribute is read; then imports it (once) and answers from it."""

    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{' (loaded)' if self._module else ''}>"


def lazy_modules(package: str, *names: str) -> tuple[LazyModule, ...]:
    return tuple(LazyModule(f"{package}.{name}") for name in names)
