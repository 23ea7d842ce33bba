"""The documents job (`documents.generate`): see service.generate."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chalicelib.core.context import CallContext
from chalicelib.documents import service
from chalicelib.documents.models import DocumentTrigger, ReferenceType
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler


class Generate(BaseModel):
    jobLocator: str
    referenceType: ReferenceType
    referenceLocator: str
    trigger: DocumentTrigger


@job_handler(JobType.DOCUMENTS_GENERATE, payload=Generate)
def generate(ctx: CallContext, payload: Generate) -> dict[str, Any]:
    return service.generate(ctx, payload.jobLocator, payload.referenceType, payload.referenceLocator, payload.trigger)
