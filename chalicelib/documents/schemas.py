"""The documents API's requests and answers (spec part 2 "Document records", part 3 "Document jobs"; the
OpenAPI file's DocumentInstanceResponse, DocumentsJob, DocumentsJobSummary)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Json, model_validator

from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListQuery as ListQuery
from chalicelib.core.paging import ListResponse
from chalicelib.documents.models import (
    Document,
    DocumentFields,
    DocumentFormat,
    DocumentsJob,
    DocumentState,
    DocumentTrigger,
    JobStatus,
    ReferenceType,
)
from chalicelib.http.contract import Upload
from chalicelib.http.responses import Binary


class DocumentUpload(Upload):
    """The file of an attach or replace: the raw body, the multipart part `document`, or an upload
    (`?uploadLocator=`)."""

    part = "document"
    purpose = "document"


class DocumentFile(Binary):
    """A rendered or uploaded document (its own media type on the wire)."""


class DocumentListQuery(ListQuery):
    suppressRenderingData: bool = False

    def shown(self, document: Document) -> DocumentInstanceResponse:
        """The document as this list answers it."""
        return DocumentInstanceResponse.of(document, suppress_rendering_data=self.suppressRenderingData)


class TermSummaryQuery(BaseModel):
    offset: int | None = None
    count: int | None = None
    suppressRenderingData: bool = False

    def as_list_query(self) -> DocumentListQuery:
        return DocumentListQuery(offset=self.offset, count=self.count, suppressRenderingData=self.suppressRenderingData)


RENDERING_DATA_RESPONSE_BYTES = 1_000_000
"""The largest rendering data (as stored: DynamoDB's typed JSON, larger than the answer's JSON) an instance's answer
carries; larger is left out (`renderingDataOmitted`), so that a document's answer stays far below Lambda's 6 MB
(the 2.95 MB of a 5,000-item invoice's, and every instance of a list each within it)."""


class DocumentInstanceResponse(Response, DocumentFields):
    createdBy: str | None = None
    size: int | None = None
    """Our extension: the artifact's size in bytes."""
    checksum: str | None = None
    """Our extension: `sha256:` and the artifact's hex digest."""
    renderingDataOmitted: int | None = None
    """Our extension: set when the rendering data is too large to answer (more than RENDERING_DATA_RESPONSE_BYTES as
    stored: a fleet's invoice of thousands of items), its size in bytes as stored; `renderingData` is then `{}`, as
    `suppressRenderingData` answers it. The render still has it whole; an invoice's is the invoice
    (`GET /billing/{t}/invoices/{l}`, with its items) and its summaries (`.../invoices/{l}/details`)."""

    @classmethod
    def of(cls, document: Document, *, suppress_rendering_data: bool = False) -> DocumentInstanceResponse:
        fields = document.model_dump(include=set(cls.model_fields) - {"renderingData"})
        stored = document.stored_rendering_data_bytes
        if stored > RENDERING_DATA_RESPONSE_BYTES:
            fields.update(renderingData={}, renderingDataOmitted=stored)
        elif not suppress_rendering_data:
            fields["renderingData"] = document.renderingData
        if document.artifact is not None:
            fields.update(size=document.artifact.size, checksum=document.artifact.checksum)
        return cls(**fields)


class DocumentListResponse(ListResponse[DocumentInstanceResponse]):
    pass


class AttachQuery(BaseModel):
    referenceLocator: str
    referenceType: ReferenceType
    name: str
    documentFormat: DocumentFormat
    staticName: str | None = None
    metadata: Json[dict[str, Any]] | None = None
    transactionLocator: str | None = None
    segmentLocator: str | None = None
    category: str | None = None
    copyOnIssuance: bool | None = None


class ReplaceQuery(BaseModel):
    metadata: Json[dict[str, Any]] | None = None
    category: str | None = None


class CopyOnIssueQuery(BaseModel):
    deleteAllDocuments: bool = False


class RenderQuery(BaseModel):
    referenceType: ReferenceType
    referenceLocator: str
    productName: str | None = None
    templateFormat: Literal["liquid", "velocity"] | None = None
    documentConfig: str | None = None
    staticName: str | None = None
    templateName: str | None = None


class TemplateRequest(Input):
    """TemplateResponse in the OpenAPI file: the template to render (left out: the named document's), as
    JSON or as the multipart parts `template` (text) or `file` (the template file)."""

    template: str | None = None
    file: str | None = None
    """The template file's text (a multipart part); JSON clients send `template`."""

    @model_validator(mode="after")
    def _one_template(self) -> TemplateRequest:
        if self.template is not None and self.file is not None:
            raise ValueError("send the template once: as `template` or as the file `file`")
        return self

    @property
    def source(self) -> str | None:
        return self.template if self.template is not None else self.file


class DocumentJobInfo(Response):
    locator: str
    staticName: str
    name: str
    documentInstanceState: DocumentState
    processingErrors: str
    state: DocumentState
    """Deprecated in the platform: the same as documentInstanceState."""

    @classmethod
    def of(cls, document: Document) -> DocumentJobInfo:
        return cls(
            locator=document.locator,
            staticName=document.staticName or "",
            name=document.name or "",
            documentInstanceState=document.documentInstanceState,
            processingErrors=document.processingErrors or "",
            state=document.documentInstanceState,
        )


class DocumentsJobResponse(Response):
    locator: str
    referenceType: ReferenceType
    referenceLocator: str
    documentTrigger: DocumentTrigger
    status: JobStatus
    childrenJobs: list[str] = []
    documents: list[DocumentJobInfo]
    processingErrors: str
    createdAt: datetime
    createdBy: str
    completedAt: datetime | None = None
    transactionLocator: str | None = None
    segmentLocator: str | None = None
    isConsolidation: bool = False

    @classmethod
    def of(cls, job: DocumentsJob, documents: list[Document]) -> DocumentsJobResponse:
        fields = job.model_dump(include=set(cls.model_fields) - {"documents", "processingErrors"})
        return cls(
            **fields,
            documents=[DocumentJobInfo.of(document) for document in documents],
            processingErrors=job.processingErrors or "",
        )


class DocumentsJobSummary(Response):
    locator: str
    referenceType: ReferenceType
    status: JobStatus
    createdAt: datetime


class DocumentJobListResponse(ListResponse[DocumentsJobSummary]):
    pass
