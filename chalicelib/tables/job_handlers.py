"""Asynchronous work of the tables domain."""
from __future__ import annotations

from typing import Any

from chalicelib.core.context import CallContext
from chalicelib.runtime.jobs import job_handler
from chalicelib.tables import service


@job_handler(service.BOOTSTRAP_JOB)
def load_bootstrap_tables(ctx: CallContext, payload: dict[str, Any]) -> dict[str, Any]:
    """Enqueued by createTenant when its package carries table resources (configuration/service.py)."""
    return service.load_bootstrap(ctx)
