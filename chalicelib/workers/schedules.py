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

Test-clock tenants (DECISIONS.md "Test clocks") are skipped by every schedule of business work: their
due work runs when their clock is advanced. The job reaper still visits them: leases are real time, and
a test clock's advance runs in jobs like any other.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from chalice import Blueprint, Rate
from pydantic import BaseModel

from chalicelib.core.clock import isoformat
from chalicelib.core.context import SYSTEM, CallContext
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.runtime import jobs, observability, wiring
from chalicelib.runtime.job_types import JobType

bp = Blueprint(__name__)

TENANTS_PER_STEP = 100
"""Tenants one invocation or fan-out job enqueues for: a commit and a message each, well inside a timeout."""
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
EVERY_5_MINUTES, EVERY_15_MINUTES, DAILY = timedelta(minutes=5), timedelta(minutes=15), timedelta(days=1)


@bp.schedule(Rate(5, unit=Rate.MINUTES), name="reap_jobs")
@observability.handler
def reap_jobs(event: Any) -> None:
    """Every tenant, test-clock ones included: leases are real time (a test clock's advance is a job too)."""
    enqueue_for_every_tenant(JobType.REAP_JOBS, EVERY_5_MINUTES, test_clocks=True)


@bp.schedule(Rate(1, unit=Rate.DAYS), name="clean_up_tables")
@observability.handler
def clean_up_tables(event: Any) -> None:
    enqueue_for_every_tenant(JobType.TABLES_CLEANUP, DAILY)


DUE_SCHEDULE = "run_due_work"


@bp.schedule(Rate(15, unit=Rate.MINUTES), name=DUE_SCHEDULE)
@observability.handler
def run_due_work(event: Any) -> None:
    """Every quarter hour, each tenant's due entries up to the schedule's time (runtime/due.py): renewal
    steps, and billing's invoice generation, due and grace moments. Work falls due at local midnights
    (lead days count on the wall clock of a policy's or account's time zone), and every time zone's
    offset is a whole number of quarter hours, so a quarter-hourly run meets each such moment within
    15 minutes; an hourly one would leave zones like India's and Nepal's up to 45 minutes late, a daily one
    most zones hours late. An idle tenant costs one Query per run. The job works as of the schedule's
    time, however long its message waits."""
    enqueue_for_every_tenant(JobType.DUE_RUN, EVERY_15_MINUTES, with_as_of=True)


def enqueue_for_every_tenant(
    job_type: JobType, every: timedelta, *, with_as_of: bool = False, test_clocks: bool = False
) -> int:
    """One job of `job_type` per registered tenant (`test_clocks`: test-clock tenants too, else not), once
    in each period `every` long (`with_as_of`: payload `asOf`, the time of this run): the first page here,
    the rest by fan-out jobs. Answers how many this call enqueued."""
    run = CallContext(
        principal=SYSTEM, request_id=observability.correlation_id() or new_locator(), now=wiring.clock().now()
    )
    period = EPOCH + (run.now - EPOCH) // every * every
    return fan_out(
        run,
        FanOut(
            jobType=str(job_type),
            payload={"asOf": isoformat(run.now)} if with_as_of else {},
            period=period,
            testClocks=test_clocks,
        ),
    )


class FanOut(BaseModel):
    """What a fan-out enqueues: a job of `jobType` with `payload` for each tenant (`testClocks`: test-clock
    tenants too), once in the period starting at `period`. A `schedules.fanOut` job's payload is one, with
    the tenant it continues after."""

    jobType: str
    payload: dict[str, Any]
    period: datetime
    testClocks: bool = False
    after: str | None = None


def fan_out(run: CallContext, work: FanOut, after: str | None = None) -> int:
    """Enqueues the jobs of the page of tenants after `after` (after the fan-out job for the page that
    follows, when there may be one); answers how many were new. A page's test-clock tenants are passed
    over unless the work is for them too; the fan-out job stays with the page's last tenant."""
    from chalicelib.identity import service as identity  # on the first run: `import app` stays light

    tenants, more = identity.tenants_after(after, TENANTS_PER_STEP)
    if more and tenants:
        last = tenants[-1].locator
        jobs.enqueue_once(
            run.for_tenant(last),
            JobType.SCHEDULE_FAN_OUT,
            work.model_copy(update={"after": last}),
            locator=_locator(work.period, f"{JobType.SCHEDULE_FAN_OUT}#{work.jobType}#after#{last}"),
        )
    return sum(
        jobs.enqueue_once(
            run.for_tenant(tenant.locator),
            JobType(work.jobType),
            work.payload or None,
            locator=_locator(work.period, f"{work.jobType}#{tenant.locator}"),
        )
        for tenant in tenants
        if work.testClocks or not tenant.testClock
    )


def _locator(period: datetime, seed: str) -> str:
    """A job locator of the period, the same for the same `seed` in it."""
    return derived_locator(period, f"{isoformat(period)}#{seed}")
