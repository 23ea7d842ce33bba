"""Entity holds on quotes and policies (OpenAPI definition: EntityHold; socotra-semantics.md §4.7):
`draft -> validated -> active -> released`, a draft or validated one discarded. While active, a quote's
hold keeps the quote from advancing past its `quoteHoldScope.quoteState`, a policy's blocks the policy's
transactions of its `policyHoldScope` categories and types: the hold puts its scope on the quote or policy
(policies.models.HeldScope), which checks it itself."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, get_args

from pydantic import BaseModel

from chalicelib.policies.models import HeldScope


class EntityHoldState(StrEnum):
    DRAFT = "draft"
    VALIDATED = "validated"
    ACTIVE = "active"
    DISCARDED = "discarded"
    RELEASED = "released"


MOVES: dict[str, tuple[tuple[EntityHoldState, ...], EntityHoldState]] = {
    "validate": ((EntityHoldState.DRAFT,), EntityHoldState.VALIDATED),
    "activate": ((EntityHoldState.DRAFT, EntityHoldState.VALIDATED), EntityHoldState.ACTIVE),
    "release": ((EntityHoldState.ACTIVE,), EntityHoldState.RELEASED),
    "discard": ((EntityHoldState.DRAFT, EntityHoldState.VALIDATED), EntityHoldState.DISCARDED),
}
"""Each move: the states it starts from and the state it leaves (activating a draft validates it)."""

QuoteHeldState = Literal["validated", "underwritten", "accepted", "priced"]
TransactionCategoryName = Literal[
    "issuance", "change", "renewal", "cancellation", "reinstatement", "reversal", "aggregate"
]


class QuoteHoldScope(BaseModel):
    quoteState: QuoteHeldState


class PolicyHoldScope(BaseModel):
    transactionCategory: list[TransactionCategoryName] = []
    transactionType: list[str] = []
    allowStaticData: bool = False


WHOLE_POLICY = PolicyHoldScope(transactionCategory=list(get_args(TransactionCategoryName)))
"""The scope of a policy's hold created without one (the definition makes it optional): every transaction
of the policy, and its static data."""


class EntityHold(BaseModel):
    locator: str
    referenceLocator: str
    referenceType: Literal["quote", "policy"]
    state: EntityHoldState
    holdStaticData: bool = False
    description: str = ""
    quoteHoldScope: QuoteHoldScope | None = None
    policyHoldScope: PolicyHoldScope | None = None
    validationResult: dict[str, Any] | None = None
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1

    def scope(self) -> HeldScope:
        """What the hold blocks, as its quote or policy keeps it while the hold is active. Static data is
        held when the hold says so (`holdStaticData`), and by a policy hold that blocks `change`
        transactions unless its scope allows static data (`allowStaticData`: a static-data change is a
        change of the policy outside any transaction)."""
        policy = self.policyHoldScope or PolicyHoldScope()
        blocks_changes = "change" in policy.transactionCategory and not policy.allowStaticData
        return HeldScope(
            holdLocator=self.locator,
            quoteState=self.quoteHoldScope.quoteState if self.quoteHoldScope else None,
            transactionCategories=list(policy.transactionCategory),
            transactionTypes=list(policy.transactionType),
            staticData=self.holdStaticData or (self.policyHoldScope is not None and blocks_changes),
        )
