"""The fault plan (local/faults.py) against moto: each kind does what it says to the store and to the
caller, botocore's retries see it as they would see AWS's, and one seed gives the same faults."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chalicelib.core.errors import AlreadyExists, ConcurrentModification, Unavailable
from chalicelib.storage import clients, keys, table
from local.faults import FaultPlan, no_backoff
from tests.storage.support import item, key


@pytest.fixture
def faults(aws) -> Iterator[list[FaultPlan]]:
    """Install plans with `faults.append(plan)`: each is installed on the DynamoDB client until the test ends."""
    plans: list[FaultPlan] = []
    client = clients.dynamodb()
    with no_backoff():
        yield _Installer(plans, client)
    for plan in plans:
        plan.uninstall(client)


class _Installer(list):
    def __init__(self, plans: list[FaultPlan], client: object):
        super().__init__()
        self.plans, self.client = plans, client

    def append(self, plan: FaultPlan) -> None:
        plan.install(self.client)
        self.plans.append(plan)
        super().append(plan)


def test_one_seed_gives_the_same_faults_and_another_seed_others():
    def run(seed: int) -> list[tuple[str, str]]:
        plan = FaultPlan(seed, 0.3)
        for number in range(200):
            plan.decide("BatchWriteItem" if number % 3 else "GetItem")
        return plan.log

    assert run(7) == run(7)
    assert run(7) != run(8)
    assert 30 < len(run(7)) < 90  # about 30 % of 200
    assert {kind for _, kind in run(7)} == {"throttle", "timeout_before", "timeout_after", "partial_batch"}
    assert all(operation == "BatchWriteItem" for operation, kind in run(7) if kind == "partial_batch")


def test_a_paused_plan_injects_nothing_and_draws_nothing():
    plan, twin = FaultPlan(3, 0.5), FaultPlan(3, 0.5)
    with plan.paused():
        assert [plan.decide("GetItem") for _ in range(20)] == [None] * 20
    assert [plan.decide("GetItem") for _ in range(50)] == [twin.decide("GetItem") for _ in range(50)]


def test_bad_plans_are_refused():
    with pytest.raises(ValueError):
        FaultPlan(1, 1.5)
    with pytest.raises(ValueError):
        FaultPlan(1, 0.1, kinds=("meteor",))


def test_throttles_on_every_attempt_answer_503_and_change_nothing(faults, tenant, ddb_calls):
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    plan = FaultPlan(1, 1.0, kinds=("throttle",))
    faults.append(plan)
    with pytest.raises(Unavailable):
        gateway.write(scope, table.put(item(tenant, "a")))
    assert plan.injected["throttle"] == 5  # the first attempt and botocore's four retries (storage/clients.py)
    plan.enabled = False
    assert gateway.get(scope, key(tenant, "a")) is None


def test_a_throttle_botocore_retries_is_invisible(faults, tenant):
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    plan = FaultPlan(5, 1.0, kinds=("throttle",))
    faults.append(plan)
    original = plan.decide
    plan.decide = lambda operation: original(operation) if not plan.injected else None  # the first attempt only
    gateway.write(scope, table.put(item(tenant, "a", n=1)))
    assert plan.injected["throttle"] == 1
    assert gateway.get(scope, key(tenant, "a"))["n"] == 1


def test_a_timeout_before_the_call_applies_nothing(faults, tenant):
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    plan = FaultPlan(2, 1.0, kinds=("timeout_before",))
    faults.append(plan)
    with pytest.raises(Unavailable):
        gateway.write(scope, table.put(item(tenant, "a")))
    plan.enabled = False
    assert gateway.get(scope, key(tenant, "a")) is None


def test_a_timeout_after_the_call_applies_it_and_botocore_sends_it_again(faults, tenant):
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    plan = FaultPlan(2, 1.0, kinds=("timeout_after",))
    faults.append(plan)
    with pytest.raises(Unavailable):
        gateway.write(scope, table.put(item(tenant, "a", n=2)))
    assert plan.injected["timeout_after"] == 5
    plan.enabled = False
    assert gateway.get(scope, key(tenant, "a"))["n"] == 2


def test_partial_batches_are_finished_by_the_gateway(faults, tenant):
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    plan = FaultPlan(4, 1.0, kinds=("partial_batch",))
    faults.append(plan)
    gateway.batch_write(scope, [item(tenant, f"b{number}", n=number) for number in range(7)])
    assert plan.injected["partial_batch"] >= 1
    found = gateway.batch_get(scope, [key(tenant, f"b{number}") for number in range(7)])
    assert sorted(record["n"] for record in found) == list(range(7))
    assert plan.injected["partial_batch"] >= 2


def test_a_transaction_whose_answer_was_lost_is_answered_as_the_success_it_was(faults, tenant):
    """botocore resends the same call, with the ClientRequestToken it generated for it, and DynamoDB (and moto
    with local/lean_moto.py) answers it as committed: else the resend's version check would fail against the
    state the first attempt left, a 409 for a change that was made."""
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    gateway.write(scope, table.put(item(tenant, "a", version=1)))
    plan = FaultPlan(6, 1.0, kinds=("timeout_after",))
    faults.append(plan)
    original = plan.decide
    plan.decide = lambda operation: original(operation) if not plan.injected else None  # the first attempt only
    gateway.transact(
        scope, [table.update(key(tenant, "a"), {"n": 1}, expected_version=1), table.put_new(item(tenant, "b"))]
    )
    assert plan.injected["timeout_after"] == 1
    plan.enabled = False
    assert gateway.get(scope, key(tenant, "a"))["version"] == 2


def test_a_token_comes_back_with_other_items_is_refused(aws, tenant):
    from botocore.exceptions import ClientError

    client, scope_key = clients.dynamodb(), key(tenant, "t")
    from chalicelib.settings import settings

    name = settings().table_name
    put = {"Put": {"TableName": name, "Item": {"PK": {"S": scope_key.pk}, "SK": {"S": scope_key.sk}, "n": {"N": "1"}}}}
    client.transact_write_items(TransactItems=[put], ClientRequestToken="token-1")
    client.transact_write_items(TransactItems=[put], ClientRequestToken="token-1")  # a no-op success
    other = {"Put": {**put["Put"], "Item": {**put["Put"]["Item"], "n": {"N": "2"}}}}
    with pytest.raises(ClientError) as refused:
        client.transact_write_items(TransactItems=[other], ClientRequestToken="token-1")
    assert refused.value.response["Error"]["Code"] == "IdempotentParameterMismatchException"
    assert table.gateway().get(keys.tenant_scope(tenant), scope_key)["n"] == 1


def _first_attempt_only(plan: FaultPlan) -> FaultPlan:
    original = plan.decide
    plan.decide = lambda operation: original(operation) if not plan.injected else None  # type: ignore[method-assign]
    return plan


def test_a_conditional_write_whose_answer_was_lost_is_the_success_it_was(faults, tenant):
    """A job's claim is one conditional UpdateItem: resent after it was applied, its version check fails, and
    the gateway tells its own write (its token on the item) from another writer's."""
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    gateway.write(scope, table.put(item(tenant, "a", version=1)))
    plan = _first_attempt_only(FaultPlan(6, 1.0, kinds=("timeout_after",)))
    faults.append(plan)
    gateway.write(scope, table.update(key(tenant, "a"), {"n": 1}, expected_version=1))
    gateway.write(scope, table.put_new(item(tenant, "fresh")))
    assert plan.injected["timeout_after"] == 1
    with pytest.raises(ConcurrentModification):  # another writer's change is still refused
        gateway.write(scope, table.update(key(tenant, "a"), {"n": 3}, expected_version=1))
    plan.enabled = False
    assert (gateway.get(scope, key(tenant, "a"))["version"], gateway.get(scope, key(tenant, "a"))["n"]) == (2, 1)


def test_a_put_new_whose_answer_was_lost_is_not_already_existing(faults, tenant):
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    plan = _first_attempt_only(FaultPlan(6, 1.0, kinds=("timeout_after",)))
    faults.append(plan)
    gateway.write(scope, table.put_new(item(tenant, "fresh", n=1)))
    assert plan.injected["timeout_after"] == 1
    with pytest.raises(AlreadyExists):
        gateway.write(scope, table.put_new(item(tenant, "fresh", n=2)))


def test_an_increment_whose_answer_was_lost_counts_once(faults, tenant):
    gateway, scope = table.gateway(), keys.tenant_scope(tenant)
    counter = key(tenant, "counter")
    assert gateway.increment(scope, counter, "value") == 1
    plan = _first_attempt_only(FaultPlan(6, 1.0, kinds=("timeout_after",)))
    faults.append(plan)
    assert gateway.increment(scope, counter, "value", below=10) == 2
    assert plan.injected["timeout_after"] == 1
    assert gateway.increment(scope, counter, "value") == 3
