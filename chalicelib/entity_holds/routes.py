"""Entity holds on quotes and policies (OpenAPI definition: create, fetch, update, validate, activate,
release, discard; the holds of a policy and of a quote). Paths below `/policy/{t}/holds/` name the hold
`{holdLocator}` (a billing hold is `{locator}`: the route sweeps tell the two apart by name)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.entity_holds import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.entity_holds", "schemas", "service")

bp = Blueprint(__name__)

MOVING = [codes.NOT_FOUND_ENTITY_HOLD["entityHold"], codes.ENTITY_HOLD_INVALID_STATE, codes.CONCURRENT_MODIFICATION]


@bp.route("/policy/{tenantLocator}/holds", methods=["PUT"])
@endpoint(
    "holds.write",
    idempotent=True,
    errors=[codes.ENTITY_HOLD_INVALID_SCOPE, codes.NOT_FOUND["quote"], codes.NOT_FOUND["policy"]],
)
def create_entity_hold(tenantLocator: str, body: schemas.CreateEntityHoldRequest) -> schemas.EntityHoldResponse:
    return schemas.EntityHoldResponse.of(
        service.create_hold(
            request_context(),
            body.referenceType,
            body.referenceLocator,
            description=body.description,
            quote_scope=body.quoteHoldScope,
            policy_scope=body.policyHoldScope,
            hold_static_data=body.holdStaticData,
        )
    )


@bp.route("/policy/{tenantLocator}/holds/{holdLocator}", methods=["GET"])
@endpoint("holds.read", errors=[codes.NOT_FOUND_ENTITY_HOLD["entityHold"]])
def fetch_entity_hold(tenantLocator: str, holdLocator: str) -> schemas.EntityHoldResponse:
    return schemas.EntityHoldResponse.of(service.hold(request_context(), holdLocator))


@bp.route("/policy/{tenantLocator}/holds/{holdLocator}", methods=["PATCH"])
@endpoint(
    "holds.write",
    errors=[
        *MOVING,
        codes.ENTITY_HOLD_INVALID_SCOPE,
        codes.ENTITY_HOLD_INVALID_REFERENCE,
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["policy"],
    ],
)
def update_entity_hold(
    tenantLocator: str, holdLocator: str, body: schemas.UpdateEntityHoldRequest
) -> schemas.EntityHoldResponse:
    return schemas.EntityHoldResponse.of(
        service.update_hold(
            request_context(),
            holdLocator,
            body.referenceType,
            body.referenceLocator,
            reference_update=body.referenceUpdate,
            description=body.description,
            quote_scope=body.quoteHoldScope,
            policy_scope=body.policyHoldScope,
            hold_static_data=body.holdStaticData,
        )
    )


@bp.route("/policy/{tenantLocator}/holds/{holdLocator}/validate", methods=["PATCH"])
@endpoint("holds.write", errors=MOVING)
def validate_entity_hold(tenantLocator: str, holdLocator: str) -> schemas.EntityHoldResponse:
    return schemas.EntityHoldResponse.of(service.move_hold(request_context(), holdLocator, "validate"))


@bp.route("/policy/{tenantLocator}/holds/{holdLocator}/activate", methods=["PATCH"])
@endpoint("holds.write", errors=MOVING)
def activate_entity_hold(tenantLocator: str, holdLocator: str) -> schemas.EntityHoldResponse:
    return schemas.EntityHoldResponse.of(service.move_hold(request_context(), holdLocator, "activate"))


@bp.route("/policy/{tenantLocator}/holds/{holdLocator}/release", methods=["PATCH"])
@endpoint("holds.write", errors=MOVING)
def release_entity_hold(tenantLocator: str, holdLocator: str) -> schemas.EntityHoldResponse:
    return schemas.EntityHoldResponse.of(service.move_hold(request_context(), holdLocator, "release"))


@bp.route("/policy/{tenantLocator}/holds/{holdLocator}/discard", methods=["PATCH"])
@endpoint("holds.write", errors=MOVING)
def discard_entity_hold(tenantLocator: str, holdLocator: str) -> schemas.EntityHoldResponse:
    return schemas.EntityHoldResponse.of(service.move_hold(request_context(), holdLocator, "discard"))


@bp.route("/policy/{tenantLocator}/policies/{locator}/holds", methods=["GET"])
@endpoint("policies.read", errors=[codes.NOT_FOUND["policy"]])
def list_policy_holds(tenantLocator: str, locator: str) -> list[schemas.EntityHoldResponse]:
    return [schemas.EntityHoldResponse.of(h) for h in service.holds_of(request_context(), "policy", locator)]


@bp.route("/policy/{tenantLocator}/quotes/{locator}/holds", methods=["GET"])
@endpoint("quotes.read", errors=[codes.NOT_FOUND["quote"]])
def list_quote_holds(tenantLocator: str, locator: str) -> list[schemas.EntityHoldResponse]:
    return [schemas.EntityHoldResponse.of(h) for h in service.holds_of(request_context(), "quote", locator)]
