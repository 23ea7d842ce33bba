"""The auto-renewal run over a book of due policies (issue 12, "Measured"): renewals per second and
DynamoDB calls per renewal, which must not grow with the book.

    .venv/bin/python benchmarks/auto_renewal.py [--books 1000 10000] [--profile]

In one process, against one in-process moto (local/lean_moto.py, as the tests), with a fixed clock and
the tests' InlineJobQueue (the job and its continuation steps run one after the other, as one worker
would run them). Each book is a fresh tenant with the quotes test configuration (tests/support/configs.py:
PersonalAuto's rating plugin reads two tables) and the plan `Auto` (create 30, accept 20, issue 10 days
before the term end); its policies (one vehicle, one account) are issued through
policies.service.add_issued_policy, ten to a TransactWriteItems, all ending 2027-02-01T05:00Z (issuing
puts each policy's `policy.autoRenew` due entry). Then the due run (runtime/due.py) runs as the
quarter-hourly schedule would on the three days the plan's steps fall due: created and priced, accepted,
issued. Renewals per second = policies / (the three runs' time). A last book runs once on the issue day
with every step due (each runs at its own due time, in time order: create, accept, issue).

Time "in moto" is moto's own work on a request (its botocore stubber, timed around each call); the rest,
botocore writing the request and reading the answer included, is what a worker would spend itself.
`--profile create|accept|issue` prints where that day's run of the first book spends its time (cProfile,
moto's work left out). Before each run the process's objects so far (moto's emulated table among them) are
frozen out of the garbage collector's sight (`--no-freeze`: not), since a worker's heap holds no database and
full collections walking moto's items cost 5-13 ms a renewal; the gc column is what the process's collections
cost (moto's calls' among them).
Absolute times are moto's in one Python process: read the call counts and the shares.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from _in_process import ROOT, use_emulated_aws

use_emulated_aws()

START = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)
DAYS = {
    "create": datetime(2027, 1, 2, 6, tzinfo=timezone.utc),
    "accept": datetime(2027, 1, 12, 6, tzinfo=timezone.utc),
    "issue": datetime(2027, 1, 22, 6, tzinfo=timezone.utc),
}
PLANS = {
    "Auto": {
        "generateAutoRenewals": True,
        "renewalCreateLeadDays": 30,
        "renewalAcceptLeadDays": 20,
        "renewalIssueLeadDays": 10,
    }
}
POLICIES_PER_COMMIT = 5
"""Policies issued in one write (each is some 20 records: a write holds 100)."""
AT_REST = timedelta(hours=2)
"""The book's billing is run up to this long before the create day, outside what is measured."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument(
        "--steps",
        type=int,
        default=0,
        help="run only the first N job steps (of 100 policies) of each run: a slice of a large book",
    )
    parser.add_argument(
        "--all-due-at-once",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="a last book of the first size, renewed in one run with every step due",
    )
    parser.add_argument(
        "--freeze",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="before each run, move what the process holds (moto's emulated table among it) out of the garbage "
        "collector's sight (gc.freeze), as a worker's heap holds no database",
    )
    parser.add_argument(
        "--client-validation",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="botocore checks each request against the service model, as in the tests and locally; "
        "--no-client-validation: as deployed (chalicelib/storage/clients.py)",
    )
    parser.add_argument("--profile", choices=list(DAYS), help="profile the first book's run of that day (cProfile)")
    parser.add_argument("--profile-to", type=Path, help="with --profile, also write the cProfile stats to this file")
    parser.add_argument(
        "--profile-clock",
        choices=["cpu", "wall"],
        default="cpu",
        help="with --profile, time functions by the process's CPU time (default: what a renewal costs, a loaded "
        "machine's waits and preemptions left out) or by the wall clock",
    )
    options = parser.parse_args()

    import boto3
    from botocore.client import BaseClient
    from chalice.test import Client
    from moto import mock_aws
    from moto.core.botocore_stubber import BotocoreStubber

    from chalicelib.settings import reload
    from chalicelib.storage import clients
    from local.lean_moto import lean_dynamodb
    from local.resources import create_all

    reload()
    emulator, client = Stopwatch(), Stopwatch()
    BotocoreStubber.__call__ = emulator.around(BotocoreStubber.__call__)  # type: ignore[method-assign]
    BaseClient._make_api_call = client.around(BaseClient._make_api_call)  # type: ignore[method-assign]
    with mock_aws(), lean_dynamodb():
        clients.reset()
        if not options.client_validation:
            clients._clients["dynamodb"] = clients._new_client("dynamodb", {"parameter_validation": False})
        create_all(boto3.session.Session(region_name="us-east-1"))
        from app import app
        from chalicelib.core.clock import FixedClock, SystemClock
        from chalicelib.core.ids import new_locator
        from chalicelib.identity import service as identity
        from chalicelib.runtime import wiring
        from chalicelib.runtime.jobs import InlineJobQueue
        from chalicelib.settings import settings
        from chalicelib.workers.handlers import load_job_handlers

        watches = (emulator, client)

        load_job_handlers()
        clock, queue = FixedClock(START), InlineJobQueue()
        wiring.override(clock=clock, job_queue=queue)
        token, _ = identity.sign_in(
            settings().admin_username, settings().admin_password, SystemClock().now(), new_locator()
        )
        calls: list[str] = []
        events = clients.dynamodb().meta.events
        events.register("before-call.dynamodb", lambda event_name, **_: calls.append(event_name.rsplit(".", 1)[-1]))
        validating = type(clients.dynamodb()._serializer).__name__ == "ParamValidationDecorator"
        print(f"load average at start: {_load()}; botocore validates requests: {validating}\n")
        with Client(app, stage_name="test", project_dir=str(ROOT)) as api:
            for size in options.books:
                tenant = book(api, token, clock, size)
                # billing at rest before the first day (the book's year of invoices), outside what is measured
                run("billing", tenant, clock, queue, calls, watches, DAYS["create"] - AT_REST, False, 0, options.freeze)
                runs = []
                for day, moment in DAYS.items():
                    profile = day == options.profile and size == options.books[0]
                    runs.append(
                        run(
                            day,
                            tenant,
                            clock,
                            queue,
                            calls,
                            watches,
                            moment,
                            profile,
                            options.steps,
                            options.freeze,
                            options.profile_to,
                            options.profile_clock,
                        )
                    )
                report(size, runs)
            if not options.all_due_at_once:
                return
            tenant = book(api, token, clock, options.books[0])
            report(
                options.books[0],
                [
                    run(
                        "all due at once",
                        tenant,
                        clock,
                        queue,
                        calls,
                        watches,
                        DAYS["issue"],
                        False,
                        options.steps,
                        options.freeze,
                    )
                ],
            )


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


@dataclass
class Stopwatch:
    """Wall and CPU time: of a run, or summed over the calls of a function (`around`): moto's work on a
    request, or botocore's client call (writing the request, moto's work, reading the answer)."""

    wall: float = 0.0
    cpu: float = 0.0
    _since: tuple[float, float] = (0.0, 0.0)

    def start(self, **_: Any) -> None:
        self._since = (time.perf_counter(), time.process_time())

    def stop(self, **_: Any) -> None:
        self.wall += time.perf_counter() - self._since[0]
        self.cpu += time.process_time() - self._since[1]

    def around(self, function: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.start()
            try:
                return function(*args, **kwargs)
            finally:
                self.stop()

        return timed


@dataclass
class Run:
    label: str
    took: Stopwatch
    emulated: Stopwatch
    client: Stopwatch
    """botocore's client calls, moto's work in them included."""
    plugins: float
    """CPU seconds of the plugin processes (production: the tenant's plugin Lambda)."""
    collecting: float
    """CPU seconds of the garbage collector's runs, in our code and moto's: a full collection walks every object
    of the process, moto's whole emulated table among them."""
    totals: dict[str, int]
    calls: Counter[str]
    load: str


def run(
    label: str,
    tenant: str,
    clock: Any,
    queue: Any,
    calls: list[str],
    watches: tuple[Stopwatch, Stopwatch],
    moment: datetime,
    profile: bool,
    steps: int,
    freeze: bool,
    profile_to: Path | None = None,
    profile_clock: str = "cpu",
) -> Run:
    """The job as the schedule enqueues it at `moment`, and its continuations (the first `steps` of them,
    or all)."""
    from chalicelib.core.clock import isoformat
    from chalicelib.runtime import wiring
    from chalicelib.runtime.job_types import JobType
    from chalicelib.runtime.jobs import JobMessage, dispatch, enqueue, get_job
    from tests.builders import system_ctx

    clock.set(moment)
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    enqueue(uow, JobType.DUE_RUN, {"asOf": isoformat(moment)})
    uow.commit()
    ran: list[str] = [message.job_locator for message in queue.sent[-1:]]
    sent_before = len(queue.sent)
    calls.clear()
    for watch in watches:
        watch.wall = watch.cpu = 0.0

    def drain() -> None:
        ran = 0
        while queue.messages and (not steps or ran < steps):
            dispatch(JobMessage.model_validate_json(queue.messages.pop(0)))
            ran += 1
        queue.messages.clear()

    if freeze:
        gc.collect()
        gc.freeze()
    took = Stopwatch()
    plugins_before = _descendants_cpu()
    collecting_before = COLLECTOR.cpu
    took.start()
    if profile:
        profiler = cProfile.Profile(time.process_time) if profile_clock == "cpu" else cProfile.Profile()
        with _outside(profiler):
            profiler.runcall(drain)
    else:
        drain()
    took.stop()
    plugins = _descendants_cpu() - plugins_before
    collecting = COLLECTOR.cpu - collecting_before
    counted = Counter(calls)
    ran += [message.job_locator for message in queue.sent[sent_before:]]
    totals: Counter[str] = Counter()
    for locator in ran:
        job = get_job(tenant, locator)
        if job["status"] == "queued":
            continue  # beyond --steps
        assert job["status"] == "finished", job
        if job["jobType"] != JobType.DUE_RUN:
            continue  # what the renewals enqueued (their billing jobs): finished, counted apart from the run
        totals["jobSteps"] += 1
        result = job["result"]
        assert not result["failed"], result["failed"][:3]
        totals.update(
            {
                name: result.get(name, 0)
                for name in ("policiesRead", "created", "priced", "accepted", "issued", "alreadyDone")
            }
        )
    if profile:
        if profile_to:
            profiler.dump_stats(profile_to)
        print(f"\n{moment:%Y-%m-%d}, first book: where the time goes")
        stats = pstats.Stats(profiler).sort_stats("cumulative")
        stats.print_stats(25)
        print("the same, our code only (chalicelib, below the job handler):")
        stats.print_stats(r"chalicelib/(?!runtime/jobs|runtime/due|transactions/job_handlers)", 40)
        print("by own time, outside moto:")
        stats.sort_stats("tottime").print_stats(r"^(?!.*moto)", 30)
    clock.set(START)
    return Run(
        label,
        took,
        replace(watches[0]),
        replace(watches[1]),
        plugins,
        collecting,
        {name: int(value) for name, value in totals.items()},
        counted,
        _load(),
    )


@contextmanager
def _outside(profiler: cProfile.Profile) -> Iterator[None]:
    """Moto's work on each request left out of the profile: what remains is a worker's own."""
    from moto.core.botocore_stubber import BotocoreStubber

    emulated = BotocoreStubber.__call__

    def unprofiled(*args: Any, **kwargs: Any) -> Any:
        profiler.disable()
        try:
            return emulated(*args, **kwargs)
        finally:
            profiler.enable()

    BotocoreStubber.__call__ = unprofiled  # type: ignore[method-assign]
    try:
        yield
    finally:
        BotocoreStubber.__call__ = emulated  # type: ignore[method-assign]


def report(book: int, runs: list[Run]) -> None:
    """Renewals per second: of the whole run (moto included), and of our code's CPU time alone, which
    on 2 cores runs twice (DynamoDB's latency overlapped by more job steps in flight than cores). Per
    renewal: cpu ms, ours outside moto (botocore's part of it: boto ms), and the plugin processes'."""
    size = runs[0].totals["policiesRead"]  # the whole book, or the slice --steps ran
    wall = sum(r.took.wall for r in runs)
    ours_cpu = sum(r.took.cpu - r.emulated.cpu + r.plugins for r in runs)
    print(
        f"\nbook of {book} due policies, {size} renewed: {size / wall:.1f} renewals/s over {wall:.1f} s "
        f"(one process, moto included); our code's CPU (plugins included) {ours_cpu * 1000 / size:.1f} ms a "
        f"renewal: {size / ours_cpu:.1f} renewals/s a core, {2 * size / ours_cpu:.1f} on 2 cores"
    )
    print(
        f"  {'run':<16} {'s':>7} {'in moto':>7} {'policies/s':>10} {'cpu ms':>6} {'boto ms':>7} {'plugins':>7} "
        f"{'gc ms':>5} {'wall ms':>7} {'calls/policy':>12}  results; DynamoDB calls; load average"
    )
    for r in runs:
        cpu, outside = r.took.cpu - r.emulated.cpu, r.took.wall - r.emulated.wall
        botocore = r.client.cpu - r.emulated.cpu
        print(
            f"  {r.label:<16} {r.took.wall:7.1f} {r.emulated.wall:7.1f} {size / r.took.wall:10.1f} "
            f"{cpu * 1000 / size:6.1f} {botocore * 1000 / size:7.1f} {r.plugins * 1000 / size:7.1f} "
            f"{r.collecting * 1000 / size:5.1f} {outside * 1000 / size:7.1f} "
            f"{sum(r.calls.values()) / size:12.2f}  {r.totals}; "
            f"{dict(sorted(r.calls.items()))}; {r.load}"
        )


class Collector:
    """The CPU time of the garbage collector's runs (gc.callbacks), summed."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self._since = 0.0
        gc.callbacks.append(self._observe)

    def _observe(self, phase: str, _: dict[str, int]) -> None:
        if phase == "start":
            self._since = time.process_time()
        else:
            self.cpu += time.process_time() - self._since


COLLECTOR = Collector()


def _descendants_cpu() -> float:
    """CPU seconds of the processes this one started, and theirs (the plugin processes: the sandbox and
    the Python in it), as /proc counts them now."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    pending = [str(os.getpid())]
    while pending:
        pid = pending.pop()
        for task in Path(f"/proc/{pid}/task").glob("*/children"):
            try:
                children = task.read_text().split()
            except OSError:
                continue
            for child in children:
                try:
                    fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
                pending.append(child)
    return total


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
