"""The quote state machine: which steps each request runs from each state, and what it refuses."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from chalicelib.core.errors import InvalidState
from chalicelib.policies.models import TransactionState
from chalicelib.quickquotes.lifecycle import LIFECYCLE as QUICK
from chalicelib.quotes.lifecycle import LIFECYCLE
from chalicelib.quotes.models import QuoteState

V, P, U, A, I = LIFECYCLE.steps  # noqa: E741 (I: issue)


@pytest.mark.parametrize(
    "state, target, steps",
    [
        ("draft", V, [V]),
        ("draft", I, [V, P, U, A, I]),
        ("validated", V, [V]),
        ("validated", U, [P, U]),
        ("priced", P, [P]),
        ("priced", A, [U, A]),
        ("underwritten", U, [U]),
        ("underwritten", A, [U, A]),
        ("underwritten", I, [U, A, I]),
        ("accepted", I, [I]),
        ("underwrittenBlocked", U, [U]),
        ("declined", A, [U, A]),
        ("rejected", I, [U, A, I]),
    ],
)
def test_a_request_runs_the_steps_the_quote_lacks(state, target, steps):
    assert LIFECYCLE.steps_to(state, target) == steps


@pytest.mark.parametrize(
    "state, target",
    [
        ("priced", V),
        ("underwritten", P),
        ("accepted", U),
        ("accepted", A),
        ("declined", V),
        ("underwrittenBlocked", P),
        *[(final, step) for final in ("issued", "refused", "discarded") for step in LIFECYCLE.steps],
    ],
)
def test_going_back_or_on_from_a_final_state_is_refused(state, target):
    with pytest.raises(InvalidState):
        LIFECYCLE.steps_to(state, target)


@pytest.mark.parametrize(
    "check, allowed, refused",
    [
        (
            lambda state: LIFECYCLE.check(state, "be reset"),
            ["draft", "priced", "declined", "rejected"],
            ["accepted", "issued", "refused", "discarded"],
        ),
        (
            lambda state: LIFECYCLE.check(state, "be refused"),
            ["draft", "accepted", "rejected"],
            ["issued", "refused", "discarded"],
        ),
        (
            lambda state: LIFECYCLE.check(state, "be discarded"),
            ["draft", "underwritten", "declined"],
            ["accepted", "issued", "refused", "discarded"],
        ),
        (LIFECYCLE.check_editable, ["draft"], ["validated", "priced", "issued"]),
    ],
)
def test_reset_refuse_discard_and_edits(check, allowed, refused):
    for state in allowed:
        check(state)
    for state in refused:
        with pytest.raises(InvalidState):
            check(state)


def test_an_expired_quote_does_not_advance_from_its_expiration_time_on():
    expiry = datetime(2026, 1, 20, tzinfo=timezone.utc)
    LIFECYCLE.check_not_expired(None, expiry)
    LIFECYCLE.check_not_expired(expiry, datetime(2026, 1, 19, 23, 59, tzinfo=timezone.utc))
    with pytest.raises(InvalidState) as raised:
        LIFECYCLE.check_not_expired(expiry, expiry)
    assert raised.value.code == "quote.expired"


@pytest.mark.parametrize(
    "state, target, steps",
    [
        ("draft", P, [V, P]),
        ("validated", V, [V]),
        ("priced", P, [P]),
    ],
)
def test_quick_quotes_validate_and_price(state, target, steps):
    assert QUICK.steps_to(state, target) == steps


@pytest.mark.parametrize("state, target", [("priced", V), ("quoted", P), ("discarded", V)])
def test_quick_quotes_refuse_going_back_and_final_states(state, target):
    with pytest.raises(InvalidState):
        QUICK.steps_to(state, target)


def test_a_quote_is_in_the_states_of_a_transaction_but_the_three_only_a_transaction_reaches():
    # Python's enums cannot extend one another, so the two enums list their states each; a state the platform
    # adds to both must be added to both
    assert set(QuoteState) == set(TransactionState) - {"initialized", "invalidated", "reversed"}
