"""Write-offs (spec part 3 "Write-offs"): create, fetch, list, reverse (fully, or partly: our extension),
and the invoice's own write-off of all that remains on it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.billing.writeoffs import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.billing.writeoffs", "schemas", "service")

bp = Blueprint(__name__)

WRITE_OFF = [codes.NOT_FOUND["writeOff"]]
DISTRIBUTION = [codes.WRITEOFF_INVALID_TARGET, codes.WRITEOFF_EXCEEDS_REMAINING]


@bp.route("/billing/{tenantLocator}/writeOffs/{locator}", methods=["GET"])
@endpoint("write-offs.read", errors=WRITE_OFF)
def fetch_write_off(tenantLocator: str, locator: str) -> schemas.WriteOffResponse:
    return schemas.WriteOffResponse.of(service.write_off(request_context(), locator))


@bp.route("/billing/{tenantLocator}/writeOffs", methods=["POST"])
@endpoint(
    "write-offs.write",
    idempotent=True,
    creates="writeOff",
    replay=fetch_write_off,
    errors=[codes.NOT_FOUND["account"], *DISTRIBUTION],
)
def create_write_off(tenantLocator: str, body: schemas.WriteOffRequest) -> schemas.WriteOffResponse:
    return schemas.WriteOffResponse.of(
        service.create_write_off(request_context(), body.accountLocator, [target.target() for target in body.targets])
    )


@bp.route("/billing/{tenantLocator}/writeOffs/list", methods=["GET"])
@endpoint("write-offs.read", "write-offs.list", errors=[codes.NOT_FOUND["account"]])
def list_write_offs(tenantLocator: str, query: schemas.WriteOffListQuery) -> schemas.WriteOffListResponse:
    return schemas.WriteOffListResponse.of(
        service.write_offs_of(request_context(), query.accountLocator, query.page()), schemas.WriteOffResponse.of
    )


@bp.route("/billing/{tenantLocator}/writeOffs/{locator}/reverse", methods=["PATCH"])
@endpoint(
    "write-offs.write",
    idempotent=True,
    replay=fetch_write_off,
    errors=[*WRITE_OFF, codes.WRITEOFF_INVALID_STATE, codes.WRITEOFF_INVALID_REVERSAL],
)
def reverse_write_off(
    tenantLocator: str, locator: str, body: schemas.WriteOffReverseRequest | None
) -> schemas.WriteOffResponse:
    return schemas.WriteOffResponse.of(
        service.reverse_write_off(
            request_context(), locator, body.amount if body else None, body.reversalReason if body else None
        )
    )


@bp.route("/billing/{tenantLocator}/invoices/{locator}/writeOff", methods=["PATCH"])
@endpoint(
    "invoices.write",
    idempotent=True,
    errors=[codes.NOT_FOUND["invoice"], codes.INVOICE_SETTLED, codes.INVOICE_DISCARDED, *DISTRIBUTION],
)
def write_off_invoice(tenantLocator: str, locator: str) -> schemas.WriteOffResponse:
    return schemas.WriteOffResponse.of(service.write_off_invoice(request_context(), locator))
