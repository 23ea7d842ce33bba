"""Scheduled functions: each enqueues one job per tenant, a page of tenants at a time.

A scheduled function has one Lambda timeout for its work: with thousands of tenants, a commit and a
message per tenant do not fit. So it enqueues the first page of TENANTS_PER_STEP tenants itself and,
when there are more, a `schedules.fanOut` job (job_handlers.py) that enqueues the next page and, first,
the job for the page after it: as many workers as the queue feeds enqueue consecutive pages at once. A
fan-out job is kept with the last tenant of the page before it (jobs belong to a tenant), so that
tenant's reaper puts it back should its worker die.

Once per period: every job's locator is derived from the job type, the period the run falls in (the
schedule's rate, counted from the epoch: a UTC day for a daily one) and the tenant (a fan-out job's:
the tenant it continues after), so a run repeated in the same period (a retried invocation, a
redelivered message) enqueues nothing a second time.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from chalice import Blueprint, Rate

from chalicelib.core.clock import isoformat, parse_datetime
from chalicelib.core.context import SYSTEM, CallContext
from chalicelib.core.errors import AlreadyExists
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.runtime import jobs, wiring
from chalicelib.runtime.job_types import JobType

bp = Blueprint(__name__)

TENANTS_PER_STEP = 100
"""Tenants one invocation or fan-out job enqueues for: a commit and a message each, well inside a timeout."""
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
EVERY_5_MINUTES, DAILY = timedelta(minutes=5), timedelta(days=1)


@bp.schedule(Rate(5, unit=Rate.MINUTES), name="reap_jobs")
def reap_jobs(event: Any) -> None:
    enqueue_for_every_tenant(JobType.REAP_JOBS, EVERY_5_MINUTES)


@bp.schedule(Rate(1, unit=Rate.DAYS), name="clean_up_tables")
def clean_up_tables(event: Any) -> None:
    enqueue_for_every_tenant(JobType.TABLES_CLEANUP, DAILY)


@bp.schedule(Rate(1, unit=Rate.DAYS), name="auto_renew_policies")
def auto_renew_policies(event: Any) -> None:
    """Daily: lead days are whole days, so a step is done on the day it falls due; each run re-reads the
    policies whose renewal is under way (created, not yet issued), which an hourly run would do 24 times
    as often. The job works as of the schedule's time, however long its message waits."""
    enqueue_for_every_tenant(JobType.POLICIES_AUTO_RENEW, DAILY, with_as_of=True)


def enqueue_for_every_tenant(job_type: JobType, every: timedelta, *, with_as_of: bool = False) -> int:
    """One job of `job_type` per registered tenant, once in each period `every` long (`with_as_of`:
    payload `asOf`, the time of this run): the first page here, the rest by fan-out jobs. Answers how
    many this call enqueued."""
    run = CallContext(principal=SYSTEM, request_id=new_locator(), now=wiring.clock().now())
    period = EPOCH + (run.now - EPOCH) // every * every
    return fan_out(run, FanOut(str(job_type), {"asOf": isoformat(run.now)} if with_as_of else {}, period))


@dataclass(frozen=True)
class FanOut:
    """What a fan-out enqueues: a job of `job_type` with `payload` for each tenant, once in the period
    starting at `period`. A `schedules.fanOut` job's payload is one, with the tenant it continues after."""

    job_type: str
    payload: dict[str, Any]
    period: datetime

    def continued_after(self, tenant: str) -> dict[str, Any]:
        return {"jobType": self.job_type, "payload": self.payload, "period": isoformat(self.period),
                "after": tenant}

    @classmethod
    def of(cls, payload: dict[str, Any]) -> tuple[FanOut, str]:
        """The fan-out a `schedules.fanOut` job's payload names, and the tenant it continues after."""
        return cls(payload["jobType"], dict(payload["payload"]), parse_datetime(payload["period"])), payload["after"]


def fan_out(run: CallContext, work: FanOut, after: str | None = None) -> int:
    """Enqueues the jobs of the page of tenants after `after` (after the fan-out job for the page that
    follows, when there may be one); answers how many were new."""
    from chalicelib.identity import service as identity  # on the first run: `import app` stays light

    tenants, more = identity.tenant_locators_after(after, TENANTS_PER_STEP)
    if more and tenants:
        _enqueue_once(run.for_tenant(tenants[-1]), JobType.SCHEDULE_FAN_OUT, work.continued_after(tenants[-1]),
                      _locator(work.period, f"{JobType.SCHEDULE_FAN_OUT}#{work.job_type}#after#{tenants[-1]}"))
    return sum(_enqueue_once(run.for_tenant(tenant), JobType(work.job_type), work.payload or None,
                             _locator(work.period, f"{work.job_type}#{tenant}")) for tenant in tenants)


def _enqueue_once(ctx: CallContext, job_type: JobType, payload: dict[str, Any] | None, locator: str) -> bool:
    uow = wiring.unit_of_work(ctx)
    jobs.enqueue(uow, job_type, payload, locator=locator)
    try:
        uow.commit()
    except AlreadyExists:
        return False  # enqueued earlier in this period
    return True


def _locator(period: datetime, seed: str) -> str:
    """A job locator of the period, the same for the same `seed` in it."""
    return derived_locator(period, f"{isoformat(period)}#{seed}")
