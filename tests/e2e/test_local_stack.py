"""`make run` as a person meets it: the real stack (moto server, `chalice local`, the local worker) over
HTTP, stopped and started again on the same state directory, written to by parallel clients, killed."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import time
from typing import Any

from tests.e2e.support import READY_LINE, LocalStack, in_parallel


def test_make_run_serves_the_readme_example_and_keeps_its_data_across_a_restart(tmp_path, local_stack):
    first, state = local_stack, local_stack.state_dir
    assert f"{READY_LINE}{first.base_url}" in first.output()
    assert "admin@example.com / admin" in first.output()

    token = first.sign_in()
    status, me = first.request("GET", "/auth/users/whoami", token=token)
    assert status == 200, me
    assert (me["userName"], me["roles"], me["tenants"]) == ("admin@example.com", ["admin"], ["any"])
    status, role = first.request(
        "POST",
        "/auth/roles",
        token=token,
        json_body={"name": "e2e-underwriter", "description": "survives a restart", "permissions": ["policies.read"]},
    )
    assert status == 200, role
    assert first.run_job_through_the_worker() == "finished"
    # its log shows the metrics CloudWatch would make of it: EMF documents of the requests and of the job
    emf = [json.loads(line) for line in first.output().splitlines() if line.startswith('{"_aws"')]
    assert {(d["route"], d["status"]) for d in emf if "Requests" in d} >= {
        ("GET /auth/users/whoami", "200"),
        ("POST /auth/roles", "200"),
    }
    assert ("jobs.reap", "finished") in [(d["jobType"], d["outcome"]) for d in emf if "Jobs" in d]

    assert first.stop() == 0
    assert b"e2e-underwriter" in (state / "journal.jsonl").read_bytes()

    local_stack.start_again(tmp_path / "second.log")  # same state and ports; the tests after this one use it
    second = local_stack
    status, me_again = second.request("GET", "/auth/users/whoami", token=token)
    assert status == 200, me_again
    assert me_again["locator"] == me["locator"]
    status, kept = second.request("GET", f"/auth/roles/{role['locator']}", token=second.sign_in())
    assert status == 200, kept
    assert (kept["name"], kept["permissions"], kept["version"]) == ("e2e-underwriter", ["policies.read"], 1)


def test_jobs_a_previous_run_left_on_a_lease_run_at_once_after_the_next_start(tmp_path, local_stack):
    tenant, running, queued = local_stack.leave_jobs_of_a_previous_run()
    assert local_stack.job_statuses(tenant, running, queued, within=0) == ["running", "queued"]
    assert local_stack.stop() == 0

    local_stack.start_again(tmp_path / "next.log")  # the tests after this one use the restarted stack

    # not after their leases (job_lease_seconds, 15 minutes) and the next sweep of the reaper: at once
    assert local_stack.job_statuses(tenant, running, queued) == ["finished", "finished"]
    # these two at least: a job the schedules enqueued (the due run at each start) may still be queued at the stop
    taken_over = re.search(r"re-queued the jobs an earlier run left: (\d+)", local_stack.output())
    assert taken_over and int(taken_over.group(1)) >= 2, local_stack.output()


def _answers(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_parallel_writers_get_no_error_and_a_kill_9_loses_nothing_they_were_told_was_saved(tmp_path, stacks):
    from tests.api.accounts.support import person
    from tests.support.configs import package, policy_model

    state = tmp_path / "state"
    first = LocalStack(state, tmp_path / "first.log")
    stacks.append(first)
    token = first.sign_in()
    configuration = package(policy_model())

    # tenants created in quick succession while the worker runs their jobs: each is a TransactWriteItems
    tenants = in_parallel(
        4,
        lambda n: first.request("POST", f"/config/createTenant?name=parallel-{n}", token=token, package=configuration),
    )
    assert [status for status, _ in tenants] == [200] * 4, tenants
    tenant = tenants[0][1]["locator"]

    def create_accounts(client: int) -> list[tuple[int, Any]]:
        return [first.request("POST", f"/policy/{tenant}/accounts", token=token, json_body=person()) for _ in range(12)]

    created = [answer for answers in in_parallel(8, create_accounts) for answer in answers]
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
    fetched = in_parallel(
        8,
        lambda client: [
            second.request("GET", f"/policy/{tenant}/accounts/{locator}", token=token)
            for locator in sorted(acknowledged)[client::8]
        ],
    )
    assert sorted(body["locator"] for answers in fetched for status, body in answers if status == 200) == sorted(
        acknowledged
    )
    status, more = second.request("POST", f"/policy/{tenant}/accounts", token=token, json_body=person())
    assert status == 200, more

    stopping = time.monotonic()
    assert second.stop() == 0
    assert time.monotonic() - stopping < 5
    assert "stopped; state saved in" in second.output()


def test_a_burst_of_parallel_sign_ins_is_queued_and_every_one_answered(local_stack):
    """API Gateway queues a burst; the local server's listen backlog was socketserver's 5, so 5 to 7 of 20
    parallel sign-ins had their connection reset. Five users sign in four times each, all at once (a user
    name takes at most 10 attempts under way: more answer 429 by design, chalicelib/identity/throttle.py)."""
    from chalicelib.core.ids import new_locator

    token, users, password = local_stack.sign_in(), 5, "a burst of sign-ins"
    names = [f"burst-{new_locator().lower()}@example.com" for _ in range(users)]
    created = in_parallel(
        users,
        lambda user: local_stack.request(
            "POST",
            "/auth/users",
            token=token,
            json_body={"userName": names[user], "firstName": "Burst", "lastName": "Test", "password": password},
        ),
    )
    assert [status for status, _ in created] == [200] * users, created

    def sign_in(client: int) -> Any:
        try:
            return local_stack.request(
                "POST",
                "/auth/token",
                form={"grant_type": "password", "username": names[client % users], "password": password},
            )
        except OSError as error:  # a reset or refused connection (urllib wraps it in URLError, an OSError)
            return error

    answers = in_parallel(4 * users, sign_in)
    assert [answer for answer in answers if isinstance(answer, OSError) or answer[0] != 200] == []
    status, me = local_stack.request("GET", "/auth/users/whoami", token=answers[-1][1]["access_token"])
    assert (status, me["userName"]) == (200, names[-1]), me
