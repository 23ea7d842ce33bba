"""`make run` as a person meets it: the real stack (moto server, `chalice local`, the local worker) over
HTTP, stopped and started again on the same state directory, written to by parallel clients, killed."""
from __future__ import annotations

import json
import os
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
READY_LINE = "PAS is running at "
ADMIN = {"grant_type": "password", "username": "admin@example.com", "password": "admin"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalStack:
    """One run of local/run.py on free ports (or on those of an earlier run), its output in a file."""

    def __init__(self, state_dir: Path, log: Path, ports: tuple[int, int] | None = None):
        self.port, self.aws_port = ports or (_free_port(), _free_port())
        self.log = log
        environ = {**os.environ, "PAS_PORT": str(self.port), "PAS_AWS_PORT": str(self.aws_port),
                   "PAS_LOCAL_STATE_DIR": str(state_dir)}
        for name in ("PAS_ADMIN_USERNAME", "PAS_ADMIN_PASSWORD", "PAS_STAGE"):
            environ.pop(name, None)
        launched = time.monotonic()
        with log.open("w") as out:
            self.process = subprocess.Popen([sys.executable, str(ROOT / "local" / "run.py")], cwd=ROOT, env=environ,
                                            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_until_ready()
        self.start_seconds = time.monotonic() - launched

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

    def request(self, method: str, path: str, *, token: str | None = None, json_body: Any = None,
                form: dict[str, str] | None = None, package: bytes | None = None) -> tuple[int, Any]:
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
        script = textwrap.dedent("""
            import time
            from chalicelib.core.context import SYSTEM, CallContext
            from chalicelib.core.clock import SystemClock
            from chalicelib.core.ids import new_locator
            from chalicelib.identity import service
            from chalicelib.runtime import jobs, wiring

            ctx = CallContext(principal=SYSTEM, request_id=new_locator(), now=SystemClock().now())
            tenant = service.create_tenant(ctx, name="e2e").locator
            uow = wiring.unit_of_work(ctx.for_tenant(tenant))
            job = jobs.enqueue(uow, jobs.REAP_JOB)
            uow.commit()
            deadline = time.monotonic() + 20
            while jobs.get_job(tenant, job)["status"] in ("queued", "running") and time.monotonic() < deadline:
                time.sleep(0.1)
            print(jobs.get_job(tenant, job)["status"])
        """)
        aws = f"http://127.0.0.1:{self.aws_port}"
        environ = {**os.environ, "AWS_ENDPOINT_URL": aws, "PAS_AWS_ENDPOINT_URL": aws, "PAS_STAGE": "dev"}
        result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=environ, capture_output=True,
                                text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    def stop(self) -> int:
        """Ctrl-C, as a person stops `make run`."""
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(30)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def stacks(tmp_path) -> Iterator[list[LocalStack]]:
    started: list[LocalStack] = []
    yield started
    for stack in started:
        stack.kill()


def test_make_run_serves_the_readme_example_and_keeps_its_data_across_a_restart(tmp_path, stacks):
    state = tmp_path / "state"
    first = LocalStack(state, tmp_path / "first.log")
    stacks.append(first)
    assert f"{READY_LINE}{first.base_url}" in first.output()
    assert "admin@example.com / admin" in first.output()

    token = first.sign_in()
    status, me = first.request("GET", "/auth/users/whoami", token=token)
    assert status == 200, me
    assert (me["userName"], me["roles"], me["tenants"]) == ("admin@example.com", ["admin"], ["any"])
    status, role = first.request("POST", "/auth/roles", token=token, json_body={
        "name": "e2e-underwriter", "description": "survives a restart", "permissions": ["policies.read"]})
    assert status == 200, role
    assert first.run_job_through_the_worker() == "finished"

    assert first.stop() == 0
    assert b"e2e-underwriter" in (state / "journal.jsonl").read_bytes()

    second = LocalStack(state, tmp_path / "second.log")
    stacks.append(second)
    status, me_again = second.request("GET", "/auth/users/whoami", token=token)
    assert status == 200, me_again
    assert me_again["locator"] == me["locator"]
    status, kept = second.request("GET", f"/auth/roles/{role['locator']}", token=second.sign_in())
    assert status == 200, kept
    assert (kept["name"], kept["permissions"], kept["version"]) == ("e2e-underwriter", ["policies.read"], 1)
    assert second.stop() == 0


def _answers(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _in_parallel(clients: int, work: Any) -> list[Any]:
    """Run `work(client_number)` on `clients` threads at once; answers their results in client order."""
    results: list[Any] = [None] * clients

    def run(number: int) -> None:
        results[number] = work(number)

    threads = [threading.Thread(target=run, args=(number,)) for number in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_parallel_writers_get_no_error_and_a_kill_9_loses_nothing_they_were_told_was_saved(tmp_path, stacks):
    from tests.api.accounts.support import person
    from tests.support.configs import package, policy_model

    state = tmp_path / "state"
    first = LocalStack(state, tmp_path / "first.log")
    stacks.append(first)
    token = first.sign_in()
    configuration = package(policy_model())

    # tenants created in quick succession while the worker runs their jobs: each is a TransactWriteItems
    tenants = _in_parallel(4, lambda n: first.request("POST", f"/config/createTenant?name=parallel-{n}",
                                                      token=token, package=configuration))
    assert [status for status, _ in tenants] == [200] * 4, tenants
    tenant = tenants[0][1]["locator"]

    def create_accounts(client: int) -> list[tuple[int, Any]]:
        return [first.request("POST", f"/policy/{tenant}/accounts", token=token, json_body=person())
                for _ in range(12)]

    created = [answer for answers in _in_parallel(8, create_accounts) for answer in answers]
    assert [(status, body) for status, body in created if status != 200] == []
    acknowledged = {body["locator"] for _, body in created}
    assert len(acknowledged) == 96

    os.killpg(first.process.pid, signal.SIGKILL)  # the whole process group, as a crash or `kill -9` would
    first.process.wait()
    deadline = time.monotonic() + 5
    while _answers(first.port) and time.monotonic() < deadline:  # chalice, in a session of its own, dies too
        time.sleep(0.1)
    assert not _answers(first.port), "chalice local outlived local/run.py"

    # at once, on the same ports: what was acknowledged is there, and the stack answers without error
    second = LocalStack(state, tmp_path / "second.log", ports=(first.port, first.aws_port))
    stacks.append(second)
    assert second.start_seconds < 30
    token = second.sign_in()
    fetched = _in_parallel(8, lambda client: [
        second.request("GET", f"/policy/{tenant}/accounts/{locator}", token=token)
        for locator in sorted(acknowledged)[client::8]])
    assert sorted(body["locator"] for answers in fetched for status, body in answers if status == 200) \
        == sorted(acknowledged)
    status, more = second.request("POST", f"/policy/{tenant}/accounts", token=token, json_body=person())
    assert status == 200, more

    stopping = time.monotonic()
    assert second.stop() == 0
    assert time.monotonic() - stopping < 5
    assert "stopped; state saved in" in second.output()
