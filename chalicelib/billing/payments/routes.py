"""Payments (from the OpenAPI definition): create, read, list, update, the steps (validate, post, reverse,
reset, discard), numbers and payment requests, an invoice's payments and a payment's invoices, credits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.core.paging import Page
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.billing import schemas as billing_schemas
    from chalicelib.billing.invoices import schemas as invoice_schemas
    from chalicelib.billing.payments import payment_lifecycle, schemas, service
    from chalicelib.billing.writeoffs import service as write_offs
else:
    (billing_schemas,) = lazy_modules("chalicelib.billing", "schemas")
    (invoice_schemas,) = lazy_modules("chalicelib.billing.invoices", "schemas")
    payment_lifecycle, schemas, service = lazy_modules(
        "chalicelib.billing.payments", "payment_lifecycle", "schemas", "service"
    )
    (write_offs,) = lazy_modules("chalicelib.billing.writeoffs", "service")

bp = Blueprint(__name__)

INVOICE = [codes.NOT_FOUND["invoice"]]
PAYMENT = [codes.NOT_FOUND["payment"]]
PAYMENT_CHECKS = [
    codes.PAYMENT_INVALID_AMOUNT,
    codes.PAYMENT_UNKNOWN_TYPE,
    codes.PAYMENT_INVALID_TARGET,
    codes.PAYMENT_INVALID_CURRENCY,
]


@bp.route("/billing/{tenantLocator}/invoices/{locator}/payments/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list", errors=INVOICE)
def list_invoice_payments(
    tenantLocator: str, locator: str, query: billing_schemas.IncludeReversedQuery
) -> schemas.PaymentListResponse:
    return schemas.PaymentListResponse.of(
        service.payments_of_invoice(request_context(), locator, query.page(), include_reversed=query.includeReversed),
        schemas.PaymentResponse.of,
    )


@bp.route("/billing/{tenantLocator}/invoices/{locator}/credits/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list", errors=INVOICE)
def list_invoice_credits(
    tenantLocator: str, locator: str, query: billing_schemas.IncludeReversedQuery
) -> billing_schemas.CreditListResponse:
    found, made = write_offs.credits_of_invoice(request_context(), locator, include_reversed=query.includeReversed)
    return billing_schemas.CreditListResponse.of(
        Page.window(made, query.page()),
        lambda credit: billing_schemas.CreditResponse.of(credit, found.accountLocator, found.currency),
    )


@bp.route("/billing/{tenantLocator}/payments/{locator}", methods=["GET"])
@endpoint("payments.read", errors=PAYMENT)
def fetch_payment(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.payment(request_context(), locator))


@bp.route("/billing/{tenantLocator}/payments", methods=["POST"])
@endpoint(
    "payments.write",
    idempotent=True,
    creates="payment",
    replay=fetch_payment,
    errors=[*PAYMENT_CHECKS, codes.PAYMENT_ACCOUNT_REQUIRED, codes.NOT_FOUND["account"]],
)
def create_payment(tenantLocator: str, body: schemas.PaymentCreateRequest) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.create_payment(request_context(), body))


@bp.route("/billing/{tenantLocator}/payments/list", methods=["GET"])
@endpoint("payments.read", "payments.list", errors=[codes.NOT_FOUND["account"]])
def list_payments(tenantLocator: str, query: schemas.PaymentListQuery) -> schemas.PaymentListResponse:
    return schemas.PaymentListResponse.of(
        service.payments_of_account(request_context(), query.accountLocator, query.page()), schemas.PaymentResponse.of
    )


@bp.route("/billing/{tenantLocator}/payments/{locator}", methods=["PATCH"])
@endpoint("payments.write", errors=[*PAYMENT, *PAYMENT_CHECKS, codes.PAYMENT_INVALID_STATE])
def update_payment(tenantLocator: str, locator: str, body: schemas.PaymentUpdateRequest) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.update_payment(request_context(), locator, body))


@bp.route("/billing/{tenantLocator}/payments/{locator}/validate", methods=["PATCH"])
@endpoint("payments.write", errors=[*PAYMENT, codes.PAYMENT_INVALID_TARGET, codes.PAYMENT_INVALID_STATE])
def validate_payment(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.validate_payment(request_context(), locator))


@bp.route("/billing/{tenantLocator}/payments/{locator}/post", methods=["PATCH"])
@endpoint(
    "payments.write",
    idempotent=True,
    replay=fetch_payment,
    errors=[*PAYMENT, codes.PAYMENT_INVALID_TARGET, codes.PAYMENT_INVALID_STATE],
)
def post_payment(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.post_payment(request_context(), locator))


@bp.route("/billing/{tenantLocator}/payments/{locator}/reverse", methods=["PATCH"])
@endpoint("payments.write", idempotent=True, replay=fetch_payment, errors=[*PAYMENT, codes.PAYMENT_INVALID_STATE])
def reverse_payment(
    tenantLocator: str, locator: str, body: schemas.PaymentReverseRequest | None
) -> schemas.PaymentResponse:
    reason = (body.reversalReason or body.reversalType) if body else None
    return schemas.PaymentResponse.of(service.reverse_payment(request_context(), locator, reason))


@bp.route("/billing/{tenantLocator}/payments/{locator}/reset", methods=["PATCH"])
@endpoint("payments.write", errors=[*PAYMENT, codes.PAYMENT_INVALID_STATE])
def reset_payment(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.reset_payment(request_context(), locator))


@bp.route("/billing/{tenantLocator}/payments/{locator}/discard", methods=["PATCH"])
@endpoint("payments.write", errors=[*PAYMENT, codes.PAYMENT_INVALID_STATE])
def discard_payment(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.discard_payment(request_context(), locator))


@bp.route("/billing/{tenantLocator}/payments/{locator}/invoices/list", methods=["GET"])
@endpoint("payments.read", "payments.list", errors=PAYMENT)
def list_payment_invoices(
    tenantLocator: str, locator: str, query: billing_schemas.IncludeReversedQuery
) -> invoice_schemas.InvoiceListResponse:
    return invoice_schemas.InvoiceListResponse.of(
        service.invoices_of_payment(request_context(), locator, query.page(), include_reversed=query.includeReversed),
        invoice_schemas.InvoiceSummary.of_record,
    )


@bp.route("/billing/{tenantLocator}/credits/list", methods=["GET"])
@endpoint("credits.read", "credits.list", errors=[codes.NOT_FOUND["account"]])
def list_credits(tenantLocator: str, query: schemas.PaymentListQuery) -> billing_schemas.CreditListResponse:
    """The account's credits (without one, the tenant's): payments once posted (reversed ones too, marked so)."""
    page = service.credits_of_account(request_context(), query.accountLocator, query.page())
    return billing_schemas.CreditListResponse.of(page, schemas.credit_of_payment)


@bp.route("/billing/{tenantLocator}/payments/{locator}/number/set", methods=["POST"])
@endpoint("payments.write", errors=[*PAYMENT, codes.NUMBER_TAKEN["payment"]])
def set_payment_number(tenantLocator: str, locator: str, query: schemas.PaymentNumberQuery) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(payment_lifecycle.set_number(request_context(), locator, query.paymentNumber))


@bp.route("/billing/{tenantLocator}/payments/{locator}/number/generate", methods=["POST"])
@endpoint(
    "payments.write",
    errors=[*PAYMENT, codes.NO_NUMBERING_PLAN["payment"], codes.NUMBERING_EXHAUSTED, codes.NUMBERING_INVALID_PLAN],
)
def generate_payment_number(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(payment_lifecycle.generate_number(request_context(), locator))


@bp.route("/billing/{tenantLocator}/payments/numbers/{paymentNumber}", methods=["GET"])
@endpoint("payments.read", errors=PAYMENT)
def fetch_payments_by_number(tenantLocator: str, paymentNumber: str) -> list[schemas.PaymentResponse]:
    return [schemas.PaymentResponse.of(p) for p in payment_lifecycle.with_number(request_context(), paymentNumber)]


@bp.route("/billing/{tenantLocator}/payments/{locator}/request", methods=["PATCH"])
@endpoint("payments.write", errors=[*PAYMENT, codes.PAYMENT_INVALID_STATE])
def request_payment(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(payment_lifecycle.request(request_context(), locator))


@bp.route("/billing/{tenantLocator}/payments/{locator}/fail", methods=["PATCH"])
@endpoint("payments.write", errors=[*PAYMENT, codes.PAYMENT_INVALID_STATE])
def fail_payment(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(payment_lifecycle.fail(request_context(), locator))


@bp.route("/billing/{tenantLocator}/payments/{locator}/cancel", methods=["PATCH"])
@endpoint("payments.write", errors=[*PAYMENT, codes.PAYMENT_INVALID_STATE])
def cancel_payment(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(payment_lifecycle.cancel(request_context(), locator))
