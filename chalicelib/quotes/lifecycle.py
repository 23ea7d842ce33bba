"""The quote lifecycle, declared for the engine's table-driven state machine (priceable/lifecycle.py).

The nominal path is draft -> validated -> priced -> underwritten -> accepted -> issued, one step per
operation: validate, price, underwrite, accept, issue. `accept` and `issue` on a quote that is not
accepted yet always underwrite first (also an underwritten one), as the platform runs the underwriting
plugin and evaluates the flags on accept and issue: flags changed after underwriting count.

Underwriting may stop the path in `underwrittenBlocked`, `declined` or `rejected`: from there only
underwriting again (after flags were cleared or added) and the steps after it may run, or `reset`.

`reset` returns to draft (not from accepted, issued or the final states); `refuse` and `discard` are
final, as is `issued`; an accepted quote may be issued or refused, not discarded or reset. An expired
quote (`expirationTime` at or before now) advances no further. Only a draft is editable.
`earlyUnderwritten` is in the state enum but no path reaches it (pricing always precedes
underwriting here), so it is treated like `validated`.
"""

from __future__ import annotations

from chalicelib.priceable.lifecycle import Lifecycle, Progress
from chalicelib.priceable.models import Entity
from chalicelib.priceable.runner import (
    ACCEPT,
    ISSUE,
    PRICE,
    STATES_TO_ISSUE,
    UNDERWRITE,
    UNDERWRITING_STOPS,
    VALIDATE,
    progress_to_issue,
)
from chalicelib.quotes.models import ENTITY, QuoteState

ERRORS = Entity(ENTITY, "quote")
"""Quote errors: `quote.invalid_state`, `quote.invalid_element`, ... ("A quote that is issued ...")."""
FINAL = frozenset({"issued", "refused", "discarded"})

LIFECYCLE = Lifecycle(
    entity=ERRORS,
    state_field="quoteState",
    states=QuoteState,
    steps=(VALIDATE, PRICE, UNDERWRITE, ACCEPT, ISSUE),
    progress={"draft": Progress(0), **progress_to_issue(1)},
    final=FINAL,
    state_after=STATES_TO_ISSUE,
    underwriting_stops=UNDERWRITING_STOPS,
    runs_first={ACCEPT: UNDERWRITE},
    resettable=frozenset(QuoteState) - FINAL - {"accepted"},
    also_closed={"be reset": frozenset({"accepted"}), "be discarded": frozenset({"accepted"})},
)
