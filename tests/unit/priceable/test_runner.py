"""The runner on a fake user's record (widget.py): the engine's steps fill the record, the user's own
steps do what it declares, underwriting outcomes stop the run, and a failed step changes nothing."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel

from chalicelib.priceable.models import Element
from chalicelib.priceable.runner import PRICE, UNDERWRITE, VALIDATE, Runner, StepFailed
from tests.unit.priceable.widget import (
    COMMIT,
    LIFECYCLE,
    PRECOMMIT,
    RATE,
    FakeEvaluator,
    Widget,
    WidgetState,
    advance,
    manual,
    raised,
    subject_of,
)


def test_advancing_a_draft_runs_every_step_up_to_the_target_on_a_copy():
    draft = Widget()
    evaluator = FakeEvaluator()

    widget, run = advance(draft, PRECOMMIT, evaluator)

    assert widget.widgetState == WidgetState.PRECOMMITTED
    assert run.done == [VALIDATE, PRICE, UNDERWRITE, PRECOMMIT]
    assert evaluator.calls == [VALIDATE, PRICE, UNDERWRITE]
    assert widget.element.category == "product"  # the validated tree is kept
    assert widget.validationResult == {"success": True}
    assert widget.duration == Decimal(12)  # a year in months
    assert [(c.rate, c.amount) for c in widget.charges] == [(RATE, Decimal("120.00"))]
    assert (widget.flags, widget.underwritingStatus) == ([], "info")
    assert run.event_data == {UNDERWRITE: {"underwritingStatus": "info"}}
    assert widget.precommits == 1
    assert draft == Widget()  # the record given is untouched


def test_the_users_own_step_runs_once_per_request_and_takes_its_declared_state():
    widget, _ = advance(Widget(), PRECOMMIT)
    committed, run = advance(widget, COMMIT)

    assert run.done == [COMMIT]
    assert committed.widgetState == WidgetState.COMMITTED
    assert committed.precommits == 1


def test_repricing_runs_only_the_price_step():
    priced, _ = advance(Widget(), PRICE)
    evaluator = FakeEvaluator()

    again, run = advance(priced, PRICE, evaluator)

    assert (run.done, evaluator.calls, again.widgetState) == ([PRICE], [PRICE], WidgetState.PRICED)


def test_a_failed_step_raises_its_result_and_leaves_the_record_as_it_was():
    draft = Widget()
    with pytest.raises(StepFailed) as failed:
        advance(draft, PRICE, FakeEvaluator(invalid="colour is not a colour"))

    assert failed.value.result == {"success": False, "errors": ["colour is not a colour"]}
    assert draft == Widget()


@pytest.mark.parametrize(
    ("level", "stop"),
    [("block", WidgetState.UNDERWRITTEN_BLOCKED), ("decline", WidgetState.DECLINED), ("reject", WidgetState.REJECTED)],
)
def test_an_underwriting_stop_ends_the_run_in_its_state(level, stop):
    widget, run = advance(Widget(), COMMIT, FakeEvaluator(raises=[raised(level, "too risky")]))

    assert widget.widgetState == stop
    assert run.done == [VALIDATE, PRICE, UNDERWRITE]  # neither precommit nor commit ran
    assert widget.precommits == 0
    assert widget.underwritingStatus == level
    assert [(f.level, f.note, f.source) for f in widget.flags] == [(level, "too risky", "plugin")]


def test_underwriting_again_after_the_flag_is_gone_goes_on_from_the_stop():
    declined, _ = advance(Widget(), PRECOMMIT, FakeEvaluator(raises=[raised("decline")]))

    widget, run = advance(declined, PRECOMMIT, FakeEvaluator())

    assert run.done == [UNDERWRITE, PRECOMMIT]
    assert widget.widgetState == WidgetState.PRECOMMITTED
    assert widget.flags == []  # the plugin no longer raises it: an uncleared plugin flag goes


def test_the_runner_tells_underwriting_whether_the_record_was_rejected_when_the_request_began():
    rejected, _ = advance(Widget(), UNDERWRITE, FakeEvaluator(raises=[raised("reject")]))
    evaluator = FakeEvaluator(raises=[raised("reject"), raised("approve")])

    still, _ = advance(rejected, COMMIT, evaluator)

    assert evaluator.already_rejected == [True]
    assert still.widgetState == WidgetState.REJECTED  # an approve does not lift a rejection


def test_an_approve_passes_a_record_that_was_not_rejected_before():
    evaluator = FakeEvaluator(raises=[raised("reject"), raised("approve")])

    widget, run = advance(Widget(), PRECOMMIT, evaluator)

    assert evaluator.already_rejected == [False]
    assert (widget.widgetState, widget.underwritingStatus) == (WidgetState.PRECOMMITTED, "approve")
    assert run.done[-1] == PRECOMMIT


def test_a_cleared_manual_flag_does_not_stop_underwriting_and_an_uncleared_one_does():
    priced, _ = advance(Widget(), PRICE)
    cleared = priced.model_copy(update={"flags": [manual("M1", "decline", cleared=True)]})
    standing = priced.model_copy(update={"flags": [manual("M1", "decline")]})

    assert advance(cleared, PRECOMMIT)[0].widgetState == WidgetState.PRECOMMITTED
    stopped, _ = advance(standing, PRECOMMIT)
    assert (stopped.widgetState, stopped.underwritingStatus) == (WidgetState.DECLINED, "decline")
    assert [f.locator for f in stopped.flags] == ["M1"]  # manual flags are kept as they are


class Unpriced(BaseModel):
    """A record that holds validation but neither charges nor flags (as a quick quote holds no flags)."""

    widgetState: WidgetState = WidgetState.DRAFT
    element: Element = Widget().element
    validationResult: Any = None


@pytest.mark.parametrize("step", [PRICE, UNDERWRITE])
def test_a_step_whose_fields_the_record_lacks_is_a_type_error_naming_both(step):
    runner = Runner(LIFECYCLE, Unpriced(), FakeEvaluator(), lambda record: subject_of(Widget(element=record.element)))

    assert runner.run([VALIDATE]).widgetState == WidgetState.VALIDATED
    with pytest.raises(TypeError, match=f"^a Unpriced lacks the fields of the {step} step$"):
        runner.run([step])
