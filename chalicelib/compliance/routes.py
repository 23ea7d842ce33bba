"""Anonymization (the reference OpenAPI definition's compliance operations, and spec part 3's job fetch):
start, preview, where referenced records stand, and the jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.compliance import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.compliance", "schemas", "service")

bp = Blueprint(__name__)

REFERENCES = [
    codes.ANONYMIZATION_UNSUPPORTED_REFERENCE,
    *(codes.NOT_FOUND[kind] for kind in ("account", "quote", "policy", "payment", "contact")),
]


def _started(body: schemas.AnonymizationRequest) -> list[schemas.AnonymizationJobData]:
    return [
        schemas.AnonymizationJobData.of(job, current)
        for job, current in service.start(request_context(), body.request())
    ]


def anonymize_again(tenantLocator: str, body: schemas.AnonymizationRequest) -> list[schemas.AnonymizationJobData]:
    """A keyed anonymize whose answer was lost after it committed: the jobs it started (and those of its other
    reference types it did not get to), as its own (service.start)."""
    return _started(body)


@bp.route("/compliance/{tenantLocator}/anonymize", methods=["POST"])
@endpoint("compliance.write", idempotent=True, replay=anonymize_again, errors=REFERENCES)
def anonymize_data(tenantLocator: str, body: schemas.AnonymizationRequest) -> list[schemas.AnonymizationJobData]:
    return _started(body)


@bp.route("/compliance/{tenantLocator}/preview", methods=["GET"])
@endpoint("compliance.read", errors=REFERENCES)
def preview_anonymization(
    tenantLocator: str, query: schemas.AnonymizationQuery
) -> list[schemas.AnonymizationPreviewResponse]:
    return [
        schemas.AnonymizationPreviewResponse(
            referenceType=kind, references=[schemas.AnonymizationReferencePreviewResponse.of(a) for a in found]
        )
        for kind, found in service.preview(request_context(), query.request()).items()
    ]


@bp.route("/compliance/{tenantLocator}/references", methods=["GET"])
@endpoint("compliance.read", errors=REFERENCES)
def get_anonymization_references(
    tenantLocator: str, query: schemas.ReferencesQuery
) -> list[schemas.AnonymizationReferenceResponse]:
    return [
        schemas.AnonymizationReferenceResponse.of(reference, children)
        for reference, children in service.reference_states(request_context(), query.named())
    ]


@bp.route("/compliance/{tenantLocator}/jobs", methods=["GET"])
@endpoint("compliance.read", errors=[codes.ANONYMIZATION_JOB_NOT_FOUND])
def fetch_anonymization_jobs(tenantLocator: str, query: schemas.JobsQuery) -> list[schemas.AnonymizationJobResponse]:
    return [schemas.AnonymizationJobResponse.of(job) for job in service.jobs_of(request_context(), query.jobLocators)]
