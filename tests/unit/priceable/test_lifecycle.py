"""The table-driven lifecycle, proved on a fake user's declaration (widget.py): which steps a request
runs, and the 409s, named after the declaring entity, when it may not."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from chalicelib.core.errors import InvalidState
from chalicelib.http.errors import status_of
from chalicelib.priceable.models import Entity
from chalicelib.priceable.runner import PRICE, UNDERWRITE, VALIDATE
from tests.unit.priceable.widget import COMMIT, LIFECYCLE, NOW, PRECOMMIT, WidgetState


def refused(call, *args) -> InvalidState:
    with pytest.raises(InvalidState) as raised:
        call(*args)
    assert status_of(raised.value) == 409
    return raised.value


@pytest.mark.parametrize(
    ("state", "target", "steps"),
    [
        ("draft", VALIDATE, [VALIDATE]),
        ("draft", PRICE, [VALIDATE, PRICE]),
        ("draft", COMMIT, [VALIDATE, PRICE, UNDERWRITE, PRECOMMIT, COMMIT]),
        ("validated", UNDERWRITE, [PRICE, UNDERWRITE]),
        ("priced", COMMIT, [UNDERWRITE, PRECOMMIT, COMMIT]),
        ("precommitted", COMMIT, [COMMIT]),
    ],
)
def test_a_later_step_runs_the_steps_the_record_lacks_first(state, target, steps):
    assert LIFECYCLE.steps_to(state, target) == steps


@pytest.mark.parametrize(
    ("state", "target"), [("validated", VALIDATE), ("priced", PRICE), ("underwritten", UNDERWRITE)]
)
def test_the_step_that_made_the_state_runs_again(state, target):
    assert LIFECYCLE.steps_to(state, target) == [target]


def test_a_step_declared_to_run_first_precedes_its_step_even_from_past_it():
    # the widget is underwritten already; precommit underwrites again (flags may have changed since)
    assert LIFECYCLE.steps_to("underwritten", PRECOMMIT) == [UNDERWRITE, PRECOMMIT]
    assert LIFECYCLE.steps_to("priced", PRECOMMIT) == [UNDERWRITE, PRECOMMIT]


def test_a_state_declared_not_repeatable_refuses_its_own_step_with_the_entitys_code():
    error = refused(LIFECYCLE.steps_to, "precommitted", PRECOMMIT)
    assert error.code == "quote.invalid_state"
    assert error.message == "A widget that is precommitted cannot precommit"


def test_an_earlier_step_is_refused_with_advice_to_reset_where_the_state_allows_it():
    error = refused(LIFECYCLE.steps_to, "underwritten", PRICE)
    assert (error.code, error.message) == (
        "quote.invalid_state",
        "A widget that is underwritten cannot price: reset it to draft first",
    )
    assert (
        refused(LIFECYCLE.steps_to, "precommitted", VALIDATE).message == "A widget that is precommitted cannot validate"
    )


@pytest.mark.parametrize("stop", ["underwrittenBlocked", "declined", "rejected"])
def test_from_an_underwriting_stop_only_underwriting_and_the_steps_after_it_run(stop):
    assert LIFECYCLE.steps_to(stop, UNDERWRITE) == [UNDERWRITE]
    assert LIFECYCLE.steps_to(stop, COMMIT) == [UNDERWRITE, PRECOMMIT, COMMIT]
    assert refused(LIFECYCLE.steps_to, stop, PRICE).code == "quote.invalid_state"


@pytest.mark.parametrize("state", ["committed", "scrapped"])
@pytest.mark.parametrize("target", [VALIDATE, PRICE, COMMIT])
def test_nothing_advances_from_a_final_state(state, target):
    error = refused(LIFECYCLE.steps_to, state, target)
    assert (error.code, error.message) == ("quote.invalid_state", f"A widget that is {state} cannot {target}")


def test_a_step_the_declaration_lacks_is_a_programming_error_not_a_409():
    with pytest.raises(ValueError, match="a widget cannot issue"):
        LIFECYCLE.steps_to("draft", "issue")


def test_operations_are_refused_in_final_states_and_where_the_declaration_closes_them():
    assert refused(LIFECYCLE.check, "committed", "be reset").message == "A widget that is committed cannot be reset"
    assert refused(LIFECYCLE.check, "precommitted", "be scrapped").code == "quote.invalid_state"
    LIFECYCLE.check("precommitted", "be reset")  # closed only to scrapping
    LIFECYCLE.check("priced", "be scrapped")


def test_only_a_draft_is_editable():
    LIFECYCLE.check_editable("draft")
    error = refused(LIFECYCLE.check_editable, "priced")
    assert (error.code, error.message) == ("quote.not_draft", "Only a draft widget can be changed; this one is priced")


def test_a_record_advances_until_its_expiration_time_not_at_it():
    LIFECYCLE.check_not_expired(None, NOW)
    LIFECYCLE.check_not_expired(NOW + timedelta(seconds=1), NOW)
    error = refused(LIFECYCLE.check_not_expired, NOW, NOW)
    assert (error.code, error.message) == ("quote.expired", "The widget has expired and cannot advance")


def test_the_expiry_error_names_the_entity_the_declaration_says():
    lent = replace(LIFECYCLE, expiry=Entity("quickQuote", "gadget"))
    assert refused(lent.check_not_expired, NOW - timedelta(days=1), NOW).code == "quickQuote.expired"


def test_each_step_leads_to_its_declared_state():
    assert [LIFECYCLE.reached_by(step) for step in LIFECYCLE.steps] == [
        WidgetState.VALIDATED,
        WidgetState.PRICED,
        WidgetState.UNDERWRITTEN,
        WidgetState.PRECOMMITTED,
        WidgetState.COMMITTED,
    ]
