"""Policy transactions: what clients send to create and change them (the record itself is
policies.models.Transaction, the one definition the policies domain stores).

A transaction is built from change instructions (spec part 2, "Transaction records"), discriminated by
`action`: `add` elements, `modify` one element by its static locator, `delete` elements by static
locator, `params` (the effective time, a new policy end, preferences), `producers` and `migrate` (to
another configuration version). A stored instruction carries its own `locator`, so it can be changed
or removed while the transaction is a draft.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, RootModel, StringConstraints

from chalicelib.accounts.models import Preferences
from chalicelib.core.messages import Input
from chalicelib.priceable.models import ElementInput, Entity, Name, Ulid

ENTITY = "transaction"
"""The `code` prefix of transaction errors (`transaction.not_found`, `transaction.not_draft`, ...)."""
ERRORS = Entity(ENTITY, "transaction")
MAX_INSTRUCTIONS = 100
ProducerCode = Annotated[str, StringConstraints(min_length=1, max_length=128)]


class AddInstruction(Input):
    """New elements, under their `parentLocator` (an element's static locator or locator in the
    segment the transaction is based on; default: the root)."""

    action: Literal["add"]
    elements: Annotated[list[ElementInput], Field(min_length=1, max_length=MAX_INSTRUCTIONS)]


class ModifyInstruction(Input):
    """One element's data and coverage terms: the named keys removed, then the given ones set. The
    definition marks all four maps required; a left-out one is empty here."""

    action: Literal["modify"]
    staticLocator: Ulid
    setData: dict[str, Any] = {}
    removeData: dict[str, Any] = {}
    setCoverageTerms: dict[str, Any] = {}
    removeCoverageTerms: dict[str, Any] = {}


class DeleteInstruction(Input):
    action: Literal["delete"]
    staticElementLocators: Annotated[list[Ulid], Field(min_length=1, max_length=MAX_INSTRUCTIONS)]


class ParamsInstruction(Input):
    """When the transaction takes effect, and what else it sets on the policy. `billingModeChange`
    and `inheritSettings` are deprecated and kept for compatibility only."""

    action: Literal["params"]
    effectiveTime: datetime
    newPolicyEndTime: datetime | None = None
    expirationTime: datetime | None = None
    preferences: Preferences | None = None
    triggerBillingChange: bool | None = None
    billingModeChange: bool | None = None
    inheritSettings: bool | None = None


class ProducersInstruction(Input):
    action: Literal["producers"]
    setProducerCode: ProducerCode | None = None
    clearProducerCode: bool = False
    setProducerCodeOfRecord: ProducerCode | None = None
    revertProducerCodeOfRecord: bool = False


class MigrateInstruction(Input):
    """Moves the policy to another deployed configuration version (default: the current one)."""

    action: Literal["migrate"]
    configVersionLocator: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None


Instruction = Annotated[
    AddInstruction
    | ModifyInstruction
    | DeleteInstruction
    | ParamsInstruction
    | ProducersInstruction
    | MigrateInstruction,
    Field(discriminator="action"),
]


class Instructions(RootModel[Annotated[list[Instruction], Field(max_length=MAX_INSTRUCTIONS)]]):
    """The body of a create request: the transaction's change instructions."""


class OneInstruction(RootModel[Instruction]):
    """The body of the change instruction endpoints."""


class CancelInstruction(RootModel[ParamsInstruction]):
    """The body of `PATCH /policies/{locator}/cancel`: one params instruction."""


class ReversalRequest(Input):
    """PolicyTransactionReversalRequest: undo `reverseTransactions` (issued transactions of the policy,
    latest first or in any order), so that `toTransaction` becomes the policy's latest; `baseLocator`
    must be the policy's latest issued transaction."""

    baseLocator: Ulid
    toTransaction: Ulid
    reverseTransactions: Annotated[list[Ulid], Field(min_length=1, max_length=MAX_INSTRUCTIONS)]


class AffectedTransaction(BaseModel):
    locator: str
    action: Literal["reversed", "invalidated"]


def instruction_of(stored: dict[str, Any]) -> Instruction:
    """A stored instruction (its dict, with its `locator`) as the model it was made from."""
    return OneInstruction.model_validate({k: v for k, v in stored.items() if k != "locator"}).root


def stored(instruction: Instruction, locator: str) -> dict[str, Any]:
    """An instruction as the transaction keeps it: its fields (unset optional ones left out) and a locator."""
    return {"locator": locator, **instruction.model_dump(exclude_none=True)}


__all__ = [
    "ENTITY",
    "ERRORS",
    "AddInstruction",
    "AffectedTransaction",
    "CancelInstruction",
    "DeleteInstruction",
    "Instruction",
    "Instructions",
    "MigrateInstruction",
    "ModifyInstruction",
    "Name",
    "OneInstruction",
    "ParamsInstruction",
    "ProducersInstruction",
    "ReversalRequest",
    "instruction_of",
    "stored",
]
