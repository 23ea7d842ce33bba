"""Asynchronous work of the tables domain."""
from __future__ import annotations

from typing import Any

from chalicelib.core.context import CallContext
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler
from chalicelib.tables import service
from chalicelib.tables.models import TableKind


@job_handler(JobType.TABLES_BOOTSTRAP)
def load_bootstrap_tables(ctx: CallContext, payload: dict[str, Any]) -> dict[str, Any]:
    """Enqueued by createTenant when its package carries table resources (configuration/service.py),
    then by each step for the next one (payload `cursor`)."""
    return service.load_bootstrap(ctx, int(payload.get("cursor") or 0))


@job_handler(JobType.TABLES_CLEANUP)
def clean_up_tables(ctx: CallContext, payload: dict[str, Any]) -> dict[str, Any]:
    """Enqueued by an upload that replaces a version (payload: its kind and static name), and daily for
    every tenant by workers/schedules.py (no payload: every static name)."""
    kind = payload.get("kind")
    return service.clean_up(ctx, TableKind(kind) if kind else None, payload.get("staticName"))
