"""The quote state machine (design/socotra-semantics.md §1-2, DECISIONS.md). Pure.

The nominal path is draft -> validated -> priced -> underwritten -> accepted -> issued, one step per
operation: validate, price, underwrite, accept, issue. Asking for a later step runs the earlier ones
first (issue on a draft validates, prices, underwrites, accepts and issues); asking for the step that
made the current state runs it again (re-validate, re-price, re-underwrite); asking for an earlier
one is a 409 (reset first). `accept` and `issue` on a quote that is not accepted yet always underwrite
first (also an underwritten one), as the platform runs the underwriting plugin and evaluates the flags
on accept and issue: flags changed after underwriting count.

Underwriting may stop the path in `underwrittenBlocked`, `declined` or `rejected`: from there only
underwriting again (after flags were cleared or added) and the steps after it may run, or `reset`.

`reset` returns to draft (not from accepted, issued or the final states); `refuse` and `discard` are
final, as is `issued`; an accepted quote may be issued or refused, not discarded or reset. An expired
quote (`expirationTime` at or before now) advances no further. Only a draft is editable.
`earlyUnderwritten` is in the state enum but no path reaches it (pricing always precedes
underwriting here), so it is treated like `validated`.
"""
from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from chalicelib.core.errors import InvalidState


class Step(StrEnum):
    VALIDATE = "validate"
    PRICE = "price"
    UNDERWRITE = "underwrite"
    ACCEPT = "accept"
    ISSUE = "issue"


STEPS = (Step.VALIDATE, Step.PRICE, Step.UNDERWRITE, Step.ACCEPT, Step.ISSUE)
DONE_BY = {"validated": 1, "earlyUnderwritten": 1, "priced": 2, "underwritten": 3, "accepted": 4, "issued": 5,
           "draft": 0}
"""How many steps of STEPS lie behind a quote in each state of the nominal path."""
UNDERWRITING_STOPS = frozenset({"underwrittenBlocked", "declined", "rejected"})
FINAL = frozenset({"issued", "refused", "discarded"})
STATE_AFTER = {Step.VALIDATE: "validated", Step.PRICE: "priced", Step.UNDERWRITE: "underwritten",
               Step.ACCEPT: "accepted", Step.ISSUE: "issued"}
UNDERWRITING_RESULTS = {"passed": "underwritten", "underwrittenBlocked": "underwrittenBlocked",
                        "declined": "declined", "rejected": "rejected"}


def steps_to(state: str, target: Step) -> list[Step]:
    """The steps that take a quote in `state` to what `target` makes of it (409 when it cannot)."""
    wanted = STEPS.index(target) + 1
    if state in FINAL:
        raise InvalidState(f"A quote that is {state} cannot {target.value}", code="quote.invalid_state")
    if state in UNDERWRITING_STOPS:
        if wanted < DONE_BY["underwritten"]:
            raise InvalidState(f"A quote that is {state} cannot {target.value}: reset it to draft first",
                               code="quote.invalid_state")
        return list(STEPS[DONE_BY["priced"]:wanted])
    done = DONE_BY[state]
    if done > wanted or done == wanted == DONE_BY["accepted"]:
        raise InvalidState(f"A quote that is {state} cannot {target.value}"
                           + (": reset it to draft first" if state != "accepted" else ""),
                           code="quote.invalid_state")
    steps = list(STEPS[min(done, wanted - 1):wanted])
    if done < DONE_BY["accepted"] <= wanted and Step.UNDERWRITE not in steps:
        steps.insert(0, Step.UNDERWRITE)
    return steps


def check_editable(state: str) -> None:
    if state != "draft":
        raise InvalidState(f"Only a draft quote can be changed; this one is {state}", code="quote.not_draft")


def check_not_expired(expiration: datetime | None, now: datetime) -> None:
    if expiration is not None and expiration <= now:
        raise InvalidState("The quote has expired and cannot advance", code="quote.expired")


def check_reset(state: str) -> None:
    if state in FINAL or state == "accepted":
        raise InvalidState(f"A quote that is {state} cannot be reset", code="quote.invalid_state")


def check_refuse(state: str) -> None:
    if state in FINAL:
        raise InvalidState(f"A quote that is {state} cannot be refused", code="quote.invalid_state")


def check_discard(state: str) -> None:
    if state in FINAL or state == "accepted":
        raise InvalidState(f"A quote that is {state} cannot be discarded", code="quote.invalid_state")


def check_open(state: str, action: str) -> None:
    """Numbers and underwriting flags change on any quote that is not issued, refused or discarded."""
    if state in FINAL:
        raise InvalidState(f"A quote that is {state} cannot {action}", code="quote.invalid_state")


# --- quick quotes: draft -> validated -> priced; quoted and discarded are final ---------------------

QUICK_DONE_BY = {"draft": 0, "validated": 1, "priced": 2}
QUICK_FINAL = frozenset({"quoted", "discarded"})


def quick_steps_to(state: str, target: Step) -> list[Step]:
    if target not in (Step.VALIDATE, Step.PRICE):
        raise ValueError(f"a quick quote cannot {target.value}")
    if state in QUICK_FINAL:
        raise InvalidState(f"A quick quote that is {state} cannot {target.value}", code="quickQuote.invalid_state")
    wanted = STEPS.index(target) + 1
    done = QUICK_DONE_BY[state]
    if done > wanted:
        raise InvalidState(f"A quick quote that is {state} cannot {target.value}", code="quickQuote.invalid_state")
    return list(STEPS[min(done, wanted - 1):wanted])
