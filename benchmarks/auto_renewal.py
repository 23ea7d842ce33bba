"""The auto-renewal run over a book of due policies (issue 12, "Measured"): renewals per second and
DynamoDB calls per renewal, which must not grow with the book.

    .venv/bin/python benchmarks/auto_renewal.py [--books 1000 10000] [--profile]

In one process, against one in-process moto (local/lean_moto.py, as the tests), with a fixed clock and
the tests' InlineJobQueue (the job and its continuation steps run one after the other, as one worker
would run them). Each book is a fresh tenant with the quotes test configuration (tests/support/configs.py:
PersonalAuto's rating plugin reads two tables) and the plan `Auto` (create 30, accept 20, issue 10 days
before the term end); its policies (one vehicle, one account) are issued through
policies.service.add_issued_policy, ten to a TransactWriteItems, all ending 2027-02-01T05:00Z. Then the
job runs as the daily schedule would on the three days the plan's steps fall due: created and priced,
accepted, issued. Renewals per second = policies / (the three runs' time). A last book runs once
on the issue day with every step due at once (create, then issue: two commits per policy).

`--profile create|accept|issue` prints where that day's run of the first book spends its time (cProfile).
Absolute times are moto's in one Python process: read the call counts and the shares.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
os.environ.update({
    "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_SESSION_TOKEN": "bench",
    "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "PAS_STAGE": "test", "PAS_EVENT_SETTLE_MS": "0",
})
os.environ.pop("PAS_AWS_ENDPOINT_URL", None)
sys.path.insert(0, str(ROOT))

START = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)
DAYS = {"create": datetime(2027, 1, 2, 6, tzinfo=timezone.utc), "accept": datetime(2027, 1, 12, 6, tzinfo=timezone.utc),
        "issue": datetime(2027, 1, 22, 6, tzinfo=timezone.utc)}
PLANS = {"Auto": {"generateAutoRenewals": True, "renewalCreateLeadDays": 30, "renewalAcceptLeadDays": 20,
                  "renewalIssueLeadDays": 10}}
POLICIES_PER_COMMIT = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--steps", type=int, default=0,
                        help="run only the first N job steps (of 100 policies) of each run: a slice of a large book")
    parser.add_argument("--all-due-at-once", action=argparse.BooleanOptionalAction, default=True,
                        help="a last book of the first size, renewed in one run with every step due")
    parser.add_argument("--profile", choices=list(DAYS), help="profile the first book's run of that day (cProfile)")
    options = parser.parse_args()

    import boto3
    from chalice.test import Client
    from moto import mock_aws

    from chalicelib.settings import reload
    from chalicelib.storage import clients
    from local.lean_moto import lean_dynamodb
    from local.resources import create_all

    reload()
    with mock_aws(), lean_dynamodb():
        clients.reset()
        create_all(boto3.session.Session(region_name="us-east-1"))
        from app import app
        from chalicelib.core.clock import FixedClock, SystemClock
        from chalicelib.core.ids import new_locator
        from chalicelib.identity import service as identity
        from chalicelib.runtime import wiring
        from chalicelib.runtime.jobs import InlineJobQueue
        from chalicelib.settings import settings
        from chalicelib.workers.handlers import load_job_handlers

        load_job_handlers()
        clock, queue = FixedClock(START), InlineJobQueue()
        wiring.override(clock=clock, job_queue=queue)
        token, _ = identity.sign_in(settings().admin_username, settings().admin_password, SystemClock().now(),
                                    new_locator())
        calls: list[str] = []
        emulator = Stopwatch()
        events = clients.dynamodb().meta.events
        events.register("before-call.dynamodb", lambda event_name, **_: calls.append(event_name.rsplit(".", 1)[-1]))
        events.register("before-call.dynamodb", emulator.start)
        events.register("after-call.dynamodb", emulator.stop)
        print(f"load average at start: {_load()}\n")
        with Client(app, stage_name="test", project_dir=str(ROOT)) as api:
            for size in options.books:
                tenant = book(api, token, clock, size)
                runs = []
                for day, moment in DAYS.items():
                    profile = day == options.profile and size == options.books[0]
                    runs.append((day, *run(tenant, clock, queue, calls, emulator, moment, profile, options.steps)))
                report(size, runs)
            if not options.all_due_at_once:
                return
            tenant = book(api, token, clock, options.books[0])
            report(options.books[0], [("all due at once",
                                       *run(tenant, clock, queue, calls, emulator, DAYS["issue"], False,
                                            options.steps))])


def book(api: Any, token: str, clock: Any, size: int) -> str:
    """A fresh tenant with `size` PersonalAuto policies on the plan Auto, ending 2027-02-01T05:00Z."""
    from chalicelib.policies import service as policies
    from chalicelib.runtime import wiring
    from tests.api.policies.support import issuance
    from tests.api.quotes.support import new_account
    from tests.builders import system_ctx
    from tests.support.configs import quotes_model, quotes_tenant

    clock.set(START)
    model = quotes_model()
    model["autoRenewalPlans"] = PLANS
    tenant = quotes_tenant(api, token, model)
    account = new_account(api, token, tenant)
    started = time.perf_counter()
    for first in range(0, size, POLICIES_PER_COMMIT):
        ctx = system_ctx().for_tenant(tenant)
        uow = wiring.unit_of_work(ctx)
        for _ in range(min(POLICIES_PER_COMMIT, size - first)):
            policies.add_issued_policy(ctx, uow, issuance(tenant, account, autoRenewalPlanName="Auto"))
        uow.commit()
    print(f"book of {size}: issued in {time.perf_counter() - started:.1f} s")
    return tenant


class Stopwatch:
    """The time spent inside DynamoDB calls (botocore's before-call to after-call: moto's work)."""

    def __init__(self) -> None:
        self.total, self._since = 0.0, 0.0

    def start(self, **_: Any) -> None:
        self._since = time.perf_counter()

    def stop(self, **_: Any) -> None:
        self.total += time.perf_counter() - self._since


def run(tenant: str, clock: Any, queue: Any, calls: list[str], emulator: Stopwatch, moment: datetime,
        profile: bool, steps: int) -> tuple[float, float, dict[str, int], Counter[str], str]:
    """The job as the schedule enqueues it at `moment`, and its continuations (the first `steps` of them,
    or all): (seconds, of them inside DynamoDB calls, the summed counts of the steps' results, the DynamoDB
    calls, the load average after)."""
    from chalicelib.core.clock import isoformat
    from chalicelib.runtime import wiring
    from chalicelib.runtime.job_types import JobType
    from chalicelib.runtime.jobs import JobMessage, dispatch, enqueue, get_job
    from tests.builders import system_ctx

    clock.set(moment)
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    enqueue(uow, JobType.POLICIES_AUTO_RENEW, {"asOf": isoformat(moment)})
    uow.commit()
    ran: list[str] = [message.job_locator for message in queue.sent[-1:]]
    sent_before = len(queue.sent)
    calls.clear()
    emulator.total = 0.0
    def drain() -> None:
        ran = 0
        while queue.messages and (not steps or ran < steps):
            dispatch(JobMessage.model_validate_json(queue.messages.pop(0)))
            ran += 1
        queue.messages.clear()

    started = time.perf_counter()
    if profile:
        profiler = cProfile.Profile()
        profiler.runcall(drain)
    else:
        drain()
    seconds = time.perf_counter() - started
    counted = Counter(calls)
    ran += [message.job_locator for message in queue.sent[sent_before:]]
    totals: Counter[str] = Counter()
    for locator in ran:
        job = get_job(tenant, locator)
        if job["status"] == "queued":
            continue  # beyond --steps
        assert job["status"] == "finished", job
        totals["jobSteps"] += 1
        result = job["result"]
        assert not result["failed"], result["failed"][:3]
        totals.update({name: result[name] for name in ("policiesRead", "created", "priced", "accepted", "issued",
                                                       "alreadyDone")})
    if profile:
        print(f"\n{moment:%Y-%m-%d}, first book: where the time goes")
        stats = pstats.Stats(profiler).sort_stats("cumulative")
        stats.print_stats(25)
        print("the same, our code only (chalicelib, below the job handler):")
        stats.print_stats(r"chalicelib/(?!runtime/jobs|transactions/job_handlers)", 40)
        print("by own time, outside moto and botocore:")
        stats.sort_stats("tottime").print_stats(r"^(?!.*(moto|botocore))", 25)
    clock.set(START)
    return seconds, emulator.total, {name: int(value) for name, value in totals.items()}, counted, _load()


def report(book: int, runs: list[tuple[str, float, float, dict[str, int], Counter[str], str]]) -> None:
    size = runs[0][3]["policiesRead"]  # the whole book, or the slice --steps ran
    total = sum(seconds for _, seconds, *_ in runs)
    ours = sum(seconds - emulated for _, seconds, emulated, *_ in runs)
    print(f"\nbook of {book} due policies, {size} renewed: {size / total:.1f} renewals/s over {total:.1f} s; "
          f"outside the DynamoDB calls {ours:.1f} s: {size / ours:.1f} renewals/s")
    print(f"  {'run':<16} {'s':>7} {'in moto':>7} {'policies/s':>10} {'ms/policy ours':>14} {'calls/policy':>12}  "
          f"results; DynamoDB calls; load average")
    for day, seconds, emulated, totals, counted, load in runs:
        print(f"  {day:<16} {seconds:7.1f} {emulated:7.1f} {size / seconds:10.1f} "
              f"{(seconds - emulated) * 1000 / size:14.1f} {sum(counted.values()) / size:12.2f}  {totals}; "
              f"{dict(sorted(counted.items()))}; {load}")


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
