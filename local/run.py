"""`make run`: the whole service on one machine, behaving like the deployed system.

- an in-memory AWS (moto server) on 127.0.0.1:$PAS_AWS_PORT (5000) with the resources of infra/,
- `chalice local` on 127.0.0.1:$PAS_PORT (8000), stage dev,
- a worker that polls the emulated SQS queue and runs each job through the same `dispatch` as the
  deployed SQS Lambda, and fires the app's `@schedule` functions at their rate,
- the emulated state kept in $PAS_LOCAL_STATE_DIR (.local/): moto keeps everything in memory, so every
  change of the table's items and the bucket's objects is journalled to disk before its request is
  answered, and loaded again at start (local/durable_state.py). SQS is not saved: the jobs an earlier
  run left queued (their messages lost) or running (their worker gone) keep their items and leases, and
  the start takes them over at once (take_over_jobs_of_earlier_runs) instead of waiting for their leases
  to run out and the reaper's next sweep.

Runs until Ctrl-C (SIGINT) or SIGTERM, then stops chalice and moto, in well under a second as a rule:
the state is on disk already, a job still running is abandoned (the next start runs it again), a merge of
the journal into the snapshot under way is finished at the next start, and the process ends without the
interpreter's teardown (which would free every object moto holds, one by one: seconds for a large state).
Killed outright, it loses nothing it acknowledged, and `chalice local` dies with it.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
REGION = "us-east-1"
COMPACT_EVERY_SECONDS = 5
STARTUP_TIMEOUT_SECONDS = 60
STOP_SECONDS = 2
"""How long a stop waits for chalice to exit before it kills it."""
TENANTS_PER_PAGE = 100

log = logging.getLogger("pas.local")


class Options:
    def __init__(self, environ: dict[str, str]):
        self.port = int(environ.get("PAS_PORT", "8000"))
        self.aws_port = int(environ.get("PAS_AWS_PORT", "5000"))
        self.state_dir = Path(environ.get("PAS_LOCAL_STATE_DIR") or ROOT / ".local")

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def aws_url(self) -> str:
        return f"http://{HOST}:{self.aws_port}"


def service_environment(options: Options) -> dict[str, str]:
    """The environment of this process and of `chalice local`: fake credentials, emulated endpoint."""
    environ = {
        k: v for k, v in os.environ.items() if k not in {"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"}
    }
    environ.update(
        {
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            # every boto3 client of both processes talks to moto, never to AWS
            "AWS_ENDPOINT_URL": options.aws_url,
            "PAS_AWS_ENDPOINT_URL": options.aws_url,
            "PAS_STAGE": "dev",
            # the Tracer runs without X-Ray (no daemon here); the EMF metrics and the JSON logs go to this output
            "POWERTOOLS_TRACE_DISABLED": "1",
        }
    )
    return environ


def _require_free(port: int) -> None:
    with socket.socket() as probe:
        # as the servers themselves will: a port whose last connections are in TIME_WAIT is free
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            sys.exit(f"port {port} on {HOST} is in use: stop what runs there, or set PAS_PORT / PAS_AWS_PORT")


def _wait_for_port(port: int, alive: Callable[[], bool]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if not alive():
            raise RuntimeError("chalice local exited during start-up (see its output above)")
        with socket.socket() as probe:
            if probe.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {HOST}:{port} after {STARTUP_TIMEOUT_SECONDS} s")


# --- worker: SQS poller and scheduler ----------------------------------------------------------


def run_jobs(stop: threading.Event, busy: threading.Event, plan: Any = None) -> None:
    """Stand-in for the SQS trigger of `run_job`: receive, run as it does, delete on success; `busy` is set
    while a job runs. With a fault plan (PAS_FAULT_RATE), its deliveries are faulted as SQS and Lambda fault
    them: a message delivered again after it ran, or later instead of now, or its run killed between two
    writes (the message then comes back after its visibility timeout, and the job reaper re-queues the job
    once its lease has run out)."""
    from chalicelib.storage.queues import SqsJobQueue
    from chalicelib.workers.queue import run_message
    from local.faults import KILL_WITHIN, WorkerKilled

    queue = SqsJobQueue()
    while not stop.is_set():
        try:
            received = queue.receive(wait_seconds=1)
        except Exception:
            if not stop.is_set():
                log.exception("receiving jobs failed; retrying")
                stop.wait(1)
            continue
        for receipt, body in received:
            if stop.is_set():
                break  # not started: SQS delivers it again (after a restart, the job reaper enqueues it)
            fault = plan.delivery() if plan is not None else None
            if fault == "delay":
                _return_later(queue, receipt, plan)
                continue
            busy.set()
            try:
                if fault == "kill":
                    plan.kill_after(plan.random.randrange(1, KILL_WITHIN + 1))
                run_message(body)
            except WorkerKilled:
                log.warning("fault: the worker was killed in the middle of a job; its message comes back later")
                continue
            except Exception:
                # as on AWS: the message stays, and comes back once its visibility timeout ends
                log.exception("job failed; its message will be delivered again")
                continue
            finally:
                if plan is not None:
                    plan.kill_after(None)
                busy.clear()
            if fault == "duplicate":
                _return_later(queue, receipt, plan)  # SQS delivers at least once: this one twice
            else:
                queue.delete(receipt)


FAULT_DELAY_SECONDS = 30
"""An injected delay or duplicate delivers the message again within this many seconds."""


def _return_later(queue: Any, receipt: str, plan: Any) -> None:
    try:
        queue.return_later(receipt, plan.random.randrange(1, FAULT_DELAY_SECONDS + 1))
    except Exception:
        log.exception("returning a message for a later delivery failed; it comes back after its visibility timeout")


def take_over_jobs_of_earlier_runs(started_at: datetime) -> int:
    """Re-queue every job whose status last moved before `started_at` and which is still queued or running:
    an earlier run left it, its worker is gone and its message too, so its lease is dead whatever time it
    gives. A Query of each tenant's job leases, after a Query per page of tenants; answers how many
    jobs were re-queued (or failed, after their last attempt)."""
    from chalicelib.identity import service as identity
    from chalicelib.runtime import jobs, wiring

    taken, after = 0, None
    while True:
        tenants, more = identity.tenant_locators_after(after, TENANTS_PER_PAGE)
        taken += sum(jobs.take_over(tenant, started_at, wiring.clock().now()) for tenant in tenants)
        if not more or not tenants:
            return taken
        after = tenants[-1]


def _rate_seconds(expression: Any) -> int:
    from chalice.app import Rate

    if not isinstance(expression, Rate):
        raise SystemExit(f"local/run.py fires rate() schedules only, not {expression.to_string()}: teach it")
    return expression.value * {Rate.MINUTES: 60, Rate.HOURS: 3600, Rate.DAYS: 86400}[expression.unit]


def schedules() -> list[tuple[str, int, Callable[..., Any]]]:
    """(name, period in seconds, handler) of every `@schedule` function the app registers."""
    import importlib

    from chalice.app import ScheduledEventConfig

    from app import app

    found = []
    for source in app.event_sources:
        if isinstance(source, ScheduledEventConfig):
            module, _, attribute = source.handler_string.rpartition(".")
            handler = getattr(importlib.import_module(module), attribute)
            found.append((source.name, _rate_seconds(source.schedule_expression), handler))
    return found


def _scheduled_event(name: str) -> dict[str, Any]:
    from datetime import datetime, timezone

    from chalicelib.core.ids import new_uuid_locator

    return {
        "version": "0",
        "account": "000000000000",
        "region": REGION,
        "detail": {},
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "time": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "id": new_uuid_locator(),
        "resources": [f"arn:aws:events:{REGION}:000000000000:rule/{name}"],
    }


def fire_schedules(stop: threading.Event, plan: list[tuple[str, int, Callable[..., Any]]]) -> None:
    """Call each schedule once per period, at the boundaries of its period counted from the epoch (as the
    schedules count their periods: the quarter-hourly due run at :00, :15, :30 and :45, when local midnights
    fall, so `make run` bills on time), and the due run once at start too: what fell due while `make run`
    was stopped runs at once."""
    from chalicelib.workers.schedules import DUE_SCHEDULE

    now = time.time()
    due = {name: (now if name == DUE_SCHEDULE else (now // period + 1) * period) for name, period, _ in plan}
    while not stop.wait(1):
        for name, period, handler in plan:
            if time.time() < due[name]:
                continue
            due[name] = (time.time() // period + 1) * period
            try:
                handler(_scheduled_event(name), None)
            except Exception:
                log.exception("schedule %s failed", name)


# --- main ----------------------------------------------------------------------------------------


def _start_chalice(options: Options, environ: dict[str, str]) -> subprocess.Popen:
    # `chalice local --no-autoreload`, answering unknown paths and malformed requests as API Gateway does
    command = [
        sys.executable,
        str(ROOT / "local" / "gateway.py"),
        "--host",
        HOST,
        "--port",
        str(options.port),
        "--stage",
        "dev",
    ]
    # its own session: Ctrl-C reaches this process only, which then stops chalice in order; and it dies
    # with this process however that ends
    guarded = [sys.executable, "-m", "local.die_with_parent", str(os.getpid()), *command]
    return subprocess.Popen(guarded, cwd=ROOT, env=environ, start_new_session=True)


def _stop_chalice(chalice: subprocess.Popen) -> None:
    """SIGTERM, and SIGKILL if it has not exited STOP_SECONDS later."""
    if chalice.poll() is None:
        chalice.terminate()
    try:
        chalice.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        chalice.kill()
        chalice.wait()


def merge_journal_when_due(state: Any, stop: threading.Event) -> None:
    """Merge the journal into the snapshot once it is due (DurableState.compact_if_due), off the main thread:
    a stop never waits for a merge, which the next start finishes."""
    while not stop.wait(COMPACT_EVERY_SECONDS):
        try:
            state.compact_if_due()
        except Exception:
            log.exception(
                "merging the journal into the snapshot failed; the journal keeps everything, "
                "and the merge is tried again"
            )


def _banner(options: Options, restored: tuple[int, int]) -> str:
    from chalicelib.settings import settings

    state = (
        f"restored {restored[0]} items and {restored[1]} objects from {options.state_dir}"
        if any(restored)
        else f"new state, saved to {options.state_dir}"
    )
    current = settings()
    return "\n".join(
        [
            "",
            f"PAS is running at {options.base_url}",
            f"  administrator: {current.admin_username} / {current.admin_password}"
            "  (PAS_ADMIN_USERNAME / PAS_ADMIN_PASSWORD when the state is new)",
            f"  emulated AWS:  {options.aws_url}; {state}",
            "  sign in:       curl -s -X POST " + options.base_url + "/auth/token"
            f" -d grant_type=password -d username={current.admin_username} -d password={current.admin_password}",
            "Ctrl-C stops it; the data stays until `make reset`.",
            "",
        ]
    )


def main() -> int:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log.setLevel(logging.INFO)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's request log
    options = Options(dict(os.environ))
    _require_free(options.aws_port)
    _require_free(options.port)
    environ = service_environment(options)
    os.environ.clear()
    os.environ.update(environ)
    sys.path.insert(0, str(ROOT))

    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends
    from moto.s3.models import s3_backends

    import app  # noqa: F401  the composition root: the worker's jobs need its ports wired (runtime/wiring.py)
    from chalicelib.core.clock import SystemClock
    from chalicelib.core.ids import new_locator
    from chalicelib.documents import rendering
    from chalicelib.identity.service import ensure_bootstrap
    from chalicelib.sandbox import kernel
    from chalicelib.settings import settings
    from chalicelib.storage import clients
    from local.aws_server import EmulatedAws
    from local.durable_state import DurableState, watch_s3
    from local.faults import WORKER_STREAM, install_from_environment
    from local.lean_moto import lean_dynamodb
    from local.resources import create_all
    from local.tenant_functions import republish_current_versions, use_local_invoker

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())

    state = DurableState(options.state_dir)
    with lean_dynamodb(on_item_change=state.item_changed), watch_s3(state.object_changed):
        aws = EmulatedAws(HOST, options.aws_port, state)
        aws.start()
        # with the clients chalicelib.storage keeps for the worker: botocore reads each service's description once
        create_all(SimpleNamespace(client=clients.client))
        restored = state.restore(
            dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].get_table(settings().table_name),
            settings().bucket_name,
            s3_backends[DEFAULT_ACCOUNT_ID]["global"],
        )
        started_at = SystemClock().now()  # every job whose status moved before now, an earlier run left
        chalice = _start_chalice(options, environ)  # it starts while this process does the rest
        exit_code = 0
        job_running = threading.Event()
        invoker = use_local_invoker()  # PAS_PLUGIN_RUNNER=lambda: tenant code in the emulated Lambda
        rendering.start_warm_renderers()  # the documents jobs' first render is warm too
        try:
            ensure_bootstrap(started_at, new_locator())
            taken_over = take_over_jobs_of_earlier_runs(started_at)
            if taken_over:
                log.info("re-queued the jobs an earlier run left: %d", taken_over)
            republished = republish_current_versions(TENANTS_PER_PAGE) if invoker is not None else 0
            if republished:
                log.info("published the tenant code of an earlier run again: %d tenants", republished)
            # from here on the worker's calls and deliveries carry the faults PAS_FAULT_RATE asks for (start-up not)
            plan = install_from_environment(environ, clients.dynamodb(), WORKER_STREAM, "worker")
            # daemons, never waited for: a job still running at a stop is abandoned, the next start runs it again
            threads = [
                threading.Thread(target=run_jobs, args=(stop, job_running, plan), name="jobs", daemon=True),
                threading.Thread(target=fire_schedules, args=(stop, schedules()), name="schedules", daemon=True),
                threading.Thread(target=merge_journal_when_due, args=(state, stop), name="snapshot", daemon=True),
            ]
            _wait_for_port(options.port, lambda: chalice.poll() is None)
            for thread in threads:
                thread.start()
            print(_banner(options, restored), flush=True)
            while not stop.wait(1):
                if chalice.poll() is not None:
                    log.error("chalice local exited with %s", chalice.returncode)
                    exit_code = 1
                    break
        except Exception:
            log.exception("start-up failed")
            exit_code = 1
        finally:
            stop.set()
            if job_running.is_set():
                log.warning("a job is still running: it is abandoned, and the next start runs it again")
            _stop_chalice(chalice)
            # the exit below skips the interpreter's teardown and its exit handlers
            rendering.close_warm_renderers()
            if invoker is not None:
                invoker.close()
            kernel.remove_libraries()
            aws.stop()
            state.close()
    print(f"stopped; state saved in {options.state_dir}", flush=True)
    return exit_code


if __name__ == "__main__":
    code = main()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    # everything is on disk: skip the interpreter's teardown of moto's objects (and any daemon thread)
    os._exit(code)
