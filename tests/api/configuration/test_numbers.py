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
