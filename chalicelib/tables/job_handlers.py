"""Asynchronous work of the tables domain."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chalicelib.core.context import CallContext
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler
from chalicelib.tables import service
from chalicelib.tables.models import TableKind


class BootstrapStep(BaseModel):
    cursor: int = 0
    """The number of the first table resource of the bootstrap record this step loads."""


class Cleanup(BaseModel):
    kind: TableKind | None = None
    staticName: str | None = None


@job_handler(JobType.TABLES_BOOTSTRAP, payload=BootstrapStep)
def load_bootstrap_tables(ctx: CallContext, payload: BootstrapStep) -> dict[str, Any]:
    """Enqueued by createTenant when its package carries table resources (configuration/service.py),
    then by each step for the next one (payload `cursor`)."""
    return service.load_bootstrap(ctx, payload.cursor)


@job_handler(JobType.TABLES_CLEANUP, payload=Cleanup)
def clean_up_tables(ctx: CallContext, payload: Cleanup) -> dict[str, Any]:
    """Enqueued by an upload that replaces a version (payload: its kind and static name), and daily for
    every tenant by workers/schedules.py (no payload: every static name)."""
    return service.clean_up(ctx, payload.kind, payload.staticName)
