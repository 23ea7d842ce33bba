"""A fake user of the priceable engine, declared the way quotes declare theirs (quotes/lifecycle.py):
a widget with states of its own, a `precommit` step after underwriting that underwriting must precede
whenever it runs, and a final `commit`. Only the plugins are faked: `FakeEvaluator` validates, prices
and raises scripted flags, and decides the outcome with the engine's own rules (underwriting.py and
the plugin contract's `underwriting_outcome`), as evaluation.Evaluation does."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from enum import StrEnum
from itertools import count
from typing import Any

from pydantic import BaseModel

from chalicelib.plugins.contract import underwriting_outcome
from chalicelib.plugins.models import PluginFlag
from chalicelib.priceable import underwriting
from chalicelib.priceable.lifecycle import Lifecycle, Progress
from chalicelib.priceable.models import Charge, Element, Entity, Flag
from chalicelib.priceable.runner import PRICE, UNDERWRITE, VALIDATE, Runner, StepFailed, Underwritten
from chalicelib.priceable.subject import NO_ACCOUNT, Subject

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
END = datetime(2027, 1, 1, tzinfo=timezone.utc)
NOW = datetime(2025, 12, 1, tzinfo=timezone.utc)
PRECOMMIT, COMMIT = "precommit", "commit"
WIDGET = Entity("quote", "widget")
RATE = Decimal("10.00")
_flag_numbers = count(1)


class WidgetState(StrEnum):
    DRAFT = "draft"
    VALIDATED = "validated"
    PRICED = "priced"
    UNDERWRITTEN = "underwritten"
    PRECOMMITTED = "precommitted"
    COMMITTED = "committed"
    UNDERWRITTEN_BLOCKED = "underwrittenBlocked"
    DECLINED = "declined"
    REJECTED = "rejected"
    SCRAPPED = "scrapped"


FINAL = frozenset({"committed", "scrapped"})
STOPS = frozenset({"underwrittenBlocked", "declined", "rejected"})

LIFECYCLE = Lifecycle(
    entity=WIDGET,
    state_field="widgetState",
    states=WidgetState,
    steps=(VALIDATE, PRICE, UNDERWRITE, PRECOMMIT, COMMIT),
    progress={
        "draft": Progress(0),
        "validated": Progress(1),
        "priced": Progress(2),
        "underwritten": Progress(3),
        "precommitted": Progress(4, repeatable=False),
        **{state: Progress(2, repeatable=False) for state in STOPS},
    },
    final=FINAL,
    state_after={
        VALIDATE: "validated",
        PRICE: "priced",
        UNDERWRITE: "underwritten",
        PRECOMMIT: "precommitted",
        COMMIT: "committed",
    },
    underwriting_stops=STOPS,
    runs_first={PRECOMMIT: UNDERWRITE},
    resettable=frozenset(WidgetState) - FINAL - {"precommitted"},
    also_closed={"be scrapped": frozenset({"precommitted"})},
)


class Widget(BaseModel):
    """The record the runner works on: the fields its steps touch, and the state."""

    locator: str = "W1"
    widgetState: WidgetState = WidgetState.DRAFT
    element: Element = Element(locator="E1", staticLocator="S1", type="Widget", data={"colour": "red"})
    validationResult: Any = None
    charges: list[Charge] | None = None
    duration: Decimal | None = None
    flags: list[Flag] = []
    underwritingStatus: str | None = None
    precommits: int = 0


def subject_of(widget: Widget) -> Subject:
    return Subject(
        kind="transaction",
        locator=widget.locator,
        product="Widget",
        start=START,
        end=END,
        currency="USD",
        timezone="UTC",
        basis="months",
        element=widget.element,
        static={},
        jurisdiction=None,
        config_version="1",
        account=lambda: NO_ACCOUNT,
    )


def raised(level: str, note: str = "", tag: str = "") -> PluginFlag:
    return PluginFlag(level=level, note=note, tag=tag, element_locator=None)  # type: ignore[arg-type]


def manual(locator: str, level: str, *, cleared: bool = False) -> Flag:
    return Flag(
        locator=locator,
        level=level,
        source="manual",
        createdBy="U1",
        createdTime=NOW,
        clearedBy="U1" if cleared else None,
        clearedTime=NOW if cleared else None,
    )


@dataclass
class FakeEvaluator:
    """`raises`: the flags the underwriting plugin raises; `invalid`: a validation error, if any."""

    raises: list[PluginFlag] = field(default_factory=list)
    invalid: str | None = None
    calls: list[str] = field(default_factory=list)
    already_rejected: list[bool] = field(default_factory=list)

    def validate(self, subject: Subject) -> tuple[Element, Any]:
        self.calls.append(VALIDATE)
        if self.invalid:
            raise StepFailed({"success": False, "errors": [self.invalid]})
        return subject.element.model_copy(update={"category": "product"}), {"success": True}

    def price(self, subject: Subject) -> list[Charge]:
        self.calls.append(PRICE)
        return [
            Charge(
                locator="C1",
                elementLocator=subject.element.locator,
                elementStaticLocator=subject.element.staticLocator,
                chargeType="premium",
                chargeCategory="premium",
                rate=RATE,
                amount=RATE * subject.duration,
            )
        ]

    def underwrite(self, subject: Subject, flags: list[Flag], *, already_rejected: bool) -> Underwritten:
        self.calls.append(UNDERWRITE)
        self.already_rejected.append(already_rejected)
        by = underwriting.Author("plugin-run", NOW, lambda: f"F{next(_flag_numbers)}")
        after = underwriting.after_run(flags, self.raises, by)
        outcome = underwriting_outcome(underwriting.uncleared_levels(after), already_rejected=already_rejected)
        return Underwritten(after, outcome.result, outcome.status)


def precommit(widget: Widget) -> None:
    widget.precommits += 1


def runner(widget: Widget, evaluator: FakeEvaluator) -> Runner[Widget]:
    return Runner(LIFECYCLE, widget, evaluator, subject_of, own_steps={PRECOMMIT: precommit, COMMIT: lambda _: None})


def advance(widget: Widget, target: str, evaluator: FakeEvaluator | None = None) -> tuple[Widget, Runner[Widget]]:
    """What a user's service does for `PATCH .../{target}`: the steps from the widget's state, run."""
    run = runner(widget, evaluator or FakeEvaluator())
    return run.run(LIFECYCLE.steps_to(widget.widgetState, target)), run
