"""The quick quote lifecycle, declared for the engine (priceable/lifecycle.py): draft -> validated ->
priced; `quoted` and `discarded` are final. Quick quotes answer `quickQuote.invalid_state` for their
state and the quotes' codes (`quote.expired`, `quote.invalid_element`, ...) for everything else.
"""

from __future__ import annotations

from chalicelib.priceable.lifecycle import Lifecycle, Progress
from chalicelib.priceable.models import Entity
from chalicelib.priceable.runner import PRICE, VALIDATE
from chalicelib.quickquotes.models import ENTITY, QuickQuoteState

ERRORS = Entity("quote", "quote")
"""What quick quotes share with quotes: element, reference, product, size and expiry errors."""

LIFECYCLE = Lifecycle(
    entity=Entity(ENTITY, "quick quote"),
    state_field="quickQuoteState",
    states=QuickQuoteState,
    steps=(VALIDATE, PRICE),
    progress={"draft": Progress(0), "validated": Progress(1), "priced": Progress(2)},
    final=frozenset({"quoted", "discarded"}),
    state_after={VALIDATE: "validated", PRICE: "priced"},
    expiry=ERRORS,
)
