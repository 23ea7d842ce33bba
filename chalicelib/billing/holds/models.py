"""Billing holds (socotra-semantics.md §4.7): a hold on an account targets its invoicing or its
delinquency handling. `draft -> validated -> active -> released`; a draft or validated hold may be
discarded, a validated one reset to draft. While active, an invoicing hold stops the account's invoice
generation and a delinquency hold pauses its delinquencies (no event triggers, no lapse)."""
from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel


class HoldState(StrEnum):
    DRAFT = "draft"
    VALIDATED = "validated"
    ACTIVE = "active"
    DISCARDED = "discarded"
    RELEASED = "released"


class HoldTarget(StrEnum):
    INVOICING = "invoicing"
    DELINQUENCY = "delinquency"


MOVES: dict[str, tuple[tuple[HoldState, ...], HoldState]] = {
    "validate": ((HoldState.DRAFT,), HoldState.VALIDATED),
    "reset": ((HoldState.VALIDATED,), HoldState.DRAFT),
    "activate": ((HoldState.DRAFT, HoldState.VALIDATED), HoldState.ACTIVE),
    "release": ((HoldState.ACTIVE,), HoldState.RELEASED),
    "discard": ((HoldState.DRAFT, HoldState.VALIDATED), HoldState.DISCARDED),
}
"""Each move of a hold: the states it starts from and the state it leaves (activating a draft validates it)."""


class Hold(BaseModel):
    locator: str
    accountLocator: str
    targetType: HoldTarget
    holdState: HoldState
    validationResult: dict[str, Any] | None = None
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str
