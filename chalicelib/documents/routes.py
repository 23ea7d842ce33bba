"""Documents (spec part 2 "Documents") and document jobs (spec part 3 "Document jobs").

API Gateway refuses sibling path variables of different names, so every path below
`/document/{t}/documents/` names its record `{locator}` (the term summary's policy and term excepted,
which have a level of their own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.contract import MULTIPART
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.documents import models, schemas, service
else:
    models, schemas, service = lazy_modules("chalicelib.documents", "models", "schemas", "service")

bp = Blueprint(__name__)

FILE_TYPES = [
    "multipart/form-data",
    "application/octet-stream",
    "application/pdf",
    "application/zip",
    "text/plain",
    "text/html",
    "text/csv",
    "image/jpeg",
]
DOCUMENT = [codes.DOCUMENT_NOT_FOUND]
REFERENCES = [codes.NOT_FOUND[entity] for entity in ("quote", "transaction", "segment", "term", "policy", "invoice")]
JOB = [codes.DOCUMENTS_JOB_NOT_FOUND]
BINARY_TYPES = [
    "application/pdf",
    "application/msword",
    "application/vnd.ms-excel",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
]
"""Media types of documents the app must answer base64-encoded through API Gateway (app.py adds them)."""


def _file(found: service.File) -> schemas.DocumentFile:
    """Text goes out as text; text that is not UTF-8 (an uploaded file) as the bytes it is."""
    if found.media_type.startswith("text/"):
        try:
            return schemas.DocumentFile(found.content.decode("utf-8"), found.media_type, found.filename)
        except UnicodeDecodeError:
            return schemas.DocumentFile(found.content, "application/octet-stream", found.filename)
    return schemas.DocumentFile(found.content, found.media_type, found.filename)


# --- documents -----------------------------------------------------------------------------------------


@bp.route("/document/{tenantLocator}/documents/{locator}", methods=["GET"])
@endpoint("documents.read", errors=DOCUMENT)
def fetch_document(tenantLocator: str, locator: str) -> schemas.DocumentInstanceResponse:
    return schemas.DocumentInstanceResponse.of(service.get_document(request_context(), locator))


@bp.route("/document/{tenantLocator}/documents/{locator}/document", methods=["GET"])
@endpoint("documents.read", errors=[*DOCUMENT, codes.DOCUMENT_NOT_READY, codes.DOCUMENT_ANONYMIZED])
def fetch_document_file(tenantLocator: str, locator: str) -> schemas.DocumentFile:
    return _file(service.artifact(request_context(), locator))


@bp.route("/document/{tenantLocator}/documents/{locator}/source", methods=["GET"])
@endpoint("documents.read", errors=[*DOCUMENT, codes.DOCUMENT_NOT_READY, codes.DOCUMENT_ANONYMIZED])
def fetch_document_source(tenantLocator: str, locator: str) -> schemas.DocumentFile:
    return _file(service.source(request_context(), locator))


@bp.route("/document/{tenantLocator}/documents/policy/{policyLocator}/term/{termLocator}/summary", methods=["GET"])
@endpoint("documents.read", errors=[codes.NOT_FOUND["term"]])
def list_term_documents(
    tenantLocator: str, policyLocator: str, termLocator: str, query: schemas.TermSummaryQuery
) -> schemas.DocumentListResponse:
    page = service.documents_of_term(request_context(), policyLocator, termLocator, query.as_list_query().page())
    return schemas.DocumentListResponse.of(page, query.as_list_query().shown)


@bp.route("/document/{tenantLocator}/documents/segment/{locator}/list", methods=["GET"])
@endpoint("documents.read", errors=[codes.NOT_FOUND["segment"]])
def list_segment_documents(
    tenantLocator: str, locator: str, query: schemas.DocumentListQuery
) -> schemas.DocumentListResponse:
    page = service.documents_of(request_context(), models.ReferenceType.SEGMENT, locator, query.page())
    return schemas.DocumentListResponse.of(page, query.shown)


@bp.route("/document/{tenantLocator}/documents/transaction/{locator}/list", methods=["GET"])
@endpoint("documents.read", errors=[codes.NOT_FOUND["transaction"]])
def list_transaction_documents(
    tenantLocator: str, locator: str, query: schemas.DocumentListQuery
) -> schemas.DocumentListResponse:
    page = service.documents_of(request_context(), models.ReferenceType.TRANSACTION, locator, query.page())
    return schemas.DocumentListResponse.of(page, query.shown)


@bp.route("/document/{tenantLocator}/documents/quote/{locator}/list", methods=["GET"])
@endpoint("documents.read", errors=[codes.NOT_FOUND["quote"]])
def list_quote_documents(
    tenantLocator: str, locator: str, query: schemas.DocumentListQuery
) -> schemas.DocumentListResponse:
    page = service.documents_of(request_context(), models.ReferenceType.QUOTE, locator, query.page())
    return schemas.DocumentListResponse.of(page, query.shown)


@bp.route("/document/{tenantLocator}/documents/invoices/{locator}", methods=["GET"])
@endpoint("documents.read", errors=DOCUMENT)
def fetch_invoice_document(tenantLocator: str, locator: str) -> schemas.DocumentInstanceResponse:
    return schemas.DocumentInstanceResponse.of(service.invoice_document(request_context(), locator))


@bp.route("/document/{tenantLocator}/documents/quote/{locator}/copyOnIssue", methods=["POST"])
@endpoint(
    "documents.trigger",
    errors=[
        codes.NOT_FOUND["quote"],
        codes.NOT_FOUND["policy"],
        codes.NOT_FOUND["transaction"],
        codes.DOCUMENT_QUOTE_NOT_ISSUED,
    ],
)
def copy_documents_on_issue(tenantLocator: str, locator: str, query: schemas.CopyOnIssueQuery) -> None:
    service.copy_on_issue(request_context(), locator, delete_all=query.deleteAllDocuments)


@bp.route("/document/{tenantLocator}/documents/attach", methods=["POST"], content_types=FILE_TYPES)
@endpoint("documents.upload-external", errors=[*REFERENCES, codes.DOCUMENT_REFERENCE_INVALID])
def attach_document(
    tenantLocator: str, body: schemas.DocumentUpload, query: schemas.AttachQuery
) -> schemas.DocumentInstanceResponse:
    attachment = service.Attachment(**query.model_dump())
    return schemas.DocumentInstanceResponse.of(service.attach(request_context(), attachment, body))


@bp.route("/document/{tenantLocator}/documents/{locator}", methods=["PATCH"], content_types=FILE_TYPES)
@endpoint("documents.replace-external", errors=[*DOCUMENT, codes.DOCUMENT_NOT_EXTERNAL])
def replace_document(
    tenantLocator: str, locator: str, body: schemas.DocumentUpload, query: schemas.ReplaceQuery
) -> schemas.DocumentInstanceResponse:
    return schemas.DocumentInstanceResponse.of(
        service.replace(request_context(), locator, body, query.metadata, query.category)
    )


@bp.route("/document/{tenantLocator}/documents/{locator}", methods=["DELETE"])
@endpoint("documents.delete-external", errors=[*DOCUMENT, codes.DOCUMENT_NOT_EXTERNAL])
def delete_document(tenantLocator: str, locator: str) -> None:
    service.delete(request_context(), locator)


@bp.route(
    "/document/{tenantLocator}/documents/render",
    methods=["POST"],
    content_types=["application/json", "multipart/form-data"],
)
@endpoint(
    "documents.render-external",
    errors=[
        *REFERENCES,
        codes.NOT_FOUND["configuration"],
        codes.DOCUMENT_REFERENCE_INVALID,
        codes.DOCUMENT_TEMPLATE_MISSING,
        codes.DOCUMENT_RENDER_FAILED,
    ],
)
def render_document(
    tenantLocator: str, query: schemas.RenderQuery, body: Annotated[schemas.TemplateRequest | None, MULTIPART] = None
) -> schemas.DocumentFile:
    request = service.RenderRequest(
        referenceType=query.referenceType,
        referenceLocator=query.referenceLocator,
        template=body.source if body else None,
        templateFormat=query.templateFormat,
        documentConfig=query.documentConfig or query.templateName,
        staticName=query.staticName,
    )
    return _file(service.render_ad_hoc(request_context(), request))


# --- document jobs -------------------------------------------------------------------------------------


def _job(kind: models.ReferenceType, locator: str, job_locator: str) -> schemas.DocumentsJobResponse:
    ctx = request_context()
    job = service.job_of(ctx, kind, locator, job_locator)
    return schemas.DocumentsJobResponse.of(job, service.jobs_documents(ctx, job))


def _jobs(kind: models.ReferenceType, locator: str, query: schemas.ListQuery) -> schemas.DocumentJobListResponse:
    return schemas.DocumentJobListResponse.of(
        service.jobs_of(request_context(), kind, locator, query.page()), schemas.DocumentsJobSummary.of_record
    )


def _timed_out(kind: models.ReferenceType, locator: str) -> list[schemas.DocumentsJobSummary]:
    return [
        schemas.DocumentsJobSummary.of_record(job)
        for job in service.retrigger_timed_out(request_context(), kind, locator)
    ]


def _failed(kind: models.ReferenceType, locator: str, job_locator: str) -> schemas.DocumentsJobSummary:
    return schemas.DocumentsJobSummary.of_record(
        service.retrigger_failed(request_context(), kind, locator, job_locator)
    )


@bp.route("/document/{tenantLocator}/documents/transaction/{locator}/jobs/{jobLocator}", methods=["GET"])
@endpoint("documents.read", errors=JOB)
def fetch_transaction_documents_job(tenantLocator: str, locator: str, jobLocator: str) -> schemas.DocumentsJobResponse:
    return _job(models.ReferenceType.TRANSACTION, locator, jobLocator)


@bp.route("/document/{tenantLocator}/documents/segment/{locator}/jobs/{jobLocator}", methods=["GET"])
@endpoint("documents.read", errors=JOB)
def fetch_segment_documents_job(tenantLocator: str, locator: str, jobLocator: str) -> schemas.DocumentsJobResponse:
    return _job(models.ReferenceType.SEGMENT, locator, jobLocator)


@bp.route("/document/{tenantLocator}/documents/quote/{locator}/jobs/{jobLocator}", methods=["GET"])
@endpoint("documents.read", errors=JOB)
def fetch_quote_documents_job(tenantLocator: str, locator: str, jobLocator: str) -> schemas.DocumentsJobResponse:
    return _job(models.ReferenceType.QUOTE, locator, jobLocator)


@bp.route("/document/{tenantLocator}/documents/transaction/{locator}/jobs/list", methods=["GET"])
@endpoint("documents.read")
def list_transaction_documents_jobs(
    tenantLocator: str, locator: str, query: schemas.ListQuery
) -> schemas.DocumentJobListResponse:
    return _jobs(models.ReferenceType.TRANSACTION, locator, query)


@bp.route("/document/{tenantLocator}/documents/segment/{locator}/jobs/list", methods=["GET"])
@endpoint("documents.read")
def list_segment_documents_jobs(
    tenantLocator: str, locator: str, query: schemas.ListQuery
) -> schemas.DocumentJobListResponse:
    return _jobs(models.ReferenceType.SEGMENT, locator, query)


@bp.route("/document/{tenantLocator}/documents/quote/{locator}/jobs/list", methods=["GET"])
@endpoint("documents.read")
def list_quote_documents_jobs(
    tenantLocator: str, locator: str, query: schemas.ListQuery
) -> schemas.DocumentJobListResponse:
    return _jobs(models.ReferenceType.QUOTE, locator, query)


@bp.route("/document/{tenantLocator}/documents/transaction/{locator}/trigger", methods=["POST"])
@endpoint("documents.trigger", errors=[codes.NOT_FOUND["transaction"]])
def retrigger_transaction_documents_jobs(tenantLocator: str, locator: str) -> list[schemas.DocumentsJobSummary]:
    return _timed_out(models.ReferenceType.TRANSACTION, locator)


@bp.route("/document/{tenantLocator}/documents/segment/{locator}/trigger", methods=["POST"])
@endpoint("documents.trigger", errors=[codes.NOT_FOUND["segment"]])
def retrigger_segment_documents_jobs(tenantLocator: str, locator: str) -> list[schemas.DocumentsJobSummary]:
    return _timed_out(models.ReferenceType.SEGMENT, locator)


@bp.route("/document/{tenantLocator}/documents/quote/{locator}/trigger", methods=["POST"])
@endpoint("documents.trigger", errors=[codes.NOT_FOUND["quote"]])
def retrigger_quote_documents_jobs(tenantLocator: str, locator: str) -> list[schemas.DocumentsJobSummary]:
    return _timed_out(models.ReferenceType.QUOTE, locator)


@bp.route("/document/{tenantLocator}/documents/transaction/{locator}/jobs/{jobLocator}/trigger", methods=["POST"])
@endpoint("documents.trigger", errors=[*JOB, codes.DOCUMENTS_JOB_NOT_FAILED])
def retrigger_failed_transaction_documents_job(
    tenantLocator: str, locator: str, jobLocator: str
) -> schemas.DocumentsJobSummary:
    return _failed(models.ReferenceType.TRANSACTION, locator, jobLocator)


@bp.route("/document/{tenantLocator}/documents/segment/{locator}/jobs/{jobLocator}/trigger", methods=["POST"])
@endpoint("documents.trigger", errors=[*JOB, codes.DOCUMENTS_JOB_NOT_FAILED])
def retrigger_failed_segment_documents_job(
    tenantLocator: str, locator: str, jobLocator: str
) -> schemas.DocumentsJobSummary:
    return _failed(models.ReferenceType.SEGMENT, locator, jobLocator)


@bp.route("/document/{tenantLocator}/documents/quote/{locator}/jobs/{jobLocator}/trigger", methods=["POST"])
@endpoint("documents.trigger", errors=[*JOB, codes.DOCUMENTS_JOB_NOT_FAILED])
def retrigger_failed_quote_documents_job(
    tenantLocator: str, locator: str, jobLocator: str
) -> schemas.DocumentsJobSummary:
    return _failed(models.ReferenceType.QUOTE, locator, jobLocator)


@bp.route("/document/{tenantLocator}/documents/invoices/{locator}/jobs/{jobLocator}/trigger", methods=["POST"])
@endpoint("documents.trigger", errors=[*JOB, codes.DOCUMENTS_JOB_NOT_FAILED])
def retrigger_failed_invoice_documents_job(
    tenantLocator: str, locator: str, jobLocator: str
) -> schemas.DocumentsJobSummary:
    return _failed(models.ReferenceType.INVOICE, locator, jobLocator)
