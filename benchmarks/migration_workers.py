"""Migration with 2 worker processes (issue 29, Measured): the accounts of benchmarks/migration.py migrated by two
worker processes that share one emulated AWS (a moto server in a process of its own), each receiving the jobs
from the emulated SQS queue as the deployed SQS trigger does; one worker killed (SIGKILL) mid-run, its jobs
re-queued by the job reaper once their leases ran out: none lost, none twice.

    .venv/bin/python benchmarks/migration_workers.py [--accounts 200] [--no-kill] [--slice 1000] [--validate]

Per slice of `--slice` processed accounts (as the migration counts them), it prints the wall time, the workers'
CPU and the moto server's (its own process), and the workers' DynamoDB calls, each by account: whether the
last slice costs what the first did, and whether a growth is ours or moto's. The workers' clients are as
deployed (no client-side validation of requests; `--validate`: as `make run` makes them).

Our CPU is the workers' (user + system, from their first job on; moto's is in its own process), by account;
it includes what the deployed service spends too on real HTTP to DynamoDB and S3 (urllib3), which the in-process
benchmark does not.
The request is an upload (`?uploadLocator=`), as in benchmarks/migration.py.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LEASE_SECONDS = 20
"""The job lease of this run (PAS_JOB_LEASE_SECONDS): how soon the reaper can take back a killed worker's job. A
queued job holds a lease too, and the reaper fails a job it re-queued 5 times (runtime/jobs.py MAX_ATTEMPTS), so
this reaps only once the accounts stopped moving for a lease (as the deployed reaper, every few minutes, would)."""
IDLE_SECONDS = 4
TOKEN_SECONDS = 24 * 3600
"""The session tokens' lifetime in this run (PAS_TOKEN_TTL_SECONDS): its admin token signs in once."""
"""A worker stops once it received nothing for this long (and was told the run is over)."""


def _environment(port: int, lease: int) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    environ.update(
        {
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            "PAS_AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
            "PAS_STAGE": "dev",
            "PAS_EVENT_SETTLE_MS": "0",
            "PAS_JOB_LEASE_SECONDS": str(lease),
            # the script's admin session outlives a long run (the default hour ended a 10,000-account one at
            # 1,055 accounts, `auth.token_expired`, before its final check)
            "PAS_TOKEN_TTL_SECONDS": str(TOKEN_SECONDS),
            "POWERTOOLS_TRACE_DISABLED": "1",
            "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'benchmarks'}",
        }
    )
    return environ


def _cpu_of(pid: int) -> float:
    """A live process's user + system CPU seconds (/proc/{pid}/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _as_deployed() -> None:
    """The DynamoDB client without botocore's client-side check of each request (deployed, AWS checks them)."""
    from botocore.serialize import create_serializer

    from chalicelib.storage import clients

    client = clients.dynamodb()
    client._serializer = create_serializer(client.meta.service_model.resolved_protocol, include_validation=False)
    install = getattr(clients, "json_bodies", None)
    if install is not None:
        install(client)


def _counting(progress: Path) -> Any:
    """Counts the DynamoDB calls this process makes (by operation); answers a function that writes them, with
    the jobs run and the CPU since the first job, to `progress` (read by the parent at each slice)."""
    from collections import Counter

    from botocore.client import BaseClient

    calls: Counter[str] = Counter()
    real = BaseClient._make_api_call

    def counted(self: Any, operation: str, params: Any) -> Any:
        if self.meta.service_model.service_name == "dynamodb":
            calls[operation] += 1
        return real(self, operation, params)

    BaseClient._make_api_call = counted  # type: ignore[method-assign]

    def write(jobs: int, cpu: float) -> None:
        partial = progress.with_suffix(".tmp")
        partial.write_text(json.dumps({"jobs": jobs, "cpu": cpu, "calls": dict(calls)}))
        partial.replace(progress)

    return write


def worker(done_file: str, validate: bool = False) -> None:
    """Receive and run jobs until idle for IDLE_SECONDS once `done_file` exists; print our CPU from the first job."""
    import app  # noqa: F401  the composition root: the jobs need its ports wired
    from chalicelib.storage.queues import SqsJobQueue
    from chalicelib.workers.queue import run_message

    if not validate:
        _as_deployed()
    report = _counting(Path(f"{done_file}.{os.getpid()}.progress"))
    queue, ran, first_cpu, idle_since = SqsJobQueue(), 0, None, time.monotonic()
    while True:
        received = queue.receive(wait_seconds=1, max_messages=1)
        if not received:
            if os.path.exists(done_file) and time.monotonic() - idle_since > IDLE_SECONDS:
                break
            continue
        for receipt, body in received:
            if first_cpu is None:
                first_cpu = time.process_time()
                Path(f"{done_file}.{os.getpid()}").write_text(str(first_cpu))  # for a parent that kills it
            try:
                run_message(body)
            except Exception as error:  # as on AWS: the message comes back after its visibility timeout
                print(f"worker {os.getpid()}: job failed: {error!r}", file=sys.stderr, flush=True)
                continue
            queue.delete(receipt)
            ran += 1
            report(ran, time.process_time() - first_cpu)
        idle_since = time.monotonic()
    used = time.process_time() - (first_cpu or time.process_time())
    Path(f"{done_file}.{os.getpid()}.report").write_text(json.dumps({"jobs": ran, "cpu": used}))


def serve(port: int) -> None:
    """The emulated AWS of `make run` (local/aws_server.py: moto with the repository's lean DynamoDB, one request
    at a time, its state journalled in a temporary directory) until SIGTERM."""
    import logging
    import tempfile
    import threading

    from local.aws_server import EmulatedAws
    from local.durable_state import DurableState
    from local.lean_moto import lean_dynamodb

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with tempfile.TemporaryDirectory() as directory:
        state = DurableState(Path(directory))
        with lean_dynamodb(on_item_change=state.item_changed):
            aws = EmulatedAws("127.0.0.1", port, state)
            aws.start()
            stop.wait()
            aws.stop()
            state.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError("the moto server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=200)
    parser.add_argument("--no-kill", action="store_true")
    parser.add_argument("--slice", type=int, default=1000, help="processed accounts a measured slice")
    parser.add_argument("--validate", action="store_true", help="the workers' clients validate requests")
    parser.add_argument("--lease", type=int, default=LEASE_SECONDS, help="the job lease, seconds")
    parser.add_argument("--visibility", type=int, help="the queue's visibility timeout (default: twice the lease)")
    parser.add_argument("--kill-at", type=int, help="processed accounts at which a worker is killed (default: half)")
    parser.add_argument("--until", type=int, help="stop the workers after this many seconds and check what committed")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        worker(options.worker, options.validate)
        return
    if options.serve:
        serve(options.serve)
        return
    port = _free_port()
    environ = _environment(port, options.lease)
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port)],
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(port)
        os.environ.clear()
        os.environ.update(environ)
        sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
        run(options, environ, server.pid)
    finally:
        _stop_server(server)


SERVER_STOP_SECONDS = 300
"""How long the moto server may take to stop on SIGTERM (its journal closed: a 10,000-account run's state is large,
and it stopped in more than the 10 s once given it, a traceback after the result); then it is killed."""


def _stop_server(server: subprocess.Popen[bytes]) -> None:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(SERVER_STOP_SECONDS)
    except subprocess.TimeoutExpired:
        print(f"the moto server did not stop in {SERVER_STOP_SECONDS} s: killed", file=sys.stderr, flush=True)
        server.kill()
        server.wait()


class Slices:
    """The run cut at every `size` processed accounts: per slice, wall, the workers' CPU (from their first job:
    the run job's, which queues the accounts, is in the first slice), moto's and the DynamoDB calls, each by
    account (a killed worker's last figures stay in the sums)."""

    def __init__(self, size: int, server: int, done_file: str, workers: list[Any]):
        self.size, self.server, self.done_file, self.workers = size, server, done_file, workers
        self.last_cpu: dict[int, float] = {}
        self.mark = self._totals(0)
        self.rows: list[str] = []

    def _totals(self, processed: int) -> dict[str, Any]:
        cpu, calls = 0.0, 0
        for each in self.workers:
            if each.poll() is None:
                try:
                    self.last_cpu[each.pid] = _cpu_of(each.pid)
                except (FileNotFoundError, ProcessLookupError):
                    pass
            first_job = Path(f"{self.done_file}.{each.pid}")  # its CPU when it took its first job
            if each.pid in self.last_cpu and first_job.exists():
                cpu += self.last_cpu[each.pid] - float(first_job.read_text())
            progress = Path(f"{self.done_file}.{each.pid}.progress")
            if progress.exists():
                calls += sum(json.loads(progress.read_text())["calls"].values())
        return {
            "processed": processed,
            "wall": time.monotonic(),
            "cpu": cpu,
            "moto": _cpu_of(self.server),
            "calls": calls,
        }

    def look(self, processed: int, final: bool = False) -> None:
        if processed - self.mark["processed"] < self.size and not (final and processed > self.mark["processed"]):
            return
        now = self._totals(processed)
        n = now["processed"] - self.mark["processed"]
        each = {name: (now[name] - self.mark[name]) / n for name in ("wall", "cpu", "moto", "calls")}
        row = (
            f"slice {self.mark['processed'] + 1}-{processed}: wall {each['wall'] * 1000:.1f} ms, workers' CPU "
            f"{each['cpu'] * 1000:.1f} ms, moto's CPU {each['moto'] * 1000:.1f} ms, DynamoDB calls "
            f"{each['calls']:.2f} an account; load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}"
        )
        print(row, flush=True)
        self.rows.append(row)
        self.mark = now


def stopped(api: Any, token: str, tenant: str, migration: str, size: int, wall: float) -> None:
    """A run stopped before its end (--until, both workers killed): what committed is whole and once. Every
    committed account is counted `completed` in its commit, so the tenant's accounts, its policies and the
    policies' distinct accounts are each `completedAccounts` (a Scan of the emulated table: a check, not a
    request path)."""
    from tests.api.migration.support import fetch

    state = fetch(api, token, tenant, migration)
    counted, owners = _committed(tenant)
    states = fetch(api, token, tenant, migration, "/accounts/list?count=100")  # the first page, for its shape
    whole = counted["account"] == counted["policy"] == len(owners) == state["completedAccounts"]
    print(
        f"stopped after {wall:.0f} s with {state['processedAccounts']} of {size} processed "
        f"({state['completedAccounts']} completed, {state['errorAccounts']} error, {state['failedAccounts']} failed); "
        f"the tenant holds {counted['account']} accounts and {counted['policy']} policies of {len(owners)} accounts "
        f"(0 lost, 0 duplicated among the committed: {whole}); first page of account states "
        f"{sorted({a['accountMigrationState'] for a in states['items']})}; load average "
        f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}",
        flush=True,
    )


def _committed(tenant: str) -> tuple[dict[str, int], set[str]]:
    """The tenant's accounts and policies, and the policies' distinct accounts, from the tenant's lists on GSI2
    (`keys.accounts_index`, `keys.policies_index`: every account and policy root is on them). A check, not a request
    path: a Query a list, paged, on a client of its own with a 300 s read timeout. Not a Scan: moto's sorts the whole
    table and walks to its ExclusiveStartKey on every page, so its paged count of ~300,000 items did not finish
    (stop 44 timed out at 10 s; stop 45's pages of 1,000 ran over 6 minutes at 1,200 accounts)."""
    from chalicelib.settings import settings
    from chalicelib.storage import clients, keys

    client = clients.client("dynamodb", read_timeout=300, retries={"max_attempts": 1})
    counted: dict[str, int] = {"account": 0, "policy": 0}
    owners: set[str] = set()
    for entity, index in (("account", keys.accounts_index(tenant)), ("policy", keys.policies_index(tenant))):
        start_key = None
        while True:
            page = client.query(
                TableName=settings().table_name,
                IndexName="GSI2",
                KeyConditionExpression="GSI2PK = :list",
                ExpressionAttributeNames={"#e": "entity"},
                ExpressionAttributeValues={":list": {"S": index}},
                ProjectionExpression="#e, accountLocator",
                **({"ExclusiveStartKey": start_key} if start_key else {}),
            )
            for item in page["Items"]:
                assert item["entity"]["S"] == entity, item
                counted[entity] += 1
                if entity == "policy":
                    owners.add(item["accountLocator"]["S"])
            start_key = page.get("LastEvaluatedKey")
            if not start_key:
                break
    return counted, owners


def run(options: Any, environ: dict[str, str], server: int) -> None:
    import boto3
    from chalice.test import Client

    from chalicelib.core.clock import SystemClock
    from chalicelib.core.ids import new_locator
    from chalicelib.identity import service as identity
    from chalicelib.runtime import jobs
    from chalicelib.settings import settings
    from chalicelib.storage import clients
    from local.resources import create_all

    create_all(boto3.session.Session(region_name="us-east-1"))
    queue_url = clients.sqs().get_queue_url(QueueName=settings().jobs_queue_name)["QueueUrl"]
    # a killed worker's received message comes back soon (the deployed queue waits 30 minutes)
    visibility = options.visibility or 2 * options.lease
    clients.sqs().set_queue_attributes(QueueUrl=queue_url, Attributes={"VisibilityTimeout": str(visibility)})
    from app import app

    kept = dict(os.environ)
    from migration import account  # its import points the environment at an in-process moto: put ours back

    os.environ.clear()
    os.environ.update(kept)
    from tests.api.migration.support import fetch, migrations
    from tests.api.uploads.support import by_reference, uploaded
    from tests.support.api import call, ok
    from tests.support.configs import configured_tenant, policy_model

    now = SystemClock().now()
    identity.ensure_bootstrap(now, new_locator())
    token, _ = identity.sign_in(settings().admin_username, settings().admin_password, now, new_locator())
    size = options.accounts
    with Client(app, stage_name="dev", project_dir=str(ROOT)) as api:
        model = policy_model()
        model["payments"] = {"Card": {}}
        tenant = configured_tenant(api, token, model)
        content = json.dumps([account(f"SRC-{n}") for n in range(size)], default=str).encode()
        upload = uploaded(api, token, "migration", content, tenant)  # PUT to the emulated S3
        migration = ok(by_reference(api, "POST", migrations(tenant), token, upload, content_type="application/json"))[
            "locator"
        ]
        done_file = f"/tmp/migration-workers-{migration}.done"
        started = time.monotonic()
        workers = [
            subprocess.Popen(
                [sys.executable, __file__, "--worker", done_file, *(["--validate"] if options.validate else [])],
                env=environ,
                stdout=subprocess.DEVNULL,  # the service's metrics and logs (a pipe not read would fill and block)
            )
            for _ in range(2)
        ]
        slices = Slices(options.slice, server, done_file, workers)
        killed_cpu, reaped, moved, last = 0.0, 0, time.monotonic(), -1
        try:
            killed = options.no_kill
            while True:
                state = fetch(api, token, tenant, migration)
                if not killed and state["processedAccounts"] >= (options.kill_at or size // 2):
                    first_job = Path(f"{done_file}.{workers[0].pid}")  # absent: it ran no job
                    killed_cpu = _cpu_of(workers[0].pid) - float(first_job.read_text()) if first_job.exists() else 0.0
                    slices.last_cpu[workers[0].pid] = _cpu_of(workers[0].pid)
                    workers[0].send_signal(signal.SIGKILL)
                    workers[0].wait()
                    killed = True
                    print(f"killed worker {workers[0].pid} at {state['processedAccounts']} accounts", flush=True)
                if int(time.monotonic() - started) % 15 == 0:
                    print(f"{state['migrationState']}: {state['processedAccounts']} of {size}", flush=True)
                ended = state["migrationState"] in ("finished", "failed", "error")
                slices.look(state["processedAccounts"], final=ended)
                if ended:
                    break
                if options.until and time.monotonic() - started > options.until:
                    slices.look(state["processedAccounts"], final=True)
                    for each in workers:
                        if each.poll() is None:
                            each.send_signal(signal.SIGKILL)
                            each.wait()
                    stopped(api, token, tenant, migration, size, time.monotonic() - started)
                    return
                if state["processedAccounts"] != last:
                    moved, last = time.monotonic(), state["processedAccounts"]
                elif time.monotonic() - moved > options.lease + 2:
                    reaped += jobs.reap_expired(tenant, SystemClock().now())
                    moved = time.monotonic()
                time.sleep(1)
            wall = time.monotonic() - started
            Path(done_file).touch()
            survivors = workers if options.no_kill else workers[1:]
            for each in survivors:
                each.wait(60)
            reports = [json.loads(Path(f"{done_file}.{each.pid}.report").read_text()) for each in survivors]
        finally:
            for each in workers:
                if each.poll() is None:
                    each.kill()
            for leftover in (
                done_file,
                *(f"{done_file}.{each.pid}{end}" for each in workers for end in ("", ".report", ".progress")),
            ):
                Path(leftover).unlink(missing_ok=True)
        accounts, offset = [], 0
        while True:
            page = ok(call(api, "GET", f"/policy/{tenant}/accounts/list?offset={offset}&count=100", token))["items"]
            accounts += page
            offset += len(page)
            if len(page) < 100:
                break
        counted, owners = _committed(tenant)
        held = counted["policy"] if counted["account"] == len(accounts) and len(owners) == counted["policy"] else -1
        cpu = sum(report["cpu"] for report in reports) + killed_cpu
        print(
            f"{size} accounts, 2 workers{'' if options.no_kill else ' (one killed mid-run)'}: state "
            f"{state['migrationState']}, completed {state['completedAccounts']}, error {state['errorAccounts']}; "
            f"{len(accounts)} accounts and {held} policies (0 lost, 0 duplicated: "
            f"{len(accounts) == size and held == size}); jobs re-queued by the reaper {reaped}; wall {wall:.1f} s "
            f"({size / wall:.1f} accounts/s); workers' CPU {cpu * 1000 / size:.1f} ms an account "
            f"(the killed one's {killed_cpu:.1f} s); "
            f"jobs run by each surviving worker {[r['jobs'] for r in reports]}; load average "
            f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}",
            flush=True,
        )
        if not (state["migrationState"] == "finished" and len(accounts) == size and held == size):
            sys.exit("accounts lost or duplicated")


if __name__ == "__main__":
    main()
