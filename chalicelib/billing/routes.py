"""Billing (spec part 3, "Invoices"; from the OpenAPI definition: installment lattices, installments,
payments and the account's credit balance ledger).

API Gateway refuses sibling path variables of different names, so paths below `/billing/{t}/invoices/`
name the invoice `{locator}` and those of a policy, quote or account their own variable where the
spec does; clients never see variable names.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.billing import schemas, service
    from chalicelib.billing.installments import charges, installment_times
    from chalicelib.billing.payments import payment_lifecycle
else:
    schemas, service = lazy_modules("chalicelib.billing", "schemas", "service")
    installment_times, charges = lazy_modules("chalicelib.billing.installments", "installment_times", "charges")
    (payment_lifecycle,) = lazy_modules("chalicelib.billing.payments", "payment_lifecycle")

bp = Blueprint(__name__)

INVOICE = [codes.NOT_FOUND["invoice"]]
PAYMENT = [codes.NOT_FOUND["payment"]]
PAYMENT_CHECKS = [codes.PAYMENT_INVALID_AMOUNT, codes.PAYMENT_UNKNOWN_TYPE, codes.PAYMENT_INVALID_TARGET,
                  codes.PAYMENT_INVALID_CURRENCY]


# --- installment lattices and installments ----------------------------------------------------------

@bp.route("/billing/{tenantLocator}/installmentLattices/{installmentLatticeLocator}", methods=["GET"])
@endpoint("installment-lattices.read", errors=[codes.NOT_FOUND["installmentLattice"]])
def fetch_lattice(tenantLocator: str, installmentLatticeLocator: str) -> schemas.InstallmentLatticeResponse:
    return schemas.InstallmentLatticeResponse.of(service.lattice_of(request_context(), installmentLatticeLocator))


@bp.route("/billing/{tenantLocator}/installmentLattices/quotes/{quoteLocator}", methods=["GET"])
@endpoint("installment-lattices.read", errors=[codes.NOT_FOUND["installmentLattice"]])
def fetch_quote_lattice(tenantLocator: str, quoteLocator: str) -> schemas.InstallmentLatticeResponse:
    return schemas.InstallmentLatticeResponse.of(service.latest_lattice_of_quote(request_context(), quoteLocator))


@bp.route("/billing/{tenantLocator}/installmentLattices/policies/{policyLocator}/list", methods=["GET"])
@endpoint("installment-lattices.read", "installment-lattices.list")
def list_policy_lattices(tenantLocator: str, policyLocator: str,
                         query: schemas.ListQuery) -> schemas.InstallmentLatticeListResponse:
    return schemas.InstallmentLatticeListResponse.of_page(
        service.lattices_of_policy(request_context(), policyLocator, query.page()))


@bp.route("/billing/{tenantLocator}/installments/{installmentLocator}", methods=["GET"])
@endpoint("installments.read", errors=[codes.NOT_FOUND["installment"]])
def fetch_installment(tenantLocator: str, installmentLocator: str) -> schemas.InstallmentResponse:
    return schemas.InstallmentResponse.of(service.installment(request_context(), installmentLocator))


@bp.route("/billing/{tenantLocator}/installments/policies/{policyLocator}/list", methods=["GET"])
@endpoint("installments.read", "installments.list")
def list_policy_installments(tenantLocator: str, policyLocator: str,
                             query: schemas.ListQuery) -> schemas.InstallmentListResponse:
    return schemas.InstallmentListResponse.of_page(
        service.installments_of(request_context(), "policy", policyLocator, query.page()))


@bp.route("/billing/{tenantLocator}/installments/quotes/{quoteLocator}/list", methods=["GET"])
@endpoint("installments.read", "installments.list")
def list_quote_installments(tenantLocator: str, quoteLocator: str,
                            query: schemas.ListQuery) -> schemas.InstallmentListResponse:
    return schemas.InstallmentListResponse.of_page(
        service.installments_of(request_context(), "quote", quoteLocator, query.page()))


@bp.route("/billing/{tenantLocator}/installments/transactions/{transactionLocator}/list", methods=["GET"])
@endpoint("installments.read", "installments.list")
def list_transaction_installments(tenantLocator: str, transactionLocator: str,
                                  query: schemas.ListQuery) -> schemas.InstallmentListResponse:
    return schemas.InstallmentListResponse.of_page(
        service.installments_of(request_context(), "transaction", transactionLocator, query.page()))


# --- invoices -----------------------------------------------------------------------------------------

@bp.route("/billing/{tenantLocator}/invoices/quotes/{quoteLocator}/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list")
def list_quote_invoices(tenantLocator: str, quoteLocator: str,
                        query: schemas.InvoiceListQuery) -> schemas.InvoiceListResponse:
    return schemas.InvoiceListResponse.of_page(service.invoices_of(
        request_context(), "quote", quoteLocator, query.page(), include_zero=query.includeZeroAmountInvoices))


@bp.route("/billing/{tenantLocator}/invoices/policies/{policyLocator}/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list")
def list_policy_invoices(tenantLocator: str, policyLocator: str,
                         query: schemas.InvoiceListQuery) -> schemas.InvoiceListResponse:
    return schemas.InvoiceListResponse.of_page(service.invoices_of(
        request_context(), "policy", policyLocator, query.page(), include_zero=query.includeZeroAmountInvoices))


@bp.route("/billing/{tenantLocator}/invoices/accounts/{accountLocator}/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list")
def list_account_invoices(tenantLocator: str, accountLocator: str,
                          query: schemas.InvoiceListQuery) -> schemas.InvoiceListResponse:
    return schemas.InvoiceListResponse.of_page(service.invoices_of(
        request_context(), "account", accountLocator, query.page(), include_zero=query.includeZeroAmountInvoices))


@bp.route("/billing/{tenantLocator}/invoices/quotes/{quoteLocator}/previewInvoices", methods=["GET"])
@endpoint("invoices.read", errors=[codes.NOT_FOUND["quote"], codes.NOT_PRICED["quote"], codes.NOT_FOUND["account"]])
def preview_quote_invoices(tenantLocator: str, quoteLocator: str,
                           query: schemas.PreviewQuery) -> list[schemas.InvoicePreviewResponse]:
    return schemas.InvoicePreviewResponse.listed(service.preview_quote(request_context(), quoteLocator), query)


@bp.route("/billing/{tenantLocator}/invoices/transactions/{locator}/previewInvoices", methods=["GET"])
@endpoint("invoices.read", errors=[codes.NOT_FOUND["transaction"], codes.NOT_PRICED["transaction"]])
def preview_transaction_invoices(tenantLocator: str, locator: str,
                                 query: schemas.PreviewQuery) -> list[schemas.InvoicePreviewResponse]:
    return schemas.InvoicePreviewResponse.listed(service.preview_transaction(request_context(), locator), query)


@bp.route("/billing/{tenantLocator}/invoices/quotes/statelessPreview", methods=["GET"])
@endpoint("invoices.read", errors=[codes.NOT_FOUND["account"], codes.INVALID_REFERENCE["quote"]])
def preview_stateless_invoices(tenantLocator: str,
                               query: schemas.StatelessPreviewQuery) -> list[schemas.InvoicePreviewResponse]:
    return schemas.InvoicePreviewResponse.listed(
        service.preview_stateless(request_context(), query.quotePreviewRequest), query)


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
    return schemas.InvoiceResponse.of(service.update_invoice(request_context(), locator, body.autopayTime,
                                                             body.suppressAutopay))


@bp.route("/billing/{tenantLocator}/invoices/{locator}/details", methods=["GET"])
@endpoint("invoices.read", errors=INVOICE)
def fetch_invoice_details(tenantLocator: str, locator: str) -> schemas.InvoiceDetailsResponse:
    return schemas.InvoiceDetailsResponse.of(*service.invoice_with_installments(request_context(), locator))


@bp.route("/billing/{tenantLocator}/invoices/{locator}/payments/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list", errors=INVOICE)
def list_invoice_payments(tenantLocator: str, locator: str,
                          query: schemas.IncludeReversedQuery) -> schemas.PaymentListResponse:
    return schemas.PaymentListResponse.of_page(service.payments_of_invoice(
        request_context(), locator, query.page(), include_reversed=query.includeReversed))


@bp.route("/billing/{tenantLocator}/invoices/{locator}/credits/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list", errors=INVOICE)
def list_invoice_credits(tenantLocator: str, locator: str,
                         query: schemas.IncludeReversedQuery) -> schemas.CreditListResponse:
    found, made = service.credits_of_invoice(request_context(), locator, include_reversed=query.includeReversed)
    credits = [schemas.CreditResponse.of(c, found.accountLocator, found.currency) for c in made]
    page = query.page()
    return schemas.CreditListResponse(listCompleted=page.offset + page.count >= len(credits),
                                      items=credits[page.offset:page.offset + page.count])


@bp.route("/billing/{tenantLocator}/invoices/{locator}/debits/list", methods=["GET"])
@endpoint("invoices.read", "invoices.list", errors=INVOICE)
def list_invoice_debits(tenantLocator: str, locator: str,
                        query: schemas.IncludeReversedQuery) -> schemas.DebitListResponse:
    found = service.invoice(request_context(), locator)
    debits = [schemas.DebitResponse(invoiceLocator=found.locator, targetLocator=found.accountLocator,
                                    amount=found.creditedAmount, targetType="account")] if found.creditedAmount else []
    page = query.page()
    return schemas.DebitListResponse(listCompleted=page.offset + page.count >= len(debits),
                                     items=debits[page.offset:page.offset + page.count])


@bp.route("/billing/{tenantLocator}/invoices/{locator}/settle", methods=["POST"])
@endpoint("invoices.write", errors=[*INVOICE, codes.INVOICE_AMOUNT_REMAINING, codes.INVOICE_SETTLED])
def settle_invoice(tenantLocator: str, locator: str,
                   query: schemas.SettleQuery) -> schemas.CreditDistributionListResponse:
    # `forced` is the platform's; a positive remaining amount is refused with it too (service.py)
    return schemas.CreditDistributionListResponse.of_settled(*service.settle_invoice(request_context(), locator))


@bp.route("/billing/{tenantLocator}/invoices/{locator}/number/set", methods=["POST"])
@endpoint("invoices.write", errors=[*INVOICE, codes.NUMBER_TAKEN["invoice"]])
def set_invoice_number(tenantLocator: str, locator: str, query: schemas.InvoiceNumberQuery) -> schemas.InvoiceResponse:
    return schemas.InvoiceResponse.of(service.set_invoice_number(request_context(), locator, query.invoiceNumber))


@bp.route("/billing/{tenantLocator}/invoices/{locator}/number/generate", methods=["POST"])
@endpoint("invoices.write", errors=[*INVOICE, codes.NO_NUMBERING_PLAN["invoice"], codes.NUMBERING_EXHAUSTED,
                                    codes.NUMBERING_INVALID_PLAN])
def generate_invoice_number(tenantLocator: str, locator: str) -> schemas.InvoiceResponse:
    return schemas.InvoiceResponse.of(service.generate_invoice_number(request_context(), locator))


# --- payments -----------------------------------------------------------------------------------------

@bp.route("/billing/{tenantLocator}/payments", methods=["POST"])
@endpoint("payments.write", idempotent=True, errors=[*PAYMENT_CHECKS, codes.PAYMENT_ACCOUNT_REQUIRED,
                                                     codes.NOT_FOUND["account"]])
def create_payment(tenantLocator: str, body: schemas.PaymentCreateRequest) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.create_payment(request_context(), body))


@bp.route("/billing/{tenantLocator}/payments/list", methods=["GET"])
@endpoint("payments.read", "payments.list", errors=[codes.NOT_FOUND["account"]])
def list_payments(tenantLocator: str, query: schemas.PaymentListQuery) -> schemas.PaymentListResponse:
    return schemas.PaymentListResponse.of_page(
        service.payments_of_account(request_context(), query.accountLocator, query.page()))


@bp.route("/billing/{tenantLocator}/payments/{locator}", methods=["GET"])
@endpoint("payments.read", errors=PAYMENT)
def fetch_payment(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.payment(request_context(), locator))


@bp.route("/billing/{tenantLocator}/payments/{locator}", methods=["PATCH"])
@endpoint("payments.write", errors=[*PAYMENT, *PAYMENT_CHECKS, codes.PAYMENT_INVALID_STATE])
def update_payment(tenantLocator: str, locator: str, body: schemas.PaymentUpdateRequest) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.update_payment(request_context(), locator, body))


@bp.route("/billing/{tenantLocator}/payments/{locator}/validate", methods=["PATCH"])
@endpoint("payments.write", errors=[*PAYMENT, codes.PAYMENT_INVALID_TARGET, codes.PAYMENT_INVALID_STATE])
def validate_payment(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.validate_payment(request_context(), locator))


@bp.route("/billing/{tenantLocator}/payments/{locator}/post", methods=["PATCH"])
@endpoint("payments.write", idempotent=True, errors=[*PAYMENT, codes.PAYMENT_INVALID_TARGET,
                                                     codes.PAYMENT_INVALID_STATE])
def post_payment(tenantLocator: str, locator: str) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(service.post_payment(request_context(), locator))


@bp.route("/billing/{tenantLocator}/payments/{locator}/reverse", methods=["PATCH"])
@endpoint("payments.write", errors=[*PAYMENT, codes.PAYMENT_INVALID_STATE])
def reverse_payment(tenantLocator: str, locator: str,
                    body: schemas.PaymentReverseRequest | None) -> schemas.PaymentResponse:
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
def list_payment_invoices(tenantLocator: str, locator: str,
                          query: schemas.IncludeReversedQuery) -> schemas.InvoiceListResponse:
    return schemas.InvoiceListResponse.of_page(service.invoices_of_payment(
        request_context(), locator, query.page(), include_reversed=query.includeReversed))


@bp.route("/billing/{tenantLocator}/accounting/ledgerAccounts/accountCreditBalance/{refLocator}", methods=["GET"])
@endpoint("accounting.read", errors=[codes.NOT_FOUND["account"]])
def fetch_credit_balance(tenantLocator: str, refLocator: str,
                         query: schemas.LedgerQuery) -> schemas.LedgerAccountResponse:
    balance, lines = service.credit_balance(request_context(), refLocator, query.currency, query.page())
    return schemas.LedgerAccountResponse.of(balance, lines)


# --- billing jobs -------------------------------------------------------------------------------------

@bp.route("/billing/{tenantLocator}/jobs/installments/quotes/{locator}/list", methods=["GET"])
@endpoint("jobs.read", "jobs.list")
def list_quote_installment_jobs(tenantLocator: str, locator: str,
                                query: schemas.ListQuery) -> schemas.InstallmentJobDataListResponse:
    return schemas.InstallmentJobDataListResponse.of_page(
        service.installment_jobs(request_context(), "quote", locator, query.page()))


@bp.route("/billing/{tenantLocator}/jobs/installments/transactions/{locator}/list", methods=["GET"])
@endpoint("jobs.read", "jobs.list")
def list_transaction_installment_jobs(tenantLocator: str, locator: str,
                                      query: schemas.ListQuery) -> schemas.InstallmentJobDataListResponse:
    return schemas.InstallmentJobDataListResponse.of_page(
        service.installment_jobs(request_context(), "transaction", locator, query.page()))


@bp.route("/billing/{tenantLocator}/retryJobs/{policyLocator}/retryFailedTransactions", methods=["POST"])
@endpoint("retry-jobs.write", errors=[codes.NOT_FOUND["policy"]])
def retry_failed_transactions(tenantLocator: str, policyLocator: str) -> schemas.InstallmentJobDataListResponse:
    retried = service.retry_failed(request_context(), policyLocator)
    return schemas.InstallmentJobDataListResponse(listCompleted=True,
                                                  items=[schemas.InstallmentJobData.of(j) for j in retried])


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
    return schemas.InvoicingJobListResponse.of_page(service.invoicing_jobs(request_context(), locator, query.page()))


@bp.route("/billing/{tenantLocator}/jobs/invoices/accounts/{locator}/list", methods=["GET"])
@endpoint("jobs.read", "jobs.list", errors=[codes.NOT_FOUND["account"]])
def list_invoice_generation_jobs(tenantLocator: str, locator: str,
                                 query: schemas.ListQuery) -> schemas.InvoiceGenerationJobListResponse:
    return schemas.InvoiceGenerationJobListResponse.of_page(
        service.generation_jobs(request_context(), locator, query.page()))


@bp.route("/billing/{tenantLocator}/jobs/invoicesLifecycle/{locator}", methods=["GET"])
@endpoint("jobs.read", errors=INVOICE)
def fetch_invoice_lifecycle(tenantLocator: str, locator: str) -> schemas.InvoiceLifecycleResponse:
    """`locator`: the invoice's (its lifecycle has no locator of its own)."""
    return schemas.InvoiceLifecycleResponse.of(service.invoice(request_context(), locator))


@bp.route("/billing/{tenantLocator}/credits/list", methods=["GET"])
@endpoint("credits.read", "credits.list", errors=[codes.NOT_FOUND["account"]])
def list_credits(tenantLocator: str, query: schemas.PaymentListQuery) -> schemas.CreditListResponse:
    """The account's credits (without one, the tenant's): payments once posted (reversed ones too, marked so)."""
    page = service.credits_of_account(request_context(), query.accountLocator, query.page())
    return schemas.CreditListResponse(listCompleted=page.list_completed,
                                      items=[schemas.CreditResponse.of_payment(p) for p in page.items])


# --- payment numbers and requests, installments' times ------------------------------------------------

@bp.route("/billing/{tenantLocator}/payments/{locator}/number/set", methods=["POST"])
@endpoint("payments.write", errors=[*PAYMENT, codes.NUMBER_TAKEN["payment"]])
def set_payment_number(tenantLocator: str, locator: str, query: schemas.PaymentNumberQuery) -> schemas.PaymentResponse:
    return schemas.PaymentResponse.of(payment_lifecycle.set_number(request_context(), locator, query.paymentNumber))


@bp.route("/billing/{tenantLocator}/payments/{locator}/number/generate", methods=["POST"])
@endpoint("payments.write", errors=[*PAYMENT, codes.NO_NUMBERING_PLAN["payment"], codes.NUMBERING_EXHAUSTED,
                                    codes.NUMBERING_INVALID_PLAN])
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


@bp.route("/billing/{tenantLocator}/installments", methods=["PATCH"])
@endpoint("installments.write", errors=[codes.NOT_FOUND["installment"], codes.INSTALLMENT_INVOICED])
def update_installments(tenantLocator: str,
                        body: schemas.PatchInstallmentsRequest) -> list[schemas.InstallmentResponse]:
    return [schemas.InstallmentResponse.of(i) for i in installment_times.retime(
        request_context(), body.installmentLocators, body.generateTime, body.dueTime, body.autopayTime)]


# --- charges ------------------------------------------------------------------------------------------

@bp.route("/billing/{tenantLocator}/accounts/{accountLocator}/charges/list", methods=["GET"])
@endpoint("charges.read", "charges.list", errors=[codes.NOT_FOUND["account"]])
def list_account_charges(tenantLocator: str, accountLocator: str,
                         query: schemas.ListQuery) -> schemas.ChargeListResponse:
    return schemas.ChargeListResponse.of_page(charges.of_account(request_context(), accountLocator, query.page()))


@bp.route("/billing/{tenantLocator}/policies/{policyLocator}/charges/list", methods=["GET"])
@endpoint("charges.read", "charges.list", errors=[codes.NOT_FOUND["policy"]])
def list_policy_charges(tenantLocator: str, policyLocator: str,
                        query: schemas.ListQuery) -> schemas.ChargeListResponse:
    return schemas.ChargeListResponse.of_page(charges.of_policy(request_context(), policyLocator, query.page()))


@bp.route("/billing/{tenantLocator}/transactions/{transactionLocator}/charges/list", methods=["GET"])
@endpoint("charges.read", "charges.list", errors=[codes.NOT_FOUND["transaction"]])
def list_transaction_charges(tenantLocator: str, transactionLocator: str,
                             query: schemas.TransactionChargesQuery) -> schemas.ChargeListResponse:
    return schemas.ChargeListResponse.of_page(charges.of_transaction(
        request_context(), transactionLocator, query.page(), include_all=query.includeAll))
