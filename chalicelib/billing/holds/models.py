"""Billing holds (socotra-semantics.md §4.7): a hold on an account targets its invoicing or its
delinquency handling. `draft -> validated -> active -> released`; a draft or validated hold may be
discarded, a validated one reset to draft. While active, an invoicing hold stops the account's invoice
generation and a delinquency hold pauses its delinquencies (no event triggers, no lapse). The states and
targets are billing/models.py's: delinquency and invoicing ask whether a hold stands (billing/repository.py
`is_held`) without importing holds."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from chalicelib.billing.models import HoldState, HoldTarget

__all__ = ["MOVES", "Hold", "HoldState", "HoldTarget"]


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
