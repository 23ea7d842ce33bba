"""The state machine of a priceable thing, driven by the table its user declares. Pure.

A user (quotes, quick quotes, policy transactions) declares its steps in order, how many of them lie
behind each state, which states are final, which state each step leads to, and which states
underwriting may stop in. The rules are the same for all:

- Asking for a later step runs the earlier ones the record lacks first; asking for the step that
  made the current state runs it again, unless the state says it may not be repeated (an accepted
  quote is not accepted twice; a quote stopped by underwriting is not priced again); asking for an
  earlier one is a 409 (reset first).
- A step listed in `runs_first` (accept: underwrite) is preceded by that step whenever it runs from
  before it, even when the record is past that step already: flags changed since count.
- Nothing advances from a final state, and a record whose expiration time has come advances no further.

Error codes and messages name the user's entity: `{code}.invalid_state`, `{code}.not_draft`,
`{code}.expired` ("A quote that is issued cannot price").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from chalicelib.core import codes
from chalicelib.core.errors import DomainError
from chalicelib.priceable.models import Entity


@dataclass(frozen=True)
class Progress:
    """Where a state stands on the path: `behind` steps done; `repeatable` when the step that made it
    may run again."""

    behind: int
    repeatable: bool = True


@dataclass(frozen=True)
class Lifecycle:
    """One user's declaration; `entity` names it in error codes and messages, `state_field` is the
    record's field holding the state (a member of `states`)."""

    entity: Entity
    state_field: str
    states: type[StrEnum]
    steps: tuple[str, ...]
    progress: Mapping[str, Progress]
    final: frozenset[str]
    state_after: Mapping[str, str]
    underwriting_stops: frozenset[str] = frozenset()
    runs_first: Mapping[str, str] = field(default_factory=dict)
    editable: frozenset[str] = frozenset({"draft"})
    resettable: frozenset[str] = frozenset()
    also_closed: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Operations (by the phrase messages use) refused in these states as well as in the final ones."""
    expiry: Entity | None = None
    """Who the expiry error names, when not `entity` (quick quotes answer `quote.expired`)."""

    def steps_to(self, state: str, target: str) -> list[str]:
        """The steps that take a record in `state` to what `target` makes of it (409 when it cannot)."""
        if target not in self.steps:
            raise ValueError(f"a {self.entity.noun} cannot {target}")
        if state in self.final:
            raise self._invalid(f"A {self.entity.noun} that is {state} cannot {target}")
        wanted = self.steps.index(target) + 1
        where = self.progress[state]
        if where.behind > wanted or (where.behind == wanted and not where.repeatable):
            advice = ": reset it to draft first" if state in self.resettable else ""
            raise self._invalid(f"A {self.entity.noun} that is {state} cannot {target}{advice}")
        steps = list(self.steps[min(where.behind, wanted - 1) : wanted])
        for step, earlier in self.runs_first.items():
            if step in steps and earlier not in steps:
                steps.insert(steps.index(step), earlier)
        return steps

    def reached_by(self, step: str) -> StrEnum:
        """The state a step that passed leaves the record in."""
        return self.states(self.state_after[step])

    def check_editable(self, state: str) -> None:
        if state not in self.editable:
            raise codes.NOT_DRAFT[self.entity.code](
                f"Only a draft {self.entity.noun} can be changed; this one is {state}"
            )

    def check_not_expired(self, expiration: datetime | None, now: datetime) -> None:
        if expiration is not None and expiration <= now:
            named = self.expiry or self.entity
            raise codes.EXPIRED[named.code](f"The {named.noun} has expired and cannot advance")

    def check(self, state: str, doing: str) -> None:
        """Refuses `doing` ("be reset", "change its underwriting flags") in a final state, or in one the
        declaration closes to it."""
        if state in self.final or state in self.also_closed.get(doing, ()):
            raise self._invalid(f"A {self.entity.noun} that is {state} cannot {doing}")

    def _invalid(self, message: str) -> DomainError:
        return codes.INVALID_STATE[self.entity.code](message)
