"""configuration.numbers: numbers reserved from a deployed tenant's plans, unique per entity kind."""

from __future__ import annotations

import pytest

from chalicelib.configuration import numbers
from chalicelib.configuration import service as configuration
from chalicelib.core.errors import AlreadyExists, InvalidState
from chalicelib.runtime import wiring
from tests.builders import system_ctx
from tests.support.configs import configured_tenant


@pytest.fixture
def ctx(api, admin_token):
    return system_ctx().for_tenant(configured_tenant(api, admin_token))


def reserve(ctx, plan, kind, owner, **options):
    _, model = configuration.current_model(ctx)
    uow = wiring.unit_of_work(ctx)
    number = numbers.reserve_number(ctx, uow, model, plan, kind, owner, **options)
    uow.commit()
    return number


def test_each_entity_kind_of_a_plan_has_its_own_sequence_and_format(ctx):
    assert reserve(ctx, "PolicyNumbers", "policy", "P1", product="PersonalAuto") == "PA-000001"
    assert reserve(ctx, "PolicyNumbers", "quote", "Q1", product="Homeowners") == "QHO-000001"
    assert reserve(ctx, "PolicyNumbers", "policy", "P2", product="Homeowners") == "HO-000002"
    assert numbers.number_owner(ctx, "policy", "HO-000002") == "P2"
    assert numbers.number_owner(ctx, "quote", "HO-000002") is None


def test_a_placeholder_without_value_is_refused_before_a_number_is_used(ctx):
    with pytest.raises(InvalidState) as refused:
        reserve(ctx, "PolicyNumbers", "policy", "P1")
    assert refused.value.code == "numbering.invalid_plan"
    assert reserve(ctx, "PolicyNumbers", "policy", "P1", product="PersonalAuto") == "PA-000001"


def test_an_unknown_plan_is_refused(ctx):
    with pytest.raises(InvalidState):
        reserve(ctx, "Nope", "policy", "P1")


def test_claimed_numbers_are_unique_and_released_numbers_free(ctx):
    uow = wiring.unit_of_work(ctx)
    numbers.claim_number(ctx, uow, "policy", "X-1", "P1")
    uow.commit()
    uow = wiring.unit_of_work(ctx)
    numbers.claim_number(ctx, uow, "policy", "X-1", "P2")
    with pytest.raises(AlreadyExists) as taken:
        uow.commit()
    assert taken.value.code == "policy.number_taken"
    uow = wiring.unit_of_work(ctx)
    numbers.release_number(ctx, uow, "policy", "X-1")
    numbers.claim_number(ctx, uow, "policy", "X-2", "P1")
    uow.commit()
    assert (numbers.number_owner(ctx, "policy", "X-1"), numbers.number_owner(ctx, "policy", "X-2")) == (None, "P1")


def test_a_block_reserved_ahead_is_taken_in_order_then_the_counter(ctx, ddb_calls):
    """`reserve_block`: one UpdateItem for many values; inside `given` they are taken before the counter, each
    still claimed by its guard; what no block holds comes from the counter, after the block."""
    _, model = configuration.current_model(ctx)
    assert reserve(ctx, "PolicyNumbers", "policy", "P0", product="PersonalAuto") == "PA-000001"
    ddb_calls.clear()
    first = numbers.reserve_block(ctx, model, "PolicyNumbers", "policy", 3)
    assert (first, ddb_calls) == (1, ["UpdateItem"])
    with numbers.given([("PolicyNumbers", "policy", first + 1, 2)]):  # the block's first value goes unused: a gap
        ddb_calls.clear()
        taken = [reserve(ctx, "PolicyNumbers", "policy", f"P{n}", product="PersonalAuto") for n in (1, 2)]
        assert "UpdateItem" not in ddb_calls
        assert reserve(ctx, "PolicyNumbers", "policy", "P3", product="PersonalAuto") == "PA-000005"  # the counter
    assert taken == ["PA-000003", "PA-000004"]
    assert reserve(ctx, "PolicyNumbers", "policy", "P4", product="PersonalAuto") == "PA-000006"


def test_a_block_the_plan_cannot_give_is_none_and_reserves_nothing(ctx):
    _, model = configuration.current_model(ctx)
    assert numbers.reserve_block(ctx, model, "PolicyNumbers", "policy", 10**6) is None  # 999,999 in the format
    assert numbers.reserve_block(ctx, model, "Nope", "policy", 2) is None
    assert reserve(ctx, "PolicyNumbers", "policy", "P1", product="PersonalAuto") == "PA-000001"
