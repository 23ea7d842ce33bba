"""Installment lattices, installments, the billing jobs that make them, installments' times and the
charges billing bills (from the OpenAPI definition)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.billing.installments import charges, installment_times, schemas, service
else:
    charges, installment_times, schemas, service = lazy_modules(
        "chalicelib.billing.installments", "charges", "installment_times", "schemas", "service"
    )

bp = Blueprint(__name__)


@bp.route("/billing/{tenantLocator}/installmentLattices/{installmentLatticeLocator}", methods=["GET"])
@endpoint("installment-lattices.read", errors=[codes.NOT_FOUND["installmentLattice"]])
def fetch_lattice(tenantLocator: str, installmentLatticeLocator: str) -> schemas.InstallmentLatticeResponse:
    return schemas.InstallmentLatticeResponse.of_record(
        service.lattice_of(request_context(), installmentLatticeLocator)
    )


@bp.route("/billing/{tenantLocator}/installmentLattices/quotes/{quoteLocator}", methods=["GET"])
@endpoint("installment-lattices.read", errors=[codes.NOT_FOUND["installmentLattice"]])
def fetch_quote_lattice(tenantLocator: str, quoteLocator: str) -> schemas.InstallmentLatticeResponse:
    return schemas.InstallmentLatticeResponse.of_record(
        service.latest_lattice_of_quote(request_context(), quoteLocator)
    )


@bp.route("/billing/{tenantLocator}/installmentLattices/policies/{policyLocator}/list", methods=["GET"])
@endpoint("installment-lattices.read", "installment-lattices.list")
def list_policy_lattices(
    tenantLocator: str, policyLocator: str, query: schemas.ListQuery
) -> schemas.InstallmentLatticeListResponse:
    return schemas.InstallmentLatticeListResponse.of(
        service.lattices_of_policy(request_context(), policyLocator, query.page()),
        schemas.InstallmentLatticeResponse.of_record,
    )


@bp.route("/billing/{tenantLocator}/installments/{installmentLocator}", methods=["GET"])
@endpoint("installments.read", errors=[codes.NOT_FOUND["installment"]])
def fetch_installment(tenantLocator: str, installmentLocator: str) -> schemas.InstallmentResponse:
    return schemas.InstallmentResponse.of(service.installment(request_context(), installmentLocator))


@bp.route("/billing/{tenantLocator}/installments/policies/{policyLocator}/list", methods=["GET"])
@endpoint("installments.read", "installments.list")
def list_policy_installments(
    tenantLocator: str, policyLocator: str, query: schemas.ListQuery
) -> schemas.InstallmentListResponse:
    return schemas.InstallmentListResponse.of(
        service.installments_of(request_context(), "policy", policyLocator, query.page()),
        schemas.InstallmentResponse.of,
    )


@bp.route("/billing/{tenantLocator}/installments/quotes/{quoteLocator}/list", methods=["GET"])
@endpoint("installments.read", "installments.list")
def list_quote_installments(
    tenantLocator: str, quoteLocator: str, query: schemas.ListQuery
) -> schemas.InstallmentListResponse:
    return schemas.InstallmentListResponse.of(
        service.installments_of(request_context(), "quote", quoteLocator, query.page()), schemas.InstallmentResponse.of
    )


@bp.route("/billing/{tenantLocator}/installments/transactions/{transactionLocator}/list", methods=["GET"])
@endpoint("installments.read", "installments.list")
def list_transaction_installments(
    tenantLocator: str, transactionLocator: str, query: schemas.ListQuery
) -> schemas.InstallmentListResponse:
    return schemas.InstallmentListResponse.of(
        service.installments_of(request_context(), "transaction", transactionLocator, query.page()),
        schemas.InstallmentResponse.of,
    )


@bp.route("/billing/{tenantLocator}/jobs/installments/quotes/{locator}/list", methods=["GET"])
@endpoint("jobs.read", "jobs.list")
def list_quote_installment_jobs(
    tenantLocator: str, locator: str, query: schemas.ListQuery
) -> schemas.InstallmentJobDataListResponse:
    return schemas.InstallmentJobDataListResponse.of(
        service.installment_jobs(request_context(), "quote", locator, query.page()), schemas.InstallmentJobData.of
    )


@bp.route("/billing/{tenantLocator}/jobs/installments/transactions/{locator}/list", methods=["GET"])
@endpoint("jobs.read", "jobs.list")
def list_transaction_installment_jobs(
    tenantLocator: str, locator: str, query: schemas.ListQuery
) -> schemas.InstallmentJobDataListResponse:
    return schemas.InstallmentJobDataListResponse.of(
        service.installment_jobs(request_context(), "transaction", locator, query.page()), schemas.InstallmentJobData.of
    )


@bp.route("/billing/{tenantLocator}/retryJobs/{policyLocator}/retryFailedTransactions", methods=["POST"])
@endpoint("retry-jobs.write", errors=[codes.NOT_FOUND["policy"]])
def retry_failed_transactions(tenantLocator: str, policyLocator: str) -> schemas.InstallmentJobDataListResponse:
    retried = service.retry_failed(request_context(), policyLocator)
    return schemas.InstallmentJobDataListResponse(
        listCompleted=True, items=[schemas.InstallmentJobData.of(j) for j in retried]
    )


@bp.route("/billing/{tenantLocator}/installments", methods=["PATCH"])
@endpoint("installments.write", errors=[codes.NOT_FOUND["installment"], codes.INSTALLMENT_INVOICED])
def update_installments(
    tenantLocator: str, body: schemas.PatchInstallmentsRequest
) -> list[schemas.InstallmentResponse]:
    return [
        schemas.InstallmentResponse.of(i)
        for i in installment_times.retime(
            request_context(), body.installmentLocators, body.generateTime, body.dueTime, body.autopayTime
        )
    ]


@bp.route("/billing/{tenantLocator}/accounts/{accountLocator}/charges/list", methods=["GET"])
@endpoint("charges.read", "charges.list", errors=[codes.NOT_FOUND["account"]])
def list_account_charges(
    tenantLocator: str, accountLocator: str, query: schemas.ListQuery
) -> schemas.ChargeListResponse:
    return schemas.ChargeListResponse.of(
        charges.of_account(request_context(), accountLocator, query.page()), schemas.ChargeResponse.of
    )


@bp.route("/billing/{tenantLocator}/policies/{policyLocator}/charges/list", methods=["GET"])
@endpoint("charges.read", "charges.list", errors=[codes.NOT_FOUND["policy"]])
def list_policy_charges(tenantLocator: str, policyLocator: str, query: schemas.ListQuery) -> schemas.ChargeListResponse:
    return schemas.ChargeListResponse.of(
        charges.of_policy(request_context(), policyLocator, query.page()), schemas.ChargeResponse.of
    )


@bp.route("/billing/{tenantLocator}/transactions/{transactionLocator}/charges/list", methods=["GET"])
@endpoint("charges.read", "charges.list", errors=[codes.NOT_FOUND["transaction"]])
def list_transaction_charges(
    tenantLocator: str, transactionLocator: str, query: schemas.TransactionChargesQuery
) -> schemas.ChargeListResponse:
    return schemas.ChargeListResponse.of(
        charges.of_transaction(request_context(), transactionLocator, query.page(), include_all=query.includeAll),
        schemas.ChargeResponse.of,
    )
