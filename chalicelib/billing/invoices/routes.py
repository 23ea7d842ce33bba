"""Invoices (spec part 3, "Invoices"): lists, reads, updates, settling and numbering, previews, early
invoicing and the invoicing jobs.

API Gateway refuses sibling path variables of different names, so paths below `/billing/{t}/invoices/`
name the invoice `{locator}` and those of a policy, quote or account their own variable where the
spec does; clients never see variable names.
"""

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
    from chalicelib.billing.invoices import previews, schemas, service
else:
    (billing_schemas,) = lazy_modules("chalicelib.billing", "schemas")
    previews, schemas, service = lazy_modules("chalicelib.billing.invoices", "previews", "schemas", "service")

bp = Blueprint(__name__)

INVOICE = [codes.NOT_FOUND["invoice"]]


@bp.route("/billing/{tenantLocator}/invoices/quotes/{quoteLocator}/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list")
def list_quote_invoices(
    tenantLocator: str, quoteLocator: str, query: schemas.InvoiceListQuery
) -> schemas.InvoiceListResponse:
    return schemas.InvoiceListResponse.of(
        service.invoices_of(
            request_context(), "quote", quoteLocator, query.page(), include_zero=query.includeZeroAmountInvoices
        ),
        schemas.InvoiceSummary.of_record,
    )


@bp.route("/billing/{tenantLocator}/invoices/policies/{policyLocator}/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list")
def list_policy_invoices(
    tenantLocator: str, policyLocator: str, query: schemas.InvoiceListQuery
) -> schemas.InvoiceListResponse:
    return schemas.InvoiceListResponse.of(
        service.invoices_of(
            request_context(), "policy", policyLocator, query.page(), include_zero=query.includeZeroAmountInvoices
        ),
        schemas.InvoiceSummary.of_record,
    )


@bp.route("/billing/{tenantLocator}/invoices/accounts/{accountLocator}/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list")
def list_account_invoices(
    tenantLocator: str, accountLocator: str, query: schemas.InvoiceListQuery
) -> schemas.InvoiceListResponse:
    return schemas.InvoiceListResponse.of(
        service.invoices_of(
            request_context(), "account", accountLocator, query.page(), include_zero=query.includeZeroAmountInvoices
        ),
        schemas.InvoiceSummary.of_record,
    )


@bp.route("/billing/{tenantLocator}/invoices/quotes/{quoteLocator}/previewInvoices", methods=["GET"])
@endpoint("invoices.read", errors=[codes.NOT_FOUND["quote"], codes.NOT_PRICED["quote"], codes.NOT_FOUND["account"]])
def preview_quote_invoices(
    tenantLocator: str, quoteLocator: str, query: schemas.PreviewQuery
) -> list[schemas.InvoicePreviewResponse]:
    return schemas.InvoicePreviewResponse.listed(previews.preview_quote(request_context(), quoteLocator), query)


@bp.route("/billing/{tenantLocator}/invoices/transactions/{locator}/previewInvoices", methods=["GET"])
@endpoint("invoices.read", errors=[codes.NOT_FOUND["transaction"], codes.NOT_PRICED["transaction"]])
def preview_transaction_invoices(
    tenantLocator: str, locator: str, query: schemas.PreviewQuery
) -> list[schemas.InvoicePreviewResponse]:
    return schemas.InvoicePreviewResponse.listed(previews.preview_transaction(request_context(), locator), query)


@bp.route("/billing/{tenantLocator}/invoices/quotes/statelessPreview", methods=["GET"])
@endpoint("invoices.read", errors=[codes.NOT_FOUND["account"], codes.INVALID_REFERENCE["quote"]])
def preview_stateless_invoices(
    tenantLocator: str, query: schemas.StatelessPreviewQuery
) -> list[schemas.InvoicePreviewResponse]:
    return schemas.InvoicePreviewResponse.listed(
        previews.preview_stateless(request_context(), query.quotePreviewRequest), query
    )


@bp.route("/billing/{tenantLocator}/invoices/numbers/{invoiceNumber}", methods=["GET"])
@endpoint("invoices.read", errors=INVOICE)
def fetch_invoices_by_number(tenantLocator: str, invoiceNumber: str) -> list[schemas.InvoiceResponse]:
    return [schemas.InvoiceResponse.of(i) for i in service.invoices_with_number(request_context(), invoiceNumber)]


@bp.route("/billing/{tenantLocator}/invoices/{locator}", methods=["GET"])
@endpoint("invoices.read", errors=INVOICE)
def fetch_invoice(tenantLocator: str, locator: str) -> schemas.InvoiceResponse:
    return schemas.InvoiceResponse.of(service.invoice(request_context(), locator))


@bp.route("/billing/{tenantLocator}/invoices/{locator}", methods=["PATCH"])
@endpoint("invoices.write", errors=INVOICE)
def update_invoice(tenantLocator: str, locator: str, body: schemas.InvoiceUpdateRequest) -> schemas.InvoiceResponse:
    return schemas.InvoiceResponse.of(
        service.update_invoice(request_context(), locator, body.autopayTime, body.suppressAutopay)
    )


@bp.route("/billing/{tenantLocator}/invoices/{locator}/details", methods=["GET"])
@endpoint("invoices.read", errors=INVOICE)
def fetch_invoice_details(tenantLocator: str, locator: str) -> schemas.InvoiceDetailsResponse:
    return schemas.InvoiceDetailsResponse.of(*service.invoice_with_installments(request_context(), locator))


@bp.route("/billing/{tenantLocator}/invoices/{locator}/debits/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list", errors=INVOICE)
def list_invoice_debits(
    tenantLocator: str, locator: str, query: billing_schemas.IncludeReversedQuery
) -> schemas.DebitListResponse:
    found = service.invoice(request_context(), locator)
    credited = [found] if found.creditedAmount else []
    return schemas.DebitListResponse.of(Page.window(credited, query.page()), schemas.DebitResponse.of_credit)


@bp.route("/billing/{tenantLocator}/invoices/{locator}/settle", methods=["POST"])
@endpoint(
    "invoices.write", errors=[*INVOICE, codes.INVOICE_AMOUNT_REMAINING, codes.INVOICE_SETTLED, codes.INVOICE_DISCARDED]
)
def settle_invoice(
    tenantLocator: str, locator: str, query: schemas.SettleQuery
) -> schemas.CreditDistributionListResponse:
    # `forced` is the platform's; a positive remaining amount is refused with it too (service.py)
    return schemas.CreditDistributionListResponse.of_settled(*service.settle_invoice(request_context(), locator))


@bp.route("/billing/{tenantLocator}/invoices/{locator}/number/set", methods=["POST"])
@endpoint("invoices.write", errors=[*INVOICE, codes.NUMBER_TAKEN["invoice"]])
def set_invoice_number(tenantLocator: str, locator: str, query: schemas.InvoiceNumberQuery) -> schemas.InvoiceResponse:
    return schemas.InvoiceResponse.of(service.set_invoice_number(request_context(), locator, query.invoiceNumber))


@bp.route("/billing/{tenantLocator}/invoices/{locator}/number/generate", methods=["POST"])
@endpoint(
    "invoices.write",
    errors=[*INVOICE, codes.NO_NUMBERING_PLAN["invoice"], codes.NUMBERING_EXHAUSTED, codes.NUMBERING_INVALID_PLAN],
)
def generate_invoice_number(tenantLocator: str, locator: str) -> schemas.InvoiceResponse:
    return schemas.InvoiceResponse.of(service.generate_invoice_number(request_context(), locator))


@bp.route("/billing/{tenantLocator}/invoices/earlyInvoicing", methods=["POST"])
@endpoint("invoices.write", idempotent=True, errors=[codes.NOT_FOUND["account"], codes.INSTALLMENT_NOT_INVOICEABLE])
def request_early_invoicing(tenantLocator: str, body: schemas.EarlyInvoicingRequest) -> schemas.EarlyInvoicingResponse:
    return schemas.EarlyInvoicingResponse.of(service.request_early_invoicing(request_context(), body))


@bp.route("/billing/{tenantLocator}/jobs/invoicing/{jobLocator}", methods=["GET"])
@endpoint("jobs.read", errors=[codes.NOT_FOUND["invoicingJob"]])
def fetch_invoicing_job(tenantLocator: str, jobLocator: str) -> schemas.InvoicingJobData:
    return schemas.InvoicingJobData.of(service.invoicing_job(request_context(), jobLocator))


@bp.route("/billing/{tenantLocator}/jobs/invoicing/accounts/{locator}/list", methods=["GET"])
@endpoint("jobs.read", "jobs.list", errors=[codes.NOT_FOUND["account"]])
def list_invoicing_jobs(tenantLocator: str, locator: str, query: schemas.ListQuery) -> schemas.InvoicingJobListResponse:
    return schemas.InvoicingJobListResponse.of(
        service.invoicing_jobs(request_context(), locator, query.page()), schemas.InvoicingJobData.of
    )


@bp.route("/billing/{tenantLocator}/jobs/invoices/accounts/{locator}/list", methods=["GET"])
@endpoint("jobs.read", "jobs.list", errors=[codes.NOT_FOUND["account"]])
def list_invoice_generation_jobs(
    tenantLocator: str, locator: str, query: schemas.ListQuery
) -> schemas.InvoiceGenerationJobListResponse:
    return schemas.InvoiceGenerationJobListResponse.of(
        service.generation_jobs(request_context(), locator, query.page()), schemas.InvoiceGenerationJobResponse.of
    )


@bp.route("/billing/{tenantLocator}/jobs/invoicesLifecycle/{locator}", methods=["GET"])
@endpoint("jobs.read", errors=INVOICE)
def fetch_invoice_lifecycle(tenantLocator: str, locator: str) -> schemas.InvoiceLifecycleResponse:
    """`locator`: the invoice's (its lifecycle has no locator of its own)."""
    return schemas.InvoiceLifecycleResponse.of(service.invoice(request_context(), locator))
