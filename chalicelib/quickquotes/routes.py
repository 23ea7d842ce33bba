"""Quick quotes (OpenAPI definition, see DECISIONS.md "Scope"). Every path below a quick quote names it
`{locator}`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.quickquotes import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.quickquotes", "schemas", "service")

bp = Blueprint(__name__)


@bp.route("/policy/{tenantLocator}/quickquotes/{locator}", methods=["GET"])
@endpoint("quick-quotes.read", errors=[codes.NOT_FOUND["quickQuote"]])
def fetch_quick_quote(tenantLocator: str, locator: str) -> schemas.QuickQuoteResponse:
    return schemas.QuickQuoteResponse.of(service.get_quick_quote(request_context(), locator))


@bp.route("/policy/{tenantLocator}/quickquotes", methods=["POST"])
@endpoint(
    "quick-quotes.write",
    idempotent=True,
    creates="quickQuote",
    replay=fetch_quick_quote,
    errors=[
        codes.INVALID_ELEMENT["quote"],
        codes.INVALID_REFERENCE["quote"],
        codes.QUOTE_UNKNOWN_ACCOUNT,
        codes.UNKNOWN_PRODUCT["quote"],
    ],
)
def create_quick_quote(tenantLocator: str, body: schemas.QuickQuoteCreateRequest) -> schemas.QuickQuoteResponse:
    return schemas.QuickQuoteResponse.of(service.create_quick_quote(request_context(), body))


@bp.route("/policy/{tenantLocator}/quickquotes/{locator}", methods=["PATCH"])
@endpoint(
    "quick-quotes.write",
    errors=[
        codes.INVALID_ELEMENT["quote"],
        codes.INVALID_REFERENCE["quote"],
        codes.INVALID_STATE["quickQuote"],
        codes.NOT_FOUND["quickQuote"],
    ],
)
def update_quick_quote(
    tenantLocator: str, locator: str, body: schemas.QuickQuoteUpdateRequest
) -> schemas.QuickQuoteResponse:
    return schemas.QuickQuoteResponse.of(service.update_quick_quote(request_context(), locator, body))


@bp.route("/policy/{tenantLocator}/quickquotes/{locator}/validate", methods=["PATCH"])
@endpoint(
    "quick-quotes.write",
    errors=[
        codes.INVALID_STATE["quickQuote"],
        codes.INVALID_STATE["quickQuote"],
        codes.NOT_FOUND["quickQuote"],
        codes.NOT_FOUND["quickQuote"],
    ],
)
def validate_quick_quote(tenantLocator: str, locator: str) -> schemas.QuickQuoteResponse:
    return schemas.QuickQuoteResponse.of(service.validate_quick_quote(request_context(), locator))


@bp.route("/policy/{tenantLocator}/quickquotes/{locator}/price", methods=["PATCH"])
@endpoint(
    "quick-quotes.write",
    errors=[
        codes.INVALID_STATE["quickQuote"],
        codes.INVALID_STATE["quickQuote"],
        codes.NOT_FOUND["quickQuote"],
        codes.NOT_FOUND["quickQuote"],
    ],
)
def price_quick_quote(tenantLocator: str, locator: str) -> schemas.QuickQuotePriceResponse:
    ctx = request_context()
    return schemas.QuickQuotePriceResponse.of(ctx.tenant, service.price_quick_quote(ctx, locator))


@bp.route("/policy/{tenantLocator}/quickquotes/{locator}/price", methods=["GET"])
@endpoint("quick-quotes.read", errors=[codes.NOT_FOUND["quickQuote"], codes.NOT_PRICED["quickQuote"]])
def fetch_quick_quote_price(tenantLocator: str, locator: str) -> schemas.QuickQuotePriceResponse:
    ctx = request_context()
    return schemas.QuickQuotePriceResponse.of(ctx.tenant, service.priced_quick_quote(ctx, locator))


@bp.route("/policy/{tenantLocator}/quickquotes/{locator}/discard", methods=["PATCH"])
@endpoint(
    "quick-quotes.write",
    errors=[
        codes.INVALID_STATE["quickQuote"],
        codes.INVALID_STATE["quickQuote"],
        codes.NOT_FOUND["quickQuote"],
        codes.NOT_FOUND["quickQuote"],
    ],
)
def discard_quick_quote(tenantLocator: str, locator: str) -> schemas.QuickQuoteResponse:
    return schemas.QuickQuoteResponse.of(service.discard_quick_quote(request_context(), locator))


@bp.route("/policy/{tenantLocator}/quickquotes/{locator}/constraints/evaluate", methods=["POST"])
@endpoint("quick-quotes.read", errors=[codes.INVALID_ELEMENT["quote"], codes.NOT_FOUND["quickQuote"]])
def evaluate_quick_quote_constraints(
    tenantLocator: str, locator: str, body: schemas.ConstraintValuesRequest
) -> dict[str, dict[str, list[str]]]:
    return service.evaluate_constraints(request_context(), locator, body.root)


@bp.route("/policy/{tenantLocator}/quickquotes/{locator}/constraints/dependency", methods=["GET"])
@endpoint("quick-quotes.read", errors=[codes.NOT_FOUND["quickQuote"]])
def fetch_quick_quote_constraint_dependencies(tenantLocator: str, locator: str) -> dict[str, dict[str, Any]]:
    return service.constraint_dependencies(request_context(), locator)
