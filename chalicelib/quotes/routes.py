"""Quotes (OpenAPI definition, see DECISIONS.md "Scope"), the account's quotes, and a quote from a policy.

Every path below a quote names it `{locator}` (API Gateway refuses sibling path variables of
different names). Any one of an endpoint's permissions suffices: `quotes.write` or the fine-grained
action the definition pairs it with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.core.errors import FieldError
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.quotes import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.quotes", "schemas", "service")

bp = Blueprint(__name__)


# --- quotes --------------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/quotes/{locator}", methods=["GET"])
@endpoint("quotes.read", errors=[codes.NOT_FOUND["quote"]])
def fetch_quote(tenantLocator: str, locator: str) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.get_quote(request_context(), locator))


@bp.route("/policy/{tenantLocator}/quotes", methods=["POST"])
@endpoint(
    "quotes.write",
    "quotes.create",
    idempotent=True,
    creates="quote",
    replay=fetch_quote,
    errors=[
        codes.ACCOUNT_NOT_ELIGIBLE["quote"],
        codes.INVALID_ELEMENT["quote"],
        codes.INVALID_REFERENCE["quote"],
        codes.QUOTE_UNKNOWN_ACCOUNT,
        codes.UNKNOWN_PRODUCT["quote"],
    ],
)
def create_quote(tenantLocator: str, body: schemas.QuoteCreateRequest) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.create_quote(request_context(), body))


@bp.route("/policy/{tenantLocator}/policies/{locator}/quote", methods=["POST"])
@endpoint(
    "policies.write",
    "policies.create-quote",
    idempotent=True,
    errors=[codes.NOT_FOUND["policy"], codes.NOT_FOUND["snapshot"], codes.PRODUCT_NOT_CONFIGURED["quote"]],
)
def create_quote_from_policy(
    tenantLocator: str, locator: str, query: schemas.QuoteFromPolicyQuery
) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(
        service.create_quote_from_policy(
            request_context(),
            locator,
            query.date,
            by_issued_time=query.byIssuedTime,
            include_static=query.includeStaticData,
        )
    )


@bp.route("/policy/{tenantLocator}/quotes/list", methods=["GET"])
@endpoint("quotes.read", "quotes.list")
def list_quotes(tenantLocator: str, query: schemas.ListQuery) -> schemas.QuoteListResponse:
    return schemas.QuoteListResponse.of(service.list_quotes(request_context(), query.page()), schemas.QuoteResponse.of)


@bp.route("/policy/{tenantLocator}/quotes/numbers/{quoteNumber}", methods=["GET"])
@endpoint("quotes.read", "quotes.list", errors=[codes.NOT_FOUND["quote"]])
def fetch_quotes_by_number(tenantLocator: str, quoteNumber: str) -> list[schemas.QuoteResponse]:
    return [schemas.QuoteResponse.of(quote) for quote in service.quotes_with_number(request_context(), quoteNumber)]


@bp.route("/policy/{tenantLocator}/accounts/{locator}/quotes/list", methods=["GET"])
@endpoint("accounts.read", "accounts.list", errors=[codes.NOT_FOUND["account"]])
def list_account_quotes(tenantLocator: str, locator: str, query: schemas.ListQuery) -> schemas.QuoteListResponse:
    quotes = service.quotes_of_account(request_context(), locator, query.page())
    return schemas.QuoteListResponse.of(quotes, schemas.QuoteResponse.of)


@bp.route("/policy/{tenantLocator}/quotes/validatePreview", methods=["POST"])
@endpoint(
    "quotes.read",
    errors=[
        codes.ACCOUNT_NOT_ELIGIBLE["quote"],
        codes.INVALID_ELEMENT["quote"],
        codes.INVALID_REFERENCE["quote"],
        codes.QUOTE_UNKNOWN_ACCOUNT,
        codes.UNKNOWN_PRODUCT["quote"],
    ],
)
def preview_quote_validation(tenantLocator: str, body: schemas.QuoteCreateRequest) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.validate_preview(request_context(), body))


@bp.route("/policy/{tenantLocator}/quotes/pricePreview", methods=["POST"])
@endpoint(
    "quotes.read",
    errors=[
        codes.ACCOUNT_NOT_ELIGIBLE["quote"],
        codes.INVALID_ELEMENT["quote"],
        codes.INVALID_REFERENCE["quote"],
        codes.QUOTE_UNKNOWN_ACCOUNT,
        codes.UNKNOWN_PRODUCT["quote"],
    ],
)
def preview_quote_price(tenantLocator: str, body: schemas.QuoteCreateRequest) -> schemas.QuotePriceResponse:
    ctx = request_context()
    return schemas.QuotePriceResponse.of(ctx.tenant, service.price_preview(ctx, body))


@bp.route("/policy/{tenantLocator}/quotes/{locator}", methods=["PATCH"])
@endpoint(
    "quotes.write",
    "quotes.update",
    errors=[
        codes.ACCOUNT_NOT_ELIGIBLE["quote"],
        codes.INVALID_ELEMENT["quote"],
        codes.INVALID_REFERENCE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_DRAFT["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.QUOTE_UNKNOWN_ACCOUNT,
    ],
)
def update_quote(tenantLocator: str, locator: str, body: schemas.QuoteUpdateRequest) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.update_quote(request_context(), locator, body))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/elements", methods=["PUT"])
@endpoint(
    "quotes.write",
    "quotes.elements-add",
    errors=[
        codes.INVALID_ELEMENT["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_DRAFT["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
    ],
)
def add_quote_elements(tenantLocator: str, locator: str, body: schemas.ElementCreateRequests) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.add_elements(request_context(), locator, body.root))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/elements", methods=["DELETE"])
@endpoint(
    "quotes.write",
    "quotes.elements-delete",
    errors=[
        codes.INVALID_ELEMENT["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_DRAFT["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
    ],
)
def remove_quote_elements(tenantLocator: str, locator: str, body: schemas.ElementLocators) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.remove_elements(request_context(), locator, body.root))


# --- the lifecycle -------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/quotes/{locator}/validate", methods=["PATCH"])
@endpoint(
    "quotes.write",
    "quotes.validate",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.QUOTE_HELD,
    ],
)
def validate_quote(tenantLocator: str, locator: str, query: schemas.StatelessQuery) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.validate_quote(request_context(), locator, stateless=query.stateless))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/price", methods=["PATCH"])
@endpoint(
    "quotes.write",
    "quotes.price",
    errors=[
        codes.EXPIRED["quote"],
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.QUOTE_HELD,
    ],
)
def price_quote(tenantLocator: str, locator: str, query: schemas.StatelessQuery) -> schemas.QuotePriceResponse:
    ctx = request_context()
    return schemas.QuotePriceResponse.of(ctx.tenant, service.price_quote(ctx, locator, stateless=query.stateless))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/price", methods=["GET"])
@endpoint("quotes.read", errors=[codes.NOT_FOUND["quote"], codes.NOT_PRICED["quote"]])
def fetch_quote_price(tenantLocator: str, locator: str) -> schemas.QuotePriceResponse:
    ctx = request_context()
    return schemas.QuotePriceResponse.of(ctx.tenant, service.priced_quote(ctx, locator))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwrite", methods=["PATCH"])
@endpoint(
    "quotes.write",
    "quotes.underwrite",
    errors=[
        codes.EXPIRED["quote"],
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.QUOTE_HELD,
    ],
)
def underwrite_quote(
    tenantLocator: str, locator: str, query: schemas.StatelessQuery
) -> schemas.QuoteUnderwritingResponse:
    ctx = request_context()
    underwritten = service.underwrite_quote(ctx, locator, stateless=query.stateless)
    return schemas.QuoteUnderwritingResponse.of(ctx.tenant, underwritten)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/accept", methods=["PATCH"])
@endpoint(
    "quotes.write",
    "quotes.accept",
    idempotent=True,
    replay=fetch_quote,
    errors=[
        codes.EXPIRED["quote"],
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.QUOTE_HELD,
    ],
)
def accept_quote(tenantLocator: str, locator: str) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.accept_quote(request_context(), locator))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/issue", methods=["PATCH"])
@endpoint(
    "quotes.write",
    "quotes.issue",
    idempotent=True,
    replay=fetch_quote,
    errors=[
        codes.EXPIRED["quote"],
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.QUOTE_RESERVED_POLICY_NUMBER_REQUIRED,
        codes.QUOTE_HELD,
    ],
)
def issue_quote(tenantLocator: str, locator: str) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.issue_quote(request_context(), locator))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/reset", methods=["PATCH"])
@endpoint(
    "quotes.write",
    "quotes.reset",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
    ],
)
def reset_quote(tenantLocator: str, locator: str, body: schemas.ResetRequest | None) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.reset_quote(request_context(), locator, body or schemas.ResetRequest()))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/refuse", methods=["PATCH"])
@endpoint(
    "quotes.write",
    "quotes.refuse",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
    ],
)
def refuse_quote(tenantLocator: str, locator: str) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.refuse_quote(request_context(), locator))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/discard", methods=["PATCH"])
@endpoint(
    "quotes.write",
    "quotes.discard",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
    ],
)
def discard_quote(tenantLocator: str, locator: str) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.discard_quote(request_context(), locator))


# --- underwriting flags --------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags", methods=["GET"])
@endpoint("quotes.read", errors=[codes.NOT_FOUND["quote"]])
def fetch_quote_underwriting_flags(tenantLocator: str, locator: str) -> schemas.QuoteUnderwritingFlagsResponse:
    return schemas.QuoteUnderwritingFlagsResponse.of(service.get_quote(request_context(), locator))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags", methods=["PATCH"])
@endpoint(
    "quotes.write",
    errors=[
        codes.INVALID_FLAG["quote"],
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["underwritingFlag"],
    ],
)
def update_quote_underwriting_flags(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagsUpdateRequest
) -> schemas.QuoteUnderwritingFlagsResponse:
    return schemas.QuoteUnderwritingFlagsResponse.of(
        service.change_flags(request_context(), locator, body.addFlags, body.clearFlags)
    )


def _add_flag(
    locator: str, level: str, flag: schemas.UnderwritingFlagCreateRequest
) -> schemas.QuoteUnderwritingFlagsResponse:
    """The level is the path's; a body naming another level is a 400."""
    if flag.level not in (None, level):
        raise codes.REQUEST_INVALID(
            f"This endpoint adds {level} flags", field_errors=[FieldError("level", f"must be {level}")]
        )
    added = flag.model_copy(update={"level": level})
    return schemas.QuoteUnderwritingFlagsResponse.of(service.change_flags(request_context(), locator, [added], []))


def _clear_flag(locator: str, level: str, flag_locator: str) -> schemas.QuoteUnderwritingFlagsResponse:
    cleared = service.clear_flag(request_context(), locator, level, flag_locator)
    return schemas.QuoteUnderwritingFlagsResponse.of(cleared)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags/approve", methods=["POST"])
@endpoint(
    "quotes.write",
    "quotes.approve-add",
    errors=[
        codes.INVALID_FLAG["quote"],
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
    ],
)
def add_quote_approve_flag(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagCreateRequest
) -> schemas.QuoteUnderwritingFlagsResponse:
    return _add_flag(locator, "approve", body)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags/block", methods=["POST"])
@endpoint(
    "quotes.write",
    "quotes.block-add",
    errors=[
        codes.INVALID_FLAG["quote"],
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
    ],
)
def add_quote_block_flag(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagCreateRequest
) -> schemas.QuoteUnderwritingFlagsResponse:
    return _add_flag(locator, "block", body)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags/decline", methods=["POST"])
@endpoint(
    "quotes.write",
    "quotes.decline-add",
    errors=[
        codes.INVALID_FLAG["quote"],
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
    ],
)
def add_quote_decline_flag(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagCreateRequest
) -> schemas.QuoteUnderwritingFlagsResponse:
    return _add_flag(locator, "decline", body)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags/reject", methods=["POST"])
@endpoint(
    "quotes.write",
    "quotes.reject-add",
    errors=[
        codes.INVALID_FLAG["quote"],
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
    ],
)
def add_quote_reject_flag(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagCreateRequest
) -> schemas.QuoteUnderwritingFlagsResponse:
    return _add_flag(locator, "reject", body)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags/info", methods=["POST"])
@endpoint(
    "quotes.write",
    "quotes.info-add",
    errors=[
        codes.INVALID_FLAG["quote"],
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
    ],
)
def add_quote_info_flag(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagCreateRequest
) -> schemas.QuoteUnderwritingFlagsResponse:
    return _add_flag(locator, "info", body)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags/approve/{flagLocator}", methods=["DELETE"])
@endpoint(
    "quotes.write",
    "quotes.approve-clear",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["underwritingFlag"],
        codes.UNDERWRITING_FLAG_CLEARED,
    ],
)
def clear_quote_approve_flag(
    tenantLocator: str, locator: str, flagLocator: str
) -> schemas.QuoteUnderwritingFlagsResponse:
    return _clear_flag(locator, "approve", flagLocator)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags/block/{flagLocator}", methods=["DELETE"])
@endpoint(
    "quotes.write",
    "quotes.block-clear",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["underwritingFlag"],
        codes.UNDERWRITING_FLAG_CLEARED,
    ],
)
def clear_quote_block_flag(
    tenantLocator: str, locator: str, flagLocator: str
) -> schemas.QuoteUnderwritingFlagsResponse:
    return _clear_flag(locator, "block", flagLocator)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags/decline/{flagLocator}", methods=["DELETE"])
@endpoint(
    "quotes.write",
    "quotes.decline-clear",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["underwritingFlag"],
        codes.UNDERWRITING_FLAG_CLEARED,
    ],
)
def clear_quote_decline_flag(
    tenantLocator: str, locator: str, flagLocator: str
) -> schemas.QuoteUnderwritingFlagsResponse:
    return _clear_flag(locator, "decline", flagLocator)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags/reject/{flagLocator}", methods=["DELETE"])
@endpoint(
    "quotes.write",
    "quotes.reject-clear",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["underwritingFlag"],
        codes.UNDERWRITING_FLAG_CLEARED,
    ],
)
def clear_quote_reject_flag(
    tenantLocator: str, locator: str, flagLocator: str
) -> schemas.QuoteUnderwritingFlagsResponse:
    return _clear_flag(locator, "reject", flagLocator)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/underwritingFlags/info/{flagLocator}", methods=["DELETE"])
@endpoint(
    "quotes.write",
    "quotes.info-clear",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["underwritingFlag"],
        codes.UNDERWRITING_FLAG_CLEARED,
    ],
)
def clear_quote_info_flag(tenantLocator: str, locator: str, flagLocator: str) -> schemas.QuoteUnderwritingFlagsResponse:
    return _clear_flag(locator, "info", flagLocator)


# --- numbers and static data ---------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/quotes/{locator}/number/set", methods=["POST"])
@endpoint(
    "quotes.write",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.NUMBER_TAKEN["quote"],
    ],
)
def set_quote_number(tenantLocator: str, locator: str, query: schemas.QuoteNumberQuery) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.set_number(request_context(), locator, query.quoteNumber))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/number/generate", methods=["POST"])
@endpoint(
    "quotes.write",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.NO_NUMBERING_PLAN["quote"],
    ],
)
def generate_quote_number(tenantLocator: str, locator: str) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.generate_number(request_context(), locator))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/reservedPolicyNumber/set", methods=["POST"])
@endpoint(
    "quotes.write",
    "quotes.reserve-policy-number-set",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.QUOTE_POLICY_NUMBER_TAKEN,
    ],
)
def set_quote_reserved_policy_number(
    tenantLocator: str, locator: str, query: schemas.ReservedPolicyNumberQuery
) -> schemas.QuoteResponse:
    number = query.reservedPolicyNumber
    return schemas.QuoteResponse.of(service.set_reserved_policy_number(request_context(), locator, number))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/static", methods=["GET"])
@endpoint("quotes.read", errors=[codes.NOT_FOUND["quote"]])
def fetch_quote_static_data(tenantLocator: str, locator: str) -> dict[str, Any]:
    return service.get_quote(request_context(), locator).static


@bp.route("/policy/{tenantLocator}/quotes/{locator}/static", methods=["POST"])
@endpoint(
    "quotes.write",
    "quotes.static-data-add",
    errors=[
        codes.INVALID_STATE["quote"],
        codes.INVALID_STATE["quote"],
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["quote"],
        codes.QUOTE_HELD,
    ],
)
def add_quote_static_data(tenantLocator: str, locator: str, body: schemas.StaticData) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.add_static(request_context(), locator, body.root))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/static", methods=["PUT"])
@endpoint(
    "quotes.write",
    "quotes.static-data-add",
    errors=[codes.INVALID_STATE["quote"], codes.NOT_FOUND["quote"], codes.NOT_FOUND["quote"], codes.QUOTE_HELD],
)
def replace_quote_static_data(tenantLocator: str, locator: str, body: schemas.StaticData) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.replace_static(request_context(), locator, body.root))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/static", methods=["PATCH"])
@endpoint(
    "quotes.write",
    "quotes.static-data-update",
    errors=[codes.INVALID_STATE["quote"], codes.NOT_FOUND["quote"], codes.NOT_FOUND["quote"], codes.QUOTE_HELD],
)
def update_quote_static_data(
    tenantLocator: str, locator: str, body: schemas.StaticDataUpdateRequest
) -> schemas.QuoteResponse:
    return schemas.QuoteResponse.of(service.update_static(request_context(), locator, body.setData, body.removeData))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/static/history/list", methods=["GET"])
@endpoint("quotes.read", errors=[codes.NOT_FOUND["quote"]])
def list_quote_static_data_history(
    tenantLocator: str, locator: str, query: schemas.ListQuery
) -> schemas.StaticDataHistoryListResponse:
    history = service.static_history(request_context(), locator, query.page())
    return schemas.StaticDataHistoryListResponse.of(history, schemas.StaticDataHistoryResponse.of)


# --- constraint tables ---------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/quotes/{locator}/constraints/evaluate", methods=["POST"])
@endpoint(
    "quotes.read", errors=[codes.INVALID_ELEMENT["quote"], codes.INVALID_ELEMENT["quote"], codes.NOT_FOUND["quote"]]
)
def evaluate_quote_constraints(
    tenantLocator: str, locator: str, body: schemas.ConstraintValuesRequest
) -> dict[str, dict[str, list[str]]]:
    return service.evaluate_constraints(request_context(), locator, body.root)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/constraints/dependency", methods=["GET"])
@endpoint("quotes.read", errors=[codes.NOT_FOUND["quote"]])
def fetch_quote_constraint_dependencies(tenantLocator: str, locator: str) -> dict[str, dict[str, Any]]:
    return service.constraint_dependencies(request_context(), locator)
