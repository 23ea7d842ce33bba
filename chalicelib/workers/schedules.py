"""Scheduled functions: each only computes `now` and enqueues one job per tenant."""
from __future__ import annotations

from typing import Any

from chalice import Blueprint, Rate

from chalicelib.core.clock import isoformat
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


@bp.schedule(Rate(1, unit=Rate.DAYS), name="auto_renew_policies")
def auto_renew_policies(event: Any) -> None:
    """Daily: lead days are whole days, so a step is done on the day it falls due; each run re-reads the
    policies whose renewal is under way (created, not yet issued), which an hourly run would do 24 times
    as often. The job works as of the schedule's time, however long its message waits."""
    enqueue_for_every_tenant(JobType.POLICIES_AUTO_RENEW, with_as_of=True)


def enqueue_for_every_tenant(job_type: JobType, *, with_as_of: bool = False) -> int:
    """One job of `job_type` per registered tenant (`with_as_of`: payload `asOf`, the time of this run);
    answers how many were enqueued."""
    from chalicelib.identity import service as identity  # on the first run: `import app` stays light

    run = CallContext(principal=SYSTEM, request_id=new_locator(), now=wiring.clock().now())
    payload = {"asOf": isoformat(run.now)} if with_as_of else None
    tenants = identity.list_tenant_locators()
    for tenant in tenants:
        uow = wiring.unit_of_work(run.for_tenant(tenant))
        jobs.enqueue(uow, job_type, payload)
        uow.commit()
    return len(tenants)
