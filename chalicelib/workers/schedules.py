"""Scheduled functions: each only computes `now` and enqueues one job per tenant."""
from __future__ import annotations

from typing import Any

from chalice import Blueprint, Rate

from chalicelib.core.context import SYSTEM, CallContext
from chalicelib.core.ids import new_locator
from chalicelib.runtime import jobs, wiring
from chalicelib.runtime.job_types import JobType

bp = Blueprint(__name__)


@bp.schedule(Rate(5, unit=Rate.MINUTES), name="reap_jobs")
def reap_jobs(event: Any) -> None:
    enqueue_for_every_tenant(JobType.REAP_JOBS)


@bp.schedule(Rate(1, unit=Rate.DAYS), name="clean_up_tables")
def clean_up_tables(event: Any) -> None:
    enqueue_for_every_tenant(JobType.TABLES_CLEANUP)


def enqueue_for_every_tenant(job_type: JobType) -> int:
    """One job of `job_type` per registered tenant; answers how many were enqueued."""
    from chalicelib.identity import service as identity  # on the first run: `import app` stays light

    run = CallContext(principal=SYSTEM, request_id=new_locator(), now=wiring.clock().now())
    tenants = identity.list_tenant_locators()
    for tenant in tenants:
        uow = wiring.unit_of_work(run.for_tenant(tenant))
        jobs.enqueue(uow, job_type)
        uow.commit()
    return len(tenants)
