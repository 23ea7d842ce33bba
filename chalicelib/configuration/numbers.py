"""Assigning numbers from the tenant's numbering plans; numbers unique per tenant and entity kind.

For every domain that numbers its records (accounts, quotes, policies, invoices, ...). Each
(plan, entity kind) has its own counter, so a plan shared by quotes and policies gives each its own
sequence (quotes use the plan's quote format). `reserve_number` takes the next counter value with one
conditional UpdateItem that commits at once, *outside* the caller's unit of work: if that unit of work
then fails, the value stays unused and the numbers have a gap, which plans allow; what may never
happen, two records with one number, the guard item prevents. The guard (one item per number in use,
naming its owner) is added to the caller's unit of work, so it is written with the record or not at
all, and a number already in use (a manual `number/set`, or a generated number someone set by hand
before) fails the whole transaction with 409 `<kind>.number_taken`.

A caller numbering many records ahead (a migration's run job, for the accounts it queues) reserves a block of
counter values with one UpdateItem (`reserve_block`) and hands each record's values to the job that creates it,
which runs `reserve_number` inside `given(...)`: the values are taken from there, in order, before the counter
(each value is still claimed by its guard, so a value used twice fails as above). Values of a block nobody uses
(an account that failed, a job delivered again) are a gap, which plans allow; numbers stay unique, and count up
within a block, not across the blocks of callers running at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from chalicelib.configuration import numbering, repository
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError, FieldError
from chalicelib.runtime.wiring import UnitOfWork

MAX_NUMBER_LENGTH = 128

_given: ContextVar[dict[tuple[str, str], list[int]] | None] = ContextVar("numbers_given", default=None)
"""(plan, entity kind) -> counter values reserved ahead for what runs inside `given`, in the order taken."""


@contextmanager
def given(blocks: Iterable[tuple[str, str, int, int]]) -> Iterator[None]:
    """Within it, `reserve_number` takes the counter values of `blocks` ((plan, entity kind, first, count): values
    `reserve_block` reserved ahead), in order, before asking the plan's counter for more."""
    values: dict[tuple[str, str], list[int]] = {}
    for plan_name, entity_kind, first, count in blocks:
        values.setdefault((plan_name, entity_kind), []).extend(range(first, first + count))
    token = _given.set(values)
    try:
        yield
    finally:
        _given.reset(token)


def reserve_block(ctx: CallContext, model: dict[str, Any], plan_name: str, entity_kind: str, count: int) -> int | None:
    """Reserves `count` consecutive counter values of `plan_name` for `entity_kind` with one UpdateItem, answering
    the first (for `given`); None, reserving nothing, when the plan cannot number it or fewer than `count` values
    are left (the records are then numbered one at a time by `reserve_number`, which says why)."""
    plan = (model.get("numberingPlans") or {}).get(plan_name)
    if not isinstance(plan, dict) or count < 1:
        return None
    try:
        sequence = numbering.sequence(plan, entity_kind)
    except numbering.NumberingError:
        return None
    if sequence.remaining < count:
        return None
    try:
        return repository.next_counter(
            ctx.tenant,
            plan_name,
            entity_kind,
            sequence.remaining,
            lambda: _TooFewLeft("too few numbers left for the block", codes.NUMBERING_EXHAUSTED),
            count=count,
        )
    except _TooFewLeft:
        return None


class _TooFewLeft(DomainError):
    """A block asked for more values than its plan has left (`reserve_block` answers None)."""


@dataclass(frozen=True)
class NextOfPlan:
    """The next number of a plan, as `reserve_number` takes it."""

    model: dict[str, Any]
    plan_name: str
    product: str | None = None
    region: str | None = None


def renumber(
    ctx: CallContext, uow: UnitOfWork, entity_kind: str, owner: str, current: str | None, new: str | NextOfPlan
) -> str:
    """Gives record `owner` a new number in `uow`: `new` when chosen (409 `<kind>.number_taken` when
    another record has it), else the plan's next; its `current` number is released. Answers the number."""
    if isinstance(new, NextOfPlan):
        number = reserve_number(
            ctx, uow, new.model, new.plan_name, entity_kind, owner, product=new.product, region=new.region
        )
    else:
        number = new
        claim_number(ctx, uow, entity_kind, number, owner)
    if current is not None:
        release_number(ctx, uow, entity_kind, current)
    return number


def check_chosen(number: str, *, field: str, what: str) -> None:
    """400 for a number a caller chose that no plan could have made: empty, too long, unprintable, or
    with surrounding spaces."""
    if not 0 < len(number) <= MAX_NUMBER_LENGTH or not number.isprintable() or number != number.strip():
        raise codes.REQUEST_INVALID(
            f"Invalid {what}",
            field_errors=[
                FieldError(field, f"must be 1 to {MAX_NUMBER_LENGTH} printable characters without surrounding spaces")
            ],
        )


def reserve_number(
    ctx: CallContext,
    uow: UnitOfWork,
    model: dict[str, Any],
    plan_name: str,
    entity_kind: str,
    owner: str,
    *,
    product: str | None = None,
    region: str | None = None,
) -> str:
    """The next number of `plan_name` for an `entity_kind` record (`owner` is its locator), claimed in
    `uow`. `model` is the deployed model (the caller has it already; resolved or not): it gives the
    plan and the `numberingString` of `product` and `region` for `{product}` / `{region}`.
    409 `numbering.invalid_plan` when the plan is missing or cannot number this record,
    409 `numbering.exhausted` when its positions are used up."""
    plan = (model.get("numberingPlans") or {}).get(plan_name)
    if not isinstance(plan, dict):
        raise codes.NUMBERING_INVALID_PLAN(f"The numbering plan {plan_name} is not configured")
    values = {
        "product": _numbering_string(model, "products", product),
        "region": _numbering_string(model, "regions", region),
    }
    try:
        sequence = numbering.sequence(plan, entity_kind)
        sequence.format.render(numbering.core_at(sequence.format.positions, 0), values)
    except numbering.NumberingError as error:
        raise codes.NUMBERING_INVALID_PLAN(
            f"The numbering plan {plan_name} cannot number this {entity_kind}: {error}"
        ) from None
    ahead = (_given.get() or {}).get((plan_name, entity_kind))
    counter = ahead.pop(0) if ahead else None
    if counter is None or counter >= sequence.remaining:
        counter = repository.next_counter(
            ctx.tenant,
            plan_name,
            entity_kind,
            sequence.remaining,
            lambda: codes.NUMBERING_EXHAUSTED(f"The numbering plan {plan_name} has no {entity_kind} numbers left"),
        )
    number = sequence.number(counter, values)
    claim_number(ctx, uow, entity_kind, number, owner)
    return number


def claim_number(ctx: CallContext, uow: UnitOfWork, entity_kind: str, number: str, owner: str) -> None:
    """Adds to `uow` the guard that makes `number` this `owner`'s (409 when another record has it)."""
    repository.add_number_guard(
        uow,
        ctx.tenant,
        entity_kind,
        number,
        owner,
        lambda: codes.NUMBER_TAKEN[entity_kind](f"The {entity_kind} number {number} is already used"),
    )


def release_number(ctx: CallContext, uow: UnitOfWork, entity_kind: str, number: str) -> None:
    """Adds to `uow` the removal of `number`'s guard (the record took another number)."""
    repository.remove_number_guard(uow, ctx.tenant, entity_kind, number)


def number_owner(ctx: CallContext, entity_kind: str, number: str) -> str | None:
    """The locator of the `entity_kind` record holding `number`, or None."""
    if not 0 < len(number) <= MAX_NUMBER_LENGTH:
        return None
    return repository.number_owner(ctx.tenant, entity_kind, number)


def _numbering_string(model: dict[str, Any], collection: str, name: str | None) -> str | None:
    entity = (model.get(collection) or {}).get(name) if name else None
    value = entity.get("numberingString") if isinstance(entity, dict) else None
    return value if isinstance(value, str) else None
