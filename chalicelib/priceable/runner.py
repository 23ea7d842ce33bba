"""Advancing a priceable record through the steps its lifecycle gives, on a working copy. Pure: the
checks and plugins come in an Evaluator (evaluation.Evaluation), and nothing is stored here.

The engine's own steps are `validate` (the element tree normalised, the validationResult kept),
`price` (the charges and the priced duration) and `underwrite` (the flags after the run, the
underwritingStatus, and the state the outcome gives: a stop ends the run there). Any other step
(accept, issue, precommit) is the user's: `own_steps` does what it needs to the record, and the
record takes the state the step leads to. An evaluation that does not pass raises StepFailed: the
request then stores nothing and answers its result.

The record has the fields `element`, `validationResult` (Validatable), `charges`, `duration`
(Priceable), `flags` and `underwritingStatus` (Underwritable) as far as its steps touch them, and its
state in `lifecycle.state_field`: a record without the fields of a step it is asked to take is a
TypeError (its lifecycle names a step it cannot hold).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from chalicelib.priceable.lifecycle import Lifecycle, Progress
from chalicelib.priceable.models import Charge, Element, Flag
from chalicelib.priceable.subject import Subject

VALIDATE, PRICE, UNDERWRITE = "validate", "price", "underwrite"
PASSED = "passed"
REJECTED = "rejected"
UNDERWRITING_STOPS = frozenset({"underwrittenBlocked", "declined", "rejected"})
"""The states underwriting that does not pass leaves a quote or a transaction in (each lifecycle's
`underwriting_stops`)."""
ACCEPT, ISSUE = "accept", "issue"
"""The user's steps after underwriting on the path to issue (quotes and policy transactions)."""
STATES_TO_ISSUE = {
    VALIDATE: "validated",
    PRICE: "priced",
    UNDERWRITE: "underwritten",
    ACCEPT: "accepted",
    ISSUE: "issued",
}
"""The state each step of the path to issue leads to (each such lifecycle's `state_after`)."""


def progress_to_issue(validated: int) -> dict[str, Progress]:
    """Where the states of the path to issue stand (each such lifecycle's `progress` from `validated` on),
    `validated` being the steps behind a validated record (quotes 1; transactions 2, as `initialize`
    comes first). `earlyUnderwritten` is in the state enums but no path reaches it (pricing always
    precedes underwriting), so it stands with `validated`; an underwriting stop stands with `priced`
    and is not priced again; an accepted record is not accepted twice."""
    return {
        "validated": Progress(validated),
        "earlyUnderwritten": Progress(validated),
        "priced": Progress(validated + 1),
        "underwritten": Progress(validated + 2),
        "accepted": Progress(validated + 3, repeatable=False),
        **{state: Progress(validated + 1, repeatable=False) for state in UNDERWRITING_STOPS},
    }


R = TypeVar("R", bound=BaseModel)


class StepFailed(Exception):
    """A step that did not pass: the request stores nothing and answers this validationResult."""

    def __init__(self, result: Any):
        super().__init__("step failed")
        self.result = result


@dataclass(frozen=True)
class Underwritten:
    """An underwriting run: the flags after it, its result (`passed` or the state it stops in) and
    the underwritingStatus (the deciding flag level)."""

    flags: list[Flag]
    result: str
    status: str


@runtime_checkable
class Validatable(Protocol):
    """What the `validate` step sets."""

    element: Element
    validationResult: Any


@runtime_checkable
class Priceable(Protocol):
    """What the `price` step sets."""

    charges: list[Charge] | None
    duration: Decimal | None


@runtime_checkable
class Underwritable(Protocol):
    """What the `underwrite` step reads (flags) and sets."""

    flags: list[Flag]
    underwritingStatus: str | None


class Evaluator(Protocol):
    def validate(self, subject: Subject) -> tuple[Element, Any]:
        """The normalised tree and the passing validationResult (raises StepFailed)."""

    def price(self, subject: Subject) -> list[Charge]:
        """The charges (raises StepFailed)."""

    def underwrite(self, subject: Subject, flags: list[Flag], *, already_rejected: bool) -> Underwritten:
        """The run's outcome (raises StepFailed)."""


class Runner(Generic[R]):
    """Runs steps on a working copy of `record` (`record` itself stays as it was), collecting the
    steps done and the data of their events."""

    def __init__(
        self,
        lifecycle: Lifecycle,
        record: R,
        evaluator: Evaluator,
        subject_of: Callable[[R], Subject],
        own_steps: Mapping[str, Callable[[R], None]] | None = None,
    ):
        self.lifecycle = lifecycle
        self.record = record.model_copy(deep=True)
        self.evaluator = evaluator
        self.subject_of = subject_of
        self.own_steps = own_steps or {}
        self.started_in = str(getattr(record, lifecycle.state_field))
        self.done: list[str] = []
        self.event_data: dict[str, dict[str, Any]] = {}

    def run(self, steps: Iterable[str]) -> R:
        """The record after `steps`, or after the underwriting step that stopped it."""
        for step in steps:
            state = self._step(step)
            setattr(self.record, self.lifecycle.state_field, state)
            self.done.append(step)
            if state in self.lifecycle.underwriting_stops:
                break
        return self.record

    def _step(self, step: str) -> Any:
        record, reached = self.record, self.lifecycle.reached_by(step)
        if step == VALIDATE:
            if not isinstance(record, Validatable):
                raise _cannot_hold(record, step)
            record.element, record.validationResult = self.evaluator.validate(self.subject_of(record))
        elif step == PRICE:
            if not isinstance(record, Priceable):
                raise _cannot_hold(record, step)
            subject = self.subject_of(record)
            record.charges = self.evaluator.price(subject)
            record.duration = subject.duration
        elif step == UNDERWRITE:
            if not isinstance(record, Underwritable):
                raise _cannot_hold(record, step)
            run = self.evaluator.underwrite(
                self.subject_of(record), record.flags, already_rejected=self.started_in == REJECTED
            )
            record.flags, record.underwritingStatus = run.flags, run.status
            self.event_data[UNDERWRITE] = {"underwritingStatus": run.status}
            return reached if run.result == PASSED else self.lifecycle.states(run.result)
        else:
            self.own_steps[step](record)
        return reached


def _cannot_hold(record: BaseModel, step: str) -> TypeError:
    return TypeError(f"a {type(record).__name__} lacks the fields of the {step} step")
