"""Asynchronous work of migrations: a run queues its accounts, an account's job migrates it (service.py)."""

from __future__ import annotations

from typing import Any

from chalicelib.core.context import CallContext
from chalicelib.migration import service
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler


@job_handler(JobType.MIGRATION_RUN, payload=service.RunPayload)
def run(ctx: CallContext, payload: service.RunPayload) -> dict[str, Any]:
    return service.run(ctx, payload)


@job_handler(JobType.MIGRATION_ACCOUNT, payload=service.AccountPayload, keeps_its_job=True)
def migrate_account(ctx: CallContext, payload: service.AccountPayload) -> dict[str, Any]:
    return service.migrate_account(ctx, payload)
