"""Schedules on quotes and transactions (spec part 2; each row twice, group quotes and group
transactions) and deserialization jobs (spec part 3).

API Gateway refuses sibling path variables of different names, so the job list names its job type
`{locator}` as the job fetch names the job (an unknown job type lists no jobs); clients never see
variable names. File uploads take the raw body or the `file` part of a multipart/form-data body.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context, uploaded_file_name

if TYPE_CHECKING:
    from chalicelib.schedules import models, schemas, service
else:
    models, schemas, service = lazy_modules("chalicelib.schedules", "models", "schemas", "service")

bp = Blueprint(__name__)

UPLOAD_TYPES = ["multipart/form-data", "text/csv", "application/json", "application/octet-stream", "application/zip"]
QUOTE_READ = [codes.NOT_FOUND["quote"], codes.SCHEDULE_NOT_FOUND]
QUOTE_WRITE = [*QUOTE_READ, codes.NOT_DRAFT["quote"], codes.SCHEDULE_TOO_MANY_ITEMS]
TRANSACTION_READ = [codes.NOT_FOUND["transaction"], codes.NOT_FOUND["segment"], codes.SCHEDULE_NOT_FOUND]
TRANSACTION_WRITE = [*TRANSACTION_READ, codes.NOT_DRAFT["transaction"], codes.SCHEDULE_TOO_MANY_ITEMS]
REWRITES = [codes.SCHEDULE_ITEM_NOT_FOUND, codes.SCHEDULE_BUSY]
FILES = [codes.SCHEDULE_FILE_INVALID, codes.SCHEDULE_NESTED_COLUMN]
JOB = [codes.DESERIALIZATION_JOB_NOT_FOUND]


def _owner(kind: models.OwnerKind, locator: str, static_element_locator: str) -> models.Owner:
    return models.Owner(kind=kind, locator=locator, staticElementLocator=static_element_locator)


# --- quotes ----------------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/quotes/{locator}/schedules", methods=["GET"])
@endpoint("quotes.read", "quotes.schedule-read", errors=[codes.NOT_FOUND["quote"]])
def list_quote_schedules(tenantLocator: str, locator: str) -> schemas.ElementSchedules:
    return schemas.ElementSchedules.of(service.descriptions(request_context(), "quote", locator))


@bp.route("/policy/{tenantLocator}/quotes/{locator}/schedules/{staticElementLocator}", methods=["GET"])
@endpoint("quotes.read", "quotes.schedule-read", errors=QUOTE_READ)
def fetch_quote_schedule_items(
    tenantLocator: str, locator: str, staticElementLocator: str, query: schemas.ItemsQuery
) -> schemas.ScheduleItemsResponse:
    return schemas.ScheduleItemsResponse.of(
        service.items_page(request_context(), _owner("quote", locator, staticElementLocator), query.lastSeenLocator)
    )


@bp.route(
    "/policy/{tenantLocator}/quotes/{locator}/schedules/{staticElementLocator}/deserialize",
    methods=["POST"],
    content_types=UPLOAD_TYPES,
)
@endpoint("quotes.write", "quotes.schedule-add", idempotent=True, errors=[*QUOTE_WRITE, *FILES])
def deserialize_quote_schedule(
    tenantLocator: str,
    locator: str,
    staticElementLocator: str,
    body: schemas.ScheduleFile,
    query: schemas.DeserializeQuery,
) -> schemas.DeserializationResponse:
    return schemas.DeserializationResponse(
        jobLocator=service.start_deserialization(
            request_context(), _owner("quote", locator, staticElementLocator), body, uploaded_file_name(), query.params
        )
    )


@bp.route("/policy/{tenantLocator}/quotes/{locator}/schedules/{staticElementLocator}", methods=["PUT"])
@endpoint("quotes.write", "quotes.schedule-add", idempotent=True, errors=QUOTE_WRITE)
def add_quote_schedule_items(
    tenantLocator: str, locator: str, staticElementLocator: str, body: schemas.AddScheduleItemRequests
) -> schemas.ValidationResult:
    return service.add_items(
        request_context(), _owner("quote", locator, staticElementLocator), [entry.data for entry in body.root]
    )


@bp.route(
    "/policy/{tenantLocator}/quotes/{locator}/schedules/{staticElementLocator}",
    methods=["POST"],
    content_types=UPLOAD_TYPES,
)
@endpoint("quotes.write", "quotes.schedule-add", idempotent=True, errors=[*QUOTE_WRITE, *FILES])
def upload_quote_schedule_items(
    tenantLocator: str, locator: str, staticElementLocator: str, body: schemas.ScheduleFile
) -> schemas.ValidationResult:
    return service.upload_csv(request_context(), _owner("quote", locator, staticElementLocator), body)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/schedules/{staticElementLocator}", methods=["DELETE"])
@endpoint("quotes.write", "quotes.schedule-delete", errors=[*QUOTE_WRITE, *REWRITES])
def delete_quote_schedule_items(
    tenantLocator: str, locator: str, staticElementLocator: str, body: schemas.ItemLocators
) -> None:
    service.delete_items(request_context(), _owner("quote", locator, staticElementLocator), body.root)


@bp.route("/policy/{tenantLocator}/quotes/{locator}/schedules/{staticElementLocator}", methods=["PATCH"])
@endpoint("quotes.write", "quotes.schedule-update", errors=[*QUOTE_WRITE, *REWRITES])
def update_quote_schedule_items(
    tenantLocator: str, locator: str, staticElementLocator: str, body: schemas.PatchScheduleItemRequests
) -> schemas.ValidationResult:
    return service.patch_items(
        request_context(), _owner("quote", locator, staticElementLocator), [entry.patch() for entry in body.root]
    )


# --- transactions ----------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/transactions/{locator}/schedules", methods=["GET"])
@endpoint(
    "transactions.read",
    "transactions.schedule-read",
    errors=[codes.NOT_FOUND["transaction"], codes.NOT_FOUND["segment"]],
)
def list_transaction_schedules(tenantLocator: str, locator: str) -> schemas.ElementSchedules:
    return schemas.ElementSchedules.of(service.descriptions(request_context(), "transaction", locator))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/schedules/{staticElementLocator}", methods=["GET"])
@endpoint("transactions.read", "transactions.schedule-read", errors=TRANSACTION_READ)
def fetch_transaction_schedule_items(
    tenantLocator: str, locator: str, staticElementLocator: str, query: schemas.ItemsQuery
) -> schemas.ScheduleItemsResponse:
    return schemas.ScheduleItemsResponse.of(
        service.items_page(
            request_context(), _owner("transaction", locator, staticElementLocator), query.lastSeenLocator
        )
    )


@bp.route(
    "/policy/{tenantLocator}/transactions/{locator}/schedules/{staticElementLocator}/deserialize",
    methods=["POST"],
    content_types=UPLOAD_TYPES,
)
@endpoint("transactions.write", "transactions.schedule-add", idempotent=True, errors=[*TRANSACTION_WRITE, *FILES])
def deserialize_transaction_schedule(
    tenantLocator: str,
    locator: str,
    staticElementLocator: str,
    body: schemas.ScheduleFile,
    query: schemas.DeserializeQuery,
) -> schemas.DeserializationResponse:
    return schemas.DeserializationResponse(
        jobLocator=service.start_deserialization(
            request_context(),
            _owner("transaction", locator, staticElementLocator),
            body,
            uploaded_file_name(),
            query.params,
        )
    )


@bp.route("/policy/{tenantLocator}/transactions/{locator}/schedules/{staticElementLocator}", methods=["PUT"])
@endpoint("transactions.write", "transactions.schedule-add", idempotent=True, errors=TRANSACTION_WRITE)
def add_transaction_schedule_items(
    tenantLocator: str, locator: str, staticElementLocator: str, body: schemas.AddScheduleItemRequests
) -> schemas.ValidationResult:
    return service.add_items(
        request_context(), _owner("transaction", locator, staticElementLocator), [entry.data for entry in body.root]
    )


@bp.route(
    "/policy/{tenantLocator}/transactions/{locator}/schedules/{staticElementLocator}",
    methods=["POST"],
    content_types=UPLOAD_TYPES,
)
@endpoint("transactions.write", "transactions.schedule-add", idempotent=True, errors=[*TRANSACTION_WRITE, *FILES])
def upload_transaction_schedule_items(
    tenantLocator: str, locator: str, staticElementLocator: str, body: schemas.ScheduleFile
) -> schemas.ValidationResult:
    return service.upload_csv(request_context(), _owner("transaction", locator, staticElementLocator), body)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/schedules/{staticElementLocator}", methods=["DELETE"])
@endpoint("transactions.write", "transactions.schedule-delete", errors=[*TRANSACTION_WRITE, *REWRITES])
def delete_transaction_schedule_items(
    tenantLocator: str, locator: str, staticElementLocator: str, body: schemas.ItemLocators
) -> None:
    service.delete_items(request_context(), _owner("transaction", locator, staticElementLocator), body.root)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/schedules/{staticElementLocator}", methods=["PATCH"])
@endpoint("transactions.write", "transactions.schedule-update", errors=[*TRANSACTION_WRITE, *REWRITES])
def update_transaction_schedule_items(
    tenantLocator: str, locator: str, staticElementLocator: str, body: schemas.PatchScheduleItemRequests
) -> schemas.ValidationResult:
    return service.patch_items(
        request_context(), _owner("transaction", locator, staticElementLocator), [entry.patch() for entry in body.root]
    )


# --- deserialization jobs --------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/deserializeJobs/{locator}/list", methods=["GET"])
@endpoint("deserializeJobs.read", "deserializeJobs.list")
def list_deserialization_jobs(
    tenantLocator: str, locator: str, query: schemas.DeserializationJobListQuery
) -> schemas.DeserializationJobListResponse:
    """`{locator}`: the job type (`scheduleItems`); `state`: any of the job states (repeated)."""
    return schemas.DeserializationJobListResponse.of(
        service.deserialization_jobs(request_context(), locator, query.state, query.page()),
        schemas.DeserializationJobResponse.of,
    )


@bp.route("/policy/{tenantLocator}/deserializeJobs/{locator}", methods=["GET"])
@endpoint("deserializeJobs.read", errors=JOB)
def fetch_deserialization_job(tenantLocator: str, locator: str) -> schemas.DeserializationJobResponse:
    return schemas.DeserializationJobResponse.of(service.deserialization_job(request_context(), locator))


@bp.route("/policy/{tenantLocator}/deserializeJobs/{locator}/terminate", methods=["PATCH"])
@endpoint("deserializeJobs.write", errors=[*JOB, codes.DESERIALIZATION_JOB_INVALID_STATE])
def terminate_deserialization_job(tenantLocator: str, locator: str) -> None:
    service.terminate(request_context(), locator)


@bp.route("/policy/{tenantLocator}/deserializeJobs/{locator}/restart", methods=["PATCH"])
@endpoint("deserializeJobs.write", errors=[*JOB, codes.DESERIALIZATION_JOB_INVALID_STATE])
def restart_deserialization_job(tenantLocator: str, locator: str) -> None:
    service.restart(request_context(), locator)
