"""Billing holds (OpenAPI definition: create, fetch, update, validate, reset, activate, release, discard;
spec part 3: the list per account)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.billing.holds import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.billing.holds", "schemas", "service")

bp = Blueprint(__name__)

HOLD = [codes.NOT_FOUND_DELINQUENCY_AND_HOLDS["hold"]]
MOVING = [*HOLD, codes.HOLD_INVALID_STATE]


@bp.route("/billing/{tenantLocator}/holds/{locator}", methods=["GET"])
@endpoint("holds.read", errors=HOLD)
def fetch_hold(tenantLocator: str, locator: str) -> schemas.HoldResponse:
    return schemas.HoldResponse.of_record(service.hold(request_context(), locator))


@bp.route("/billing/{tenantLocator}/holds", methods=["POST"])
@endpoint("holds.write", idempotent=True, creates="hold", replay=fetch_hold, errors=[codes.NOT_FOUND["account"]])
def create_hold(tenantLocator: str, body: schemas.HoldCreateRequest) -> schemas.HoldResponse:
    return schemas.HoldResponse.of_record(service.create_hold(request_context(), body.accountLocator, body.targetType))


@bp.route("/billing/{tenantLocator}/holds/{locator}", methods=["PATCH"])
@endpoint("holds.write", errors=[*MOVING, codes.NOT_FOUND["account"]])
def update_hold(tenantLocator: str, locator: str, body: schemas.HoldUpdateRequest) -> schemas.HoldResponse:
    return schemas.HoldResponse.of_record(
        service.update_hold(request_context(), locator, body.accountLocator, body.targetType)
    )


@bp.route("/billing/{tenantLocator}/holds/{locator}/validate", methods=["PATCH"])
@endpoint("holds.write", errors=MOVING)
def validate_hold(tenantLocator: str, locator: str) -> schemas.HoldResponse:
    return schemas.HoldResponse.of_record(service.move_hold(request_context(), locator, "validate"))


@bp.route("/billing/{tenantLocator}/holds/{locator}/reset", methods=["PATCH"])
@endpoint("holds.write", errors=MOVING)
def reset_hold(tenantLocator: str, locator: str) -> schemas.HoldResponse:
    return schemas.HoldResponse.of_record(service.move_hold(request_context(), locator, "reset"))


@bp.route("/billing/{tenantLocator}/holds/{locator}/activate", methods=["PATCH"])
@endpoint("holds.write", errors=MOVING)
def activate_hold(tenantLocator: str, locator: str) -> schemas.HoldResponse:
    return schemas.HoldResponse.of_record(service.move_hold(request_context(), locator, "activate"))


@bp.route("/billing/{tenantLocator}/holds/{locator}/release", methods=["PATCH"])
@endpoint("holds.write", errors=MOVING)
def release_hold(tenantLocator: str, locator: str) -> schemas.HoldResponse:
    return schemas.HoldResponse.of_record(service.move_hold(request_context(), locator, "release"))


@bp.route("/billing/{tenantLocator}/holds/{locator}/discard", methods=["PATCH"])
@endpoint("holds.write", errors=MOVING)
def discard_hold(tenantLocator: str, locator: str) -> schemas.HoldResponse:
    return schemas.HoldResponse.of_record(service.move_hold(request_context(), locator, "discard"))


@bp.route("/billing/{tenantLocator}/holds/accounts/{accountLocator}/list", methods=["GET"])
@endpoint("holds.read", "holds.list")
def list_account_holds(
    tenantLocator: str, accountLocator: str, query: schemas.HoldListQuery
) -> schemas.HoldListResponse:
    return schemas.HoldListResponse.of(
        service.holds_of_account(request_context(), accountLocator, query.page(), query.state),
        schemas.HoldResponse.of_record,
    )
