"""`make run` with PAS_FAULT_SEED / PAS_FAULT_RATE (DECISIONS.md "Running it"): the gateway's DynamoDB client and
the worker's carry the seed's fault plan, the worker's job deliveries are duplicated, delayed or killed, and
without the variables nothing is injected. No server: the functions `make run` calls, against moto."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from chalicelib.core.errors import Unavailable
from chalicelib.storage import clients, keys, table
from local.faults import FaultPlan, from_environment, no_backoff
from local.gateway import install_faults
from local.run import run_jobs
from tests.storage.support import item, key


@pytest.fixture
def uninstalled(aws) -> Iterator[list[FaultPlan]]:
    plans: list[FaultPlan] = []
    with no_backoff():
        yield plans
    for plan in plans:
        plan.uninstall(clients.dynamodb())


def test_without_a_rate_there_is_no_plan_and_bad_values_stop_the_start():
    assert from_environment({}) is None
    assert from_environment({"PAS_FAULT_SEED": "7", "PAS_FAULT_RATE": "0"}) is None
    plan = from_environment({"PAS_FAULT_SEED": "7", "PAS_FAULT_RATE": "0.25"}, stream=1)
    assert plan is not None and plan.rate == 0.25
    same, gateway = (
        from_environment({"PAS_FAULT_SEED": "7", "PAS_FAULT_RATE": "0.25"}, stream=stream) for stream in (1, 0)
    )
    draws = [plan.decide("GetItem") for _ in range(200)]
    assert draws == [same.decide("GetItem") for _ in range(200)]  # one seed, one stream: the same faults
    assert draws != [gateway.decide("GetItem") for _ in range(200)]  # the other process draws its own
    for bad in (
        {"PAS_FAULT_RATE": "lots"},
        {"PAS_FAULT_RATE": "1.5"},
        {"PAS_FAULT_RATE": "-0.1"},
        {"PAS_FAULT_RATE": "0.1", "PAS_FAULT_SEED": "x"},
    ):
        with pytest.raises(SystemExit, match="PAS_FAULT_"):
            from_environment(bad)


def test_the_gateway_started_with_a_fault_rate_injects_faults_into_its_dynamodb_calls(uninstalled, tenant, capsys):
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    plan = install_faults({"PAS_FAULT_SEED": "3", "PAS_FAULT_RATE": "1"})
    uninstalled.append(plan)
    with pytest.raises(Unavailable):  # every attempt faulted: botocore's retries run out, the service's 503
        gateway.write(scope, table.put(item(tenant, "a")))
    assert sum(plan.injected.values()) == 5
    assert "injecting faults" in capsys.readouterr().err
    plan.enabled = False
    gateway.write(scope, table.put(item(tenant, "a", n=1)))
    assert gateway.get(scope, key(tenant, "a"))["n"] == 1


def test_the_gateway_started_without_a_fault_rate_installs_nothing(aws, tenant):
    assert install_faults({"PAS_FAULT_SEED": "3"}) is None
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    gateway.write(scope, table.put(item(tenant, "a", n=2)))
    assert gateway.get(scope, key(tenant, "a"))["n"] == 2


class _Queue:
    """The SQS queue of the worker: the messages received once, then nothing (and the worker told to stop)."""

    def __init__(self, bodies: list[str], stop: threading.Event):
        self.bodies, self.stop = bodies, stop
        self.deleted: list[str] = []
        self.returned: list[tuple[str, int]] = []

    def receive(self, wait_seconds: int = 1) -> list[tuple[str, str]]:
        received, self.bodies = [(f"receipt-{body}", body) for body in self.bodies], []
        if not received:
            self.stop.set()
        return received

    def return_later(self, receipt: str, seconds: int) -> None:
        self.returned.append((receipt, seconds))

    def delete(self, receipt: str) -> None:
        self.deleted.append(receipt)


def test_the_worker_duplicates_delays_and_kills_the_deliveries_its_plan_says(aws, tenant, monkeypatch):
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    stop = threading.Event()
    queue = _Queue(["plain", "twice", "later", "killed"], stop)
    ran: list[tuple[str, int]] = []

    def run_message(body: str) -> None:  # a job of three writes
        for step in range(3):
            gateway.write(scope, table.put(item(tenant, f"{body}-{step}")))
            ran.append((body, step))

    monkeypatch.setattr("chalicelib.storage.queues.SqsJobQueue", lambda: queue)
    monkeypatch.setattr("chalicelib.workers.queue.run_message", run_message)
    plan = FaultPlan(11, 0.0)
    script = iter([None, "duplicate", "delay", "kill"])
    monkeypatch.setattr(plan, "delivery", lambda: next(script))
    plan.random.randrange = lambda start, stop: 2  # killed at its second call
    plan.install(clients.dynamodb())
    try:
        run_jobs(stop, threading.Event(), plan)
    finally:
        plan.uninstall(clients.dynamodb())

    assert queue.deleted == ["receipt-plain"]  # only the plain delivery is consumed
    assert [receipt for receipt, _ in queue.returned] == ["receipt-twice", "receipt-later"]
    assert all(1 <= seconds <= 30 for _, seconds in queue.returned)
    assert [step for body, step in ran if body == "twice"] == [0, 1, 2]  # ran, and comes back to run again
    assert not [step for body, step in ran if body == "later"]  # not run now
    assert [step for body, step in ran if body == "killed"] == [0]  # killed at its second write
    assert gateway.get(scope, key(tenant, "killed-0")) is not None
    assert gateway.get(scope, key(tenant, "killed-1")) is None
    assert plan.injected == {}  # the script stood for the draws; no DynamoDB fault at rate 0
