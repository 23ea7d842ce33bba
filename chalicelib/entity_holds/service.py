"""Entity holds (models.py): created as drafts on a quote or a policy of the tenant, moved through their
states; activating one puts its scope on its quote or policy and releasing it takes it off, in the same
unit of work as the hold (conditional on both versions), so the quote and transaction lifecycles check
what they hold themselves."""

from __future__ import annotations

from typing import Any, Literal

from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError
from chalicelib.core.ids import new_locator
from chalicelib.entity_holds import repository
from chalicelib.entity_holds.models import (
    MOVES,
    WHOLE_POLICY,
    EntityHold,
    EntityHoldState,
    PolicyHoldScope,
    QuoteHoldScope,
)
from chalicelib.policies import service as policies
from chalicelib.quotes import service as quotes
from chalicelib.runtime import wiring

EVENT = "policy.hold"
ReferenceType = Literal["quote", "policy"]


def hold(ctx: CallContext, locator: str) -> EntityHold:
    found = repository.get(ctx.tenant, locator)
    if found is None:
        raise codes.not_found("entityHold", locator)
    return found


def holds_of(ctx: CallContext, reference_type: ReferenceType, locator: str) -> list[EntityHold]:
    """The holds of a quote or policy of the tenant (404 for another), oldest first."""
    _reference(ctx, reference_type, locator)
    return repository.of_reference(ctx.tenant, locator)


def _reference(ctx: CallContext, reference_type: ReferenceType, locator: str) -> Any:
    if reference_type == "quote":
        return quotes.get_quote(ctx, locator)
    return policies.get_policy(ctx, locator)


def _scopes(
    reference_type: ReferenceType, quote_scope: QuoteHoldScope | None, policy_scope: PolicyHoldScope | None
) -> tuple[QuoteHoldScope | None, PolicyHoldScope | None]:
    """The hold's scopes: a quote's takes a quoteHoldScope, a policy's no quoteHoldScope (400 otherwise);
    a policy's without a policyHoldScope holds the whole policy (WHOLE_POLICY)."""
    if reference_type == "quote" and (quote_scope is None or policy_scope is not None):
        raise codes.ENTITY_HOLD_INVALID_SCOPE(
            "A quote's hold takes a quoteHoldScope (and no policyHoldScope)",
            field_errors=[FieldError("quoteHoldScope", "required for a quote")],
        )
    if reference_type == "policy" and quote_scope is not None:
        raise codes.ENTITY_HOLD_INVALID_SCOPE(
            "A policy's hold takes no quoteHoldScope", field_errors=[FieldError("quoteHoldScope", "not for a policy")]
        )
    return quote_scope, (policy_scope or WHOLE_POLICY) if reference_type == "policy" else None


def create_hold(
    ctx: CallContext,
    reference_type: ReferenceType,
    reference_locator: str,
    *,
    description: str | None,
    quote_scope: QuoteHoldScope | None,
    policy_scope: PolicyHoldScope | None,
    hold_static_data: bool,
) -> EntityHold:
    """A draft hold; a quote's takes a quoteHoldScope (400 otherwise), a policy's holds its policyHoldScope
    or, without one, the whole policy."""
    quote_scope, policy_scope = _scopes(reference_type, quote_scope, policy_scope)
    reference = _reference(ctx, reference_type, reference_locator)
    record = EntityHold(
        locator=new_locator(),
        referenceLocator=reference.locator,
        referenceType=reference_type,
        state=EntityHoldState.DRAFT,
        holdStaticData=hold_static_data,
        description=description or "",
        quoteHoldScope=quote_scope,
        policyHoldScope=policy_scope,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    uow = wiring.unit_of_work(ctx)
    repository.add(uow, ctx.tenant, record)
    uow.record_event(f"{EVENT}.create", _event(record))
    uow.commit()
    return record


def update_hold(
    ctx: CallContext,
    locator: str,
    reference_type: ReferenceType,
    reference_locator: str,
    *,
    reference_update: bool,
    description: str,
    quote_scope: QuoteHoldScope | None,
    policy_scope: PolicyHoldScope | None,
    hold_static_data: bool,
) -> EntityHold:
    """A draft or validated hold rewritten (a validated one is a draft again: its validation no longer
    holds); with `referenceUpdate` it moves to another quote or policy of the tenant, without it the
    request names the hold's own reference (400 otherwise). An active hold does not change: release it."""
    current = hold(ctx, locator)
    if current.state not in (EntityHoldState.DRAFT, EntityHoldState.VALIDATED):
        raise codes.ENTITY_HOLD_INVALID_STATE(
            f"Hold {locator} is {current.state.value}: only a draft or a validated hold changes"
        )
    same = (reference_type, reference_locator) == (current.referenceType, current.referenceLocator)
    if not same and not reference_update:
        raise codes.ENTITY_HOLD_INVALID_REFERENCE(
            f"Hold {locator} holds {current.referenceType} {current.referenceLocator}; set referenceUpdate to move it",
            field_errors=[FieldError("referenceUpdate", "true to change the reference")],
        )
    quote_scope, policy_scope = _scopes(reference_type, quote_scope, policy_scope)
    reference = current.referenceLocator if same else _reference(ctx, reference_type, reference_locator).locator
    changed = current.model_copy(
        update={
            "referenceType": reference_type,
            "referenceLocator": reference,
            "description": description,
            "holdStaticData": hold_static_data,
            "quoteHoldScope": quote_scope,
            "policyHoldScope": policy_scope,
            "state": EntityHoldState.DRAFT,
            "validationResult": None,
            "updatedAt": ctx.now,
            "updatedBy": ctx.user_locator,
        }
    )
    uow = wiring.unit_of_work(ctx)
    repository.save(uow, ctx.tenant, changed, moved_from=None if same else current.referenceLocator)
    uow.record_event(f"{EVENT}.update", _event(changed))
    uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})


def move_hold(ctx: CallContext, locator: str, move: str) -> EntityHold:
    """`validate`, `activate`, `release` or `discard` the hold (models.MOVES); 409 from any other state,
    nothing changed. Activating puts its scope on the quote or policy, releasing takes it off."""
    current = hold(ctx, locator)
    allowed, target = MOVES[move]
    if current.state not in allowed:
        raise codes.ENTITY_HOLD_INVALID_STATE(f"Hold {locator} is {current.state.value}: {move} is not allowed")
    uow = wiring.unit_of_work(ctx)
    if target in (EntityHoldState.ACTIVE, EntityHoldState.RELEASED):
        setter = quotes.set_entity_hold if current.referenceType == "quote" else policies.set_entity_hold
        setter(ctx, uow, current.referenceLocator, current.scope(), active=target == EntityHoldState.ACTIVE)
    validation = (
        {"success": True} if target in (EntityHoldState.VALIDATED, EntityHoldState.ACTIVE) else current.validationResult
    )
    changed = current.model_copy(
        update={"state": target, "validationResult": validation, "updatedAt": ctx.now, "updatedBy": ctx.user_locator}
    )
    repository.save(uow, ctx.tenant, changed)
    uow.record_event(f"{EVENT}.{move}", _event(changed))
    uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})


def _event(record: EntityHold) -> dict[str, Any]:
    return {
        "holdLocator": record.locator,
        "referenceLocator": record.referenceLocator,
        "referenceType": record.referenceType,
    }
