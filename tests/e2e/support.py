"""The real local stack for end-to-end tests: local/run.py (moto server, `chalice local`, the worker) on free
ports, talked to over HTTP, plus a helper that runs clients on threads at once."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
READY_LINE = "PAS is running at "
ADMIN = {"grant_type": "password", "username": "admin@example.com", "password": "admin"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalStack:
    """One run of local/run.py on free ports (or on those of an earlier run), its output in a file."""

    def __init__(
        self, state_dir: Path, log: Path, ports: tuple[int, int] | None = None, environ: dict[str, str] | None = None
    ):
        self.port, self.aws_port = ports or (free_port(), free_port())
        self.state_dir = state_dir
        # no renderers started ahead (the suite's CPU; tests/documents/test_warm_renderers.py covers them)
        self.environ = {"PAS_WARM_RENDERERS": "0", **(environ or {})}
        self._launch(log)

    def _launch(self, log: Path) -> None:
        self.log = log
        environ = {
            **os.environ,
            "PAS_PORT": str(self.port),
            "PAS_AWS_PORT": str(self.aws_port),
            "PAS_LOCAL_STATE_DIR": str(self.state_dir),
        }
        for name in ("PAS_ADMIN_USERNAME", "PAS_ADMIN_PASSWORD", "PAS_STAGE"):
            environ.pop(name, None)
        environ.update(self.environ)
        launched = time.monotonic()
        with log.open("w") as out:
            self.process = subprocess.Popen(
                [sys.executable, str(ROOT / "local" / "run.py")],
                cwd=ROOT,
                env=environ,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._wait_until_ready()
        self.start_seconds = time.monotonic() - launched

    def start_again(self, log: Path) -> None:
        """Once this run has ended: `make run` again on the same state and ports, its output in `log`."""
        assert self.process.poll() is not None, "still running"
        self._launch(log)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text()

    def _wait_until_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while READY_LINE not in self.output():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"local/run.py did not start:\n{self.output()}")
            time.sleep(0.1)

    def request(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        json_body: Any = None,
        form: dict[str, str] | None = None,
        package: bytes | None = None,
    ) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        data = None
        if package is not None:
            data = package
            headers["Content-Type"] = "application/zip"
        elif form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif json_body is not None:
            data = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base_url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def sign_in(self) -> str:
        status, body = self.request("POST", "/auth/token", form=ADMIN)
        assert status == 200, body
        assert body["token_type"] == "Bearer"
        return body["access_token"]

    def run_job_through_the_worker(self) -> str:
        """Enqueue a job against the emulated AWS from another process; answers the status it reaches."""
        return self.run_script("""
            tenant = service.create_tenant(ctx, name="e2e").locator
            uow = wiring.unit_of_work(ctx.for_tenant(tenant))
            job = jobs.enqueue(uow, JobType.REAP_JOBS)
            uow.commit()
            print(wait_for_job(tenant, job))
        """)

    def leave_jobs_of_a_previous_run(self) -> tuple[str, str, str]:
        """Jobs as a run that ended leaves them: one a worker claimed and did not finish (it died here, in
        another process), one whose message was lost (SQS is not saved); both still on a lease that has not
        run out. Answers (tenant, running job, queued job)."""
        tenant, running, queued = self.run_script("""
            class WorkerDied(BaseException):
                pass

            def die(ctx, payload):
                raise WorkerDied()

            # this process's worker claims the job and dies
            jobs.job_handler(JobType.TABLES_CLEANUP, payload=jobs.NoPayload)(die)
            lost = jobs.InlineJobQueue()
            wiring.override(job_queue=lost)  # the messages never reach the stack's worker
            tenant = service.create_tenant(ctx, name="e2e").locator
            uow = wiring.unit_of_work(ctx.for_tenant(tenant))
            running = jobs.enqueue(uow, JobType.TABLES_CLEANUP)
            uow.commit()
            try:
                lost.drain()
            except WorkerDied:
                pass
            uow = wiring.unit_of_work(ctx.for_tenant(tenant))
            queued = jobs.enqueue(uow, JobType.TABLES_CLEANUP)
            uow.commit()
            print(tenant, running, queued)
        """).split()
        return tenant, running, queued

    def job_statuses(self, tenant: str, *job_locators: str, within: float = 20) -> list[str]:
        """The status each job reaches within `within` seconds (waiting while it is queued or running)."""
        return self.run_script(f"""
            print(" ".join(wait_for_job({tenant!r}, job, {within!r}) for job in {list(job_locators)!r}))
        """).split()

    def run_script(self, body: str) -> str:
        """Run Python against the emulated AWS in another process, with `ctx` (a system call context),
        `service` (identity), `jobs`, `wiring`, `JobType` and `wait_for_job(tenant, job, seconds=20)` at hand;
        answers the last line it printed (the service's own log lines, JSON on stdout as on Lambda, come first)."""
        script = textwrap.dedent("""
            import time

            import app  # the composition root: wires the ports (the tenant's clock) as every entry point does
            from chalicelib.core.context import SYSTEM, CallContext
            from chalicelib.core.clock import SystemClock
            from chalicelib.core.ids import new_locator
            from chalicelib.identity import service
            from chalicelib.runtime import jobs, wiring
            from chalicelib.runtime.job_types import JobType

            ctx = CallContext(principal=SYSTEM, request_id=new_locator(), now=SystemClock().now())

            def wait_for_job(tenant, job, seconds=20):
                deadline = time.monotonic() + seconds
                while jobs.get_job(tenant, job)["status"] in ("queued", "running") and time.monotonic() < deadline:
                    time.sleep(0.1)
                return jobs.get_job(tenant, job)["status"]
        """) + textwrap.dedent(body)
        aws = f"http://127.0.0.1:{self.aws_port}"
        environ = {**os.environ, "AWS_ENDPOINT_URL": aws, "PAS_AWS_ENDPOINT_URL": aws, "PAS_STAGE": "dev"}
        result = subprocess.run(
            [sys.executable, "-c", script], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stderr
        return result.stdout.strip().splitlines()[-1]

    def stop(self, timeout: float = 30) -> int:
        """Ctrl-C, as a person stops `make run`."""
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def in_parallel(clients: int, work: Callable[[int], Any]) -> list[Any]:
    """Run `work(client_number)` on `clients` threads at once; answers their results in client order."""
    results: list[Any] = [None] * clients
    ready = threading.Barrier(clients)

    def run(number: int) -> None:
        ready.wait()  # all threads exist before any sends, so the requests overlap
        results[number] = work(number)

    threads = [threading.Thread(target=run, args=(number,)) for number in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


TABLE = "bootstrap/resources/resourceFiles/tables/GadgetRates2026.csv"
TABLE_CONFIG = "tables/GadgetRates/config.json"
ROWS = 120
NOTE_BYTES = 90_000
"""120 rows of 120 KB (a random note each in base64, under the CSV reader's field limit; the zip keeps about three
quarters of it): an 11 MB package."""


def big_package() -> tuple[bytes, dict[str, str]]:
    """The example package whose GadgetRates table has a `note` column, and its bootstrap table ROWS rows with a
    long random note each; answers it and the notes by category."""
    from tests.cli.conftest import GADGETCOVER  # which imports this module

    notes = {f"gadget{n}": base64.b64encode(os.urandom(NOTE_BYTES)).decode() for n in range(ROWS)}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(GADGETCOVER.rglob("*")):
            name = path.relative_to(GADGETCOVER).as_posix()
            if name == TABLE:
                archive.writestr(
                    name,
                    "category,monthlyRate,maxValue,note\n"
                    + "".join(f"{category},4.50,1500,{note}\n" for category, note in notes.items()),
                )
            elif name == TABLE_CONFIG:
                table = json.loads(path.read_text())
                table["columns"]["note"] = {"dataType": "string", "isKey": False}
                archive.writestr(name, json.dumps(table))
            elif path.is_file():
                archive.write(path, name)
    return buffer.getvalue(), notes


README = ROOT / "README.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
"""A fenced block of the README: (its language, its text)."""
