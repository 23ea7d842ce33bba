"""The policy transaction lifecycle, declared for the engine's table-driven state machine
(priceable/lifecycle.py). Pure.

The nominal path is draft -> initialized -> validated -> priced -> underwritten -> accepted -> issued,
one step per operation: initialize (the change instructions applied to the segment the transaction is
based on: the new segment's element tree), validate, price, underwrite, accept, issue; asking for a
later step runs the earlier ones the transaction lacks. `accept` and `issue` on a transaction that is
not accepted yet always underwrite first, as for quotes: flags changed after underwriting count.

Underwriting may stop the path in `underwrittenBlocked`, `declined` or `rejected`: from there only
underwriting again and the steps after it may run, or `reset`. `precommit` (the precommit plugin) is
not a step: it runs on a draft (initializing it) or an initialized transaction and leaves it
initialized.

Final: `issued`, `refused`, `discarded`, and the states issuing other transactions puts a transaction
in: `invalidated` (a parallel branch was issued) and `reversed` (undone by a reversal or an
out-of-sequence issue). An accepted transaction may be issued or refused, not discarded or reset. An
expired transaction (`expirationTime` at or before now) advances no further. Only a draft is
editable. `earlyUnderwritten` is in the state enum but no path reaches it (pricing always precedes
underwriting), so it is treated like `validated`.
"""

from __future__ import annotations

from chalicelib.policies.models import TransactionState
from chalicelib.priceable.lifecycle import Lifecycle, Progress
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
from chalicelib.transactions.models import ERRORS

INITIALIZE = "initialize"
FINAL = frozenset({"issued", "refused", "discarded", "invalidated", "reversed"})
PRECOMMITTABLE = frozenset({"draft", "initialized"})

LIFECYCLE = Lifecycle(
    entity=ERRORS,
    state_field="transactionState",
    states=TransactionState,
    steps=(INITIALIZE, VALIDATE, PRICE, UNDERWRITE, ACCEPT, ISSUE),
    progress={"draft": Progress(0), "initialized": Progress(1), **progress_to_issue(2)},
    final=FINAL,
    state_after={INITIALIZE: "initialized", **STATES_TO_ISSUE},
    underwriting_stops=UNDERWRITING_STOPS,
    runs_first={ACCEPT: UNDERWRITE},
    resettable=frozenset(TransactionState) - FINAL - {"accepted"},
    also_closed={
        "be reset": frozenset({"accepted"}),
        "be discarded": frozenset({"accepted"}),
        "change its underwriting flags": frozenset({"accepted"}),
        "be precommitted": frozenset(TransactionState) - PRECOMMITTABLE,
    },
)
