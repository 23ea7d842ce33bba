"""Delinquencies (OpenAPI definition: fetch, update, lists per account, policy and invoice, events and
their update) and the delinquency job reads of spec part 3. Paths below `/delinquencies/` name the
delinquency `{locator}` (API Gateway refuses sibling path variables of different names)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.billing.delinquency import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.billing.delinquency", "schemas", "service")

bp = Blueprint(__name__)

DELINQUENCY = [codes.NOT_FOUND_DELINQUENCY_AND_HOLDS["delinquency"]]
EVENT = [codes.NOT_FOUND_DELINQUENCY_AND_HOLDS["delinquencyEvent"]]
CHANGING = [codes.DELINQUENCY_INVALID_STATE, codes.DELINQUENCY_INVALID_TIME]


@bp.route("/billing/{tenantLocator}/delinquencies/{locator}", methods=["GET"])
@endpoint("delinquencies.read", errors=DELINQUENCY)
def fetch_delinquency(tenantLocator: str, locator: str) -> schemas.DelinquencyResponse:
    return schemas.DelinquencyResponse.of_record(service.delinquency(request_context(), locator))


@bp.route("/billing/{tenantLocator}/delinquencies/{locator}", methods=["PATCH"])
@endpoint("delinquencies.write", errors=[*DELINQUENCY, *CHANGING])
def update_delinquency(
    tenantLocator: str, locator: str, body: schemas.DelinquencyUpdateRequest
) -> schemas.DelinquencyResponse:
    return schemas.DelinquencyResponse.of_record(
        service.update_delinquency(request_context(), locator, body.graceEndAt)
    )


@bp.route("/billing/{tenantLocator}/delinquencies/accounts/{accountLocator}/list", methods=["GET"])
@endpoint("delinquencies.read", "delinquencies.list")
def list_account_delinquencies(
    tenantLocator: str, accountLocator: str, query: schemas.ListQuery
) -> schemas.DelinquencyListResponse:
    return schemas.DelinquencyListResponse.of(
        service.delinquencies_of_account(request_context(), accountLocator, query.page()),
        schemas.DelinquencyResponse.of_record,
    )


@bp.route("/billing/{tenantLocator}/delinquencies/policies/{policyLocator}/list", methods=["GET"])
@endpoint("delinquencies.read", "delinquencies.list")
def list_policy_delinquencies(
    tenantLocator: str, policyLocator: str, query: schemas.ListQuery
) -> schemas.DelinquencyListResponse:
    return schemas.DelinquencyListResponse.of(
        service.delinquencies_of(request_context(), "policy", policyLocator, query.page()),
        schemas.DelinquencyResponse.of_record,
    )


@bp.route("/billing/{tenantLocator}/delinquencies/invoices/{invoiceLocator}/list", methods=["GET"])
@endpoint("delinquencies.read", "delinquencies.list")
def list_invoice_delinquencies(
    tenantLocator: str, invoiceLocator: str, query: schemas.ListQuery
) -> schemas.DelinquencyListResponse:
    return schemas.DelinquencyListResponse.of(
        service.delinquencies_of(request_context(), "invoice", invoiceLocator, query.page()),
        schemas.DelinquencyResponse.of_record,
    )


@bp.route("/billing/{tenantLocator}/delinquencies/{locator}/events/list", methods=["GET"])
@endpoint("delinquencies.read", "delinquencies.list", errors=DELINQUENCY)
def list_delinquency_events(
    tenantLocator: str, locator: str, query: schemas.ListQuery
) -> schemas.DelinquencyEventsResponse:
    record, page = service.events_of(request_context(), locator, query.page())
    return schemas.DelinquencyEventsResponse.of(
        page,
        schemas.DelinquencyEventResponse.of_record,
        accountLocator=record.accountLocator,
        delinquencyLocator=record.locator,
    )


@bp.route("/billing/{tenantLocator}/delinquencies/events/{delinquencyEventLocator}", methods=["GET"])
@endpoint("delinquencies.read", errors=EVENT)
def fetch_delinquency_event(tenantLocator: str, delinquencyEventLocator: str) -> schemas.DelinquencyEventResponse:
    return schemas.DelinquencyEventResponse.of_record(
        service.delinquency_event(request_context(), delinquencyEventLocator)
    )


@bp.route("/billing/{tenantLocator}/delinquencies/events/{delinquencyEventLocator}", methods=["PATCH"])
@endpoint("delinquencies.write", errors=[*EVENT, *CHANGING])
def update_delinquency_event(
    tenantLocator: str, delinquencyEventLocator: str, body: schemas.DelinquencyEventUpdateRequest
) -> schemas.DelinquencyEventResponse:
    return schemas.DelinquencyEventResponse.of_record(
        service.update_event(request_context(), delinquencyEventLocator, body.triggerTime, body.delinquencyEventState)
    )


# --- jobs (spec part 3) ----------------------------------------------------------------------------


@bp.route("/billing/{tenantLocator}/jobs/delinquencies/{delinquencyLocator}/list", methods=["GET"])
@endpoint("jobs.read", "jobs.list")
def list_grace_jobs(
    tenantLocator: str, delinquencyLocator: str, query: schemas.ListQuery
) -> schemas.GraceJobDataListResponse:
    return schemas.GraceJobDataListResponse.of(
        service.grace_jobs(request_context(), delinquencyLocator, query.page()), schemas.GraceJobData.of_record
    )


@bp.route("/billing/{tenantLocator}/jobs/delinquencies/invoices/{invoiceLocator}/list", methods=["GET"])
@endpoint("jobs.read", "jobs.list")
def list_delinquency_create_jobs(
    tenantLocator: str, invoiceLocator: str, query: schemas.ListQuery
) -> schemas.DelinquencyCreateJobDataListResponse:
    return schemas.DelinquencyCreateJobDataListResponse.of(
        service.create_jobs(request_context(), invoiceLocator, query.page()), schemas.DelinquencyCreateJobData.of_record
    )


@bp.route("/billing/{tenantLocator}/jobs/delinquencies/{delinquencyLocator}/events/list", methods=["GET"])
@endpoint("jobs.read", "jobs.list")
def list_delinquency_event_jobs(
    tenantLocator: str, delinquencyLocator: str, query: schemas.ListQuery
) -> schemas.DelinquencyEventJobDataListResponse:
    return schemas.DelinquencyEventJobDataListResponse.of(
        service.event_jobs(request_context(), delinquencyLocator, query.page()),
        schemas.DelinquencyEventJobData.of_record,
    )
