"""The plugin runner's port, the host API it answers, and the values plugin answers turn into."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, Protocol

from chalicelib.core import codes
from chalicelib.core.errors import DomainError

FailureReason = Literal[
    "exception",  # the plugin raised (its own bug, or a pas lookup it did not handle)
    "refused",  # the sandbox refused an operation: a file outside its directory, a socket, a process
    "timeout",  # the wall-clock limit of one call
    "cpu_limit",  # the process's CPU-time limit
    "memory_limit",  # the address-space limit
    "crashed",  # the process died without answering
    "malformed",  # an answer that is not JSON, not an object, or not the shape DECISIONS.md gives
    "missing",  # the function is not in the deployed modules
    "unavailable",  # the runner could not start or reach the plugin
]


class PluginFailure(DomainError):
    """A plugin that did not answer usefully. Runners *return* it (a misbehaving plugin is an
    outcome, never an exception escaping the service); the service helpers raise it, and the flow
    that ran the plugin reports `message` as a validation error and keeps its previous state."""

    def __init__(self, function: str, reason: FailureReason, detail: str):
        super().__init__(f"The plugin function {function} failed: {detail}", codes.PLUGIN_FAILED)
        self.function = function
        self.reason = reason
        self.detail = detail


PluginResult = dict[str, Any] | PluginFailure
"""What one call answers: the plugin's JSON object (numbers as int or Decimal) or the failure."""


class HostApi(Protocol):
    """What `import pas` reaches from inside a plugin, answered by the host for the calling tenant.
    A `DomainError` raised here (unknown table, bad key) reaches the plugin as `pas.PasError`; any
    other exception aborts the call and propagates to whoever ran the plugin."""

    def lookup(self, table: str, key: list[str], date: str | None) -> Mapping[str, Any] | None: ...

    def range_lookup(
        self, table: str, key: list[str], bound: Decimal, date: str | None
    ) -> Mapping[str, Any] | None: ...

    def now(self) -> datetime: ...


class PluginRunner(Protocol):
    """Runs `function_name` from a tenant's deployed `plugins/python/` modules outside this process.
    `module_files` maps package paths (`plugins/python/rating.py`) to their bytes; runners that
    keep the code elsewhere (a deployed Lambda) ignore it. `request` holds JSON types, `Decimal`
    and nothing else."""

    def call(
        self,
        tenant: str,
        config_version: str,
        module_files: Mapping[str, bytes],
        function_name: str,
        request: Mapping[str, Any],
        host: HostApi,
    ) -> PluginResult: ...


# --- what plugin answers become ------------------------------------------------------------------


@dataclass(frozen=True)
class Charge:
    """One rated charge: `amount` is rounded to the currency's minor unit; `rate` is the plugin's
    rate per duration unit (None when it gave an amount)."""

    element_locator: str
    element_static_locator: str | None
    charge_type: str
    charge_category: str | None
    amount: Decimal
    rate: Decimal | None


FlagLevel = Literal["approve", "block", "decline", "reject", "info"]


@dataclass(frozen=True)
class PluginFlag:
    """An underwriting flag a plugin raised (stored beside manual flags by the quote or transaction)."""

    level: FlagLevel
    note: str
    tag: str
    element_locator: str | None


@dataclass(frozen=True)
class ElementChange:
    """What a precommit plugin changes on one element: keys removed, then set."""

    locator: str
    set_data: dict[str, Any]
    remove_data: dict[str, Any]
    set_coverage_terms: dict[str, Any]
    remove_coverage_terms: dict[str, Any]


@dataclass(frozen=True)
class ValidationItem:
    """The spec's ValidationItemResponse: the messages about one element (or the quote itself)."""

    locator: str
    element_type: str
    errors: tuple[str, ...]


UnderwritingResult = Literal["passed", "rejected", "declined", "underwrittenBlocked"]


@dataclass(frozen=True)
class UnderwritingOutcome:
    """`result`: where underwriting leaves the quote or transaction (`passed` means `underwritten`,
    or `earlyUnderwritten` before pricing). `status`: the level that decided it, for
    `underwritingStatus`; `info` when nothing stood in the way."""

    result: UnderwritingResult
    status: FlagLevel
