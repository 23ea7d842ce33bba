"""Credit distributions and disbursements (from the OpenAPI definition): create, fetch, list, and the
steps of each (validate, reset, execute, reverse, discard; a disbursement also approve and reject)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.billing import ledger
    from chalicelib.billing import schemas as billing_schemas
    from chalicelib.billing.credit import schemas, service
else:
    ledger, billing_schemas = lazy_modules("chalicelib.billing", "ledger", "schemas")
    schemas, service = lazy_modules("chalicelib.billing.credit", "schemas", "service")

bp = Blueprint(__name__)

DISTRIBUTION = [codes.NOT_FOUND["creditDistribution"], codes.CREDIT_DISTRIBUTION_INVALID_STATE]
DISBURSEMENT = [codes.NOT_FOUND["disbursement"], codes.DISBURSEMENT_INVALID_STATE]
CREATION = [
    codes.NOT_FOUND["account"],
    codes.CREDIT_ACCOUNT_REQUIRED,
    codes.CREDIT_INVALID_AMOUNT,
    codes.CREDIT_INVALID_SOURCE,
    codes.CREDIT_INVALID_CURRENCY,
]


# --- credit distributions ------------------------------------------------------------------------------


@bp.route("/billing/{tenantLocator}/creditDistributions/{locator}", methods=["GET"])
@endpoint("credit-distributions.read", errors=[codes.NOT_FOUND["creditDistribution"]])
def fetch_credit_distribution(tenantLocator: str, locator: str) -> schemas.DistributionResponse:
    return schemas.DistributionResponse.of(service.distribution(request_context(), locator))


@bp.route("/billing/{tenantLocator}/creditDistributions", methods=["POST"])
@endpoint(
    "credit-distributions.write",
    idempotent=True,
    creates="creditDistribution",
    replay=fetch_credit_distribution,
    errors=[*CREATION, codes.CREDIT_INVALID_TARGET],
)
def create_credit_distribution(
    tenantLocator: str, body: schemas.CreditDistributionCreateRequest
) -> schemas.DistributionResponse:
    return schemas.DistributionResponse.of(
        service.create_distribution(
            request_context(),
            body.accountLocator,
            body.amount,
            body.currency,
            schemas.targets_of(body.sources),
            schemas.targets_of(body.targets),
        )
    )


@bp.route("/billing/{tenantLocator}/creditDistributions/list", methods=["GET"])
@endpoint("credit-distributions.read", "credit-distributions.list", errors=[codes.NOT_FOUND["account"]])
def list_credit_distributions(tenantLocator: str, query: schemas.AccountListQuery) -> schemas.DistributionListResponse:
    return schemas.DistributionListResponse.of(
        service.distributions_of(request_context(), query.accountLocator, query.page()), schemas.DistributionResponse.of
    )


@bp.route("/billing/{tenantLocator}/creditDistributions/{locator}/validate", methods=["PATCH"])
@endpoint("credit-distributions.write", errors=[*DISTRIBUTION, codes.CREDIT_INVALID_TARGET])
def validate_credit_distribution(tenantLocator: str, locator: str) -> schemas.DistributionResponse:
    return schemas.DistributionResponse.of(service.validate_distribution(request_context(), locator))


@bp.route("/billing/{tenantLocator}/creditDistributions/{locator}/reset", methods=["PATCH"])
@endpoint("credit-distributions.write", errors=DISTRIBUTION)
def reset_credit_distribution(tenantLocator: str, locator: str) -> schemas.DistributionResponse:
    return schemas.DistributionResponse.of(service.reset_distribution(request_context(), locator))


@bp.route("/billing/{tenantLocator}/creditDistributions/{locator}/discard", methods=["PATCH"])
@endpoint("credit-distributions.write", errors=DISTRIBUTION)
def discard_credit_distribution(tenantLocator: str, locator: str) -> schemas.DistributionResponse:
    return schemas.DistributionResponse.of(service.discard_distribution(request_context(), locator))


@bp.route("/billing/{tenantLocator}/creditDistributions/{locator}/execute", methods=["PATCH"])
@endpoint(
    "credit-distributions.write",
    idempotent=True,
    replay=fetch_credit_distribution,
    errors=[*DISTRIBUTION, codes.CREDIT_INVALID_TARGET, codes.CREDIT_INSUFFICIENT_BALANCE],
)
def execute_credit_distribution(tenantLocator: str, locator: str) -> schemas.DistributionResponse:
    return schemas.DistributionResponse.of(service.execute_distribution(request_context(), locator))


@bp.route("/billing/{tenantLocator}/creditDistributions/{locator}/reverse", methods=["PATCH"])
@endpoint("credit-distributions.write", idempotent=True, replay=fetch_credit_distribution, errors=DISTRIBUTION)
def reverse_credit_distribution(
    tenantLocator: str, locator: str, body: schemas.CreditDistributionReverseRequest | None
) -> schemas.DistributionResponse:
    reason = (body.reversalReason or body.reversalType) if body else None
    return schemas.DistributionResponse.of(service.reverse_distribution(request_context(), locator, reason))


# --- disbursements -------------------------------------------------------------------------------------


@bp.route("/billing/{tenantLocator}/disbursements/{locator}", methods=["GET"])
@endpoint("disbursements.read", errors=[codes.NOT_FOUND["disbursement"]])
def fetch_disbursement(tenantLocator: str, locator: str) -> schemas.DisbursementResponse:
    return schemas.DisbursementResponse.of(service.disbursement(request_context(), locator))


@bp.route("/billing/{tenantLocator}/disbursements", methods=["POST"])
@endpoint(
    "disbursements.write",
    idempotent=True,
    creates="disbursement",
    replay=fetch_disbursement,
    errors=[*CREATION, codes.DISBURSEMENT_UNKNOWN_TYPE],
)
def create_disbursement(tenantLocator: str, body: schemas.DisbursementCreateRequest) -> schemas.DisbursementResponse:
    return schemas.DisbursementResponse.of(
        service.create_disbursement(
            request_context(),
            body.accountLocator,
            body.type,
            body.amount,
            body.currency,
            schemas.targets_of(body.sources),
            body.data,
            body.transactionMethod,
            body.transactionNumber,
        )
    )


@bp.route("/billing/{tenantLocator}/disbursements/list", methods=["GET"])
@endpoint("disbursements.read", "disbursements.list", errors=[codes.NOT_FOUND["account"]])
def list_disbursements(tenantLocator: str, query: schemas.AccountListQuery) -> schemas.DisbursementListResponse:
    return schemas.DisbursementListResponse.of(
        service.disbursements_of(request_context(), query.accountLocator, query.page()), schemas.DisbursementResponse.of
    )


@bp.route("/billing/{tenantLocator}/disbursements/{locator}/validate", methods=["PATCH"])
@endpoint(
    "disbursements.write",
    idempotent=True,
    replay=fetch_disbursement,
    errors=[*DISBURSEMENT, codes.DISBURSEMENT_UNKNOWN_TYPE, codes.CREDIT_INSUFFICIENT_BALANCE],
)
def validate_disbursement(tenantLocator: str, locator: str) -> schemas.DisbursementResponse:
    return schemas.DisbursementResponse.of(service.move_disbursement(request_context(), locator, "validate"))


@bp.route("/billing/{tenantLocator}/disbursements/{locator}/reset", methods=["PATCH"])
@endpoint("disbursements.write", errors=DISBURSEMENT)
def reset_disbursement(tenantLocator: str, locator: str) -> schemas.DisbursementResponse:
    return schemas.DisbursementResponse.of(service.move_disbursement(request_context(), locator, "reset"))


@bp.route("/billing/{tenantLocator}/disbursements/{locator}/approve", methods=["PATCH"])
@endpoint(
    "disbursements.write",
    idempotent=True,
    replay=fetch_disbursement,
    errors=[*DISBURSEMENT, codes.CREDIT_INSUFFICIENT_BALANCE],
)
def approve_disbursement(tenantLocator: str, locator: str) -> schemas.DisbursementResponse:
    return schemas.DisbursementResponse.of(service.move_disbursement(request_context(), locator, "approve"))


@bp.route("/billing/{tenantLocator}/disbursements/{locator}/execute", methods=["PATCH"])
@endpoint(
    "disbursements.write",
    idempotent=True,
    replay=fetch_disbursement,
    errors=[*DISBURSEMENT, codes.CREDIT_INSUFFICIENT_BALANCE],
)
def execute_disbursement(tenantLocator: str, locator: str) -> schemas.DisbursementResponse:
    return schemas.DisbursementResponse.of(service.move_disbursement(request_context(), locator, "execute"))


@bp.route("/billing/{tenantLocator}/disbursements/{locator}/reject", methods=["PATCH"])
@endpoint("disbursements.write", errors=DISBURSEMENT)
def reject_disbursement(tenantLocator: str, locator: str) -> schemas.DisbursementResponse:
    return schemas.DisbursementResponse.of(service.move_disbursement(request_context(), locator, "reject"))


@bp.route("/billing/{tenantLocator}/disbursements/{locator}/reverse", methods=["PATCH"])
@endpoint("disbursements.write", idempotent=True, replay=fetch_disbursement, errors=DISBURSEMENT)
def reverse_disbursement(tenantLocator: str, locator: str) -> schemas.DisbursementResponse:
    return schemas.DisbursementResponse.of(service.move_disbursement(request_context(), locator, "reverse"))


@bp.route("/billing/{tenantLocator}/disbursements/{locator}/discard", methods=["PATCH"])
@endpoint("disbursements.write", errors=DISBURSEMENT)
def discard_disbursement(tenantLocator: str, locator: str) -> schemas.DisbursementResponse:
    return schemas.DisbursementResponse.of(service.move_disbursement(request_context(), locator, "discard"))


@bp.route("/billing/{tenantLocator}/accounting/ledgerAccounts/accountCreditBalance/{refLocator}", methods=["GET"])
@endpoint("accounting.read", errors=[codes.NOT_FOUND["account"]])
def fetch_credit_balance(
    tenantLocator: str, refLocator: str, query: billing_schemas.LedgerQuery
) -> billing_schemas.LedgerAccountResponse:
    balance, lines = ledger.credit_balance(request_context(), refLocator, query.currency, query.page())
    return billing_schemas.LedgerAccountResponse.of(balance, lines)
