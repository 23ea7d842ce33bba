"""Document instances and documents jobs as stored (DECISIONS.md "Documents"; spec part 2 "Document
records", part 3 "Document jobs"). The responses are these models. A generated instance moves
draft -> dataReady (its rendering data gathered) -> ready, or to dataError / renderError /
conversionError with `processingErrors`; an attached (external) one is ready when stored.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, PrivateAttr

ENTITY = "document"


class DocumentState(StrEnum):
    DRAFT = "draft"
    DATA_READY = "dataReady"
    READY = "ready"
    DATA_ERROR = "dataError"
    RENDER_ERROR = "renderError"
    CONVERSION_ERROR = "conversionError"


FAILED_STATES = frozenset({DocumentState.DATA_ERROR, DocumentState.RENDER_ERROR, DocumentState.CONVERSION_ERROR})


class ReferenceType(StrEnum):
    QUOTE = "quote"
    POLICY = "policy"
    INVOICE = "invoice"
    TRANSACTION = "transaction"
    SEGMENT = "segment"
    TERM = "term"


class DocumentFormat(StrEnum):
    TEXT = "text"
    HTML = "html"
    PDF = "pdf"
    JPG = "jpg"
    JPEG = "jpeg"
    DOC = "doc"
    DOCX = "docx"
    XLS = "xls"
    XLSX = "xlsx"
    CSV = "csv"
    TXT = "txt"
    ZIP = "zip"


MEDIA_TYPES = {
    DocumentFormat.TEXT: "text/plain; charset=utf-8",
    DocumentFormat.TXT: "text/plain; charset=utf-8",
    DocumentFormat.HTML: "text/html; charset=utf-8",
    DocumentFormat.PDF: "application/pdf",
    DocumentFormat.JPG: "image/jpeg",
    DocumentFormat.JPEG: "image/jpeg",
    DocumentFormat.CSV: "text/csv",
    DocumentFormat.DOC: "application/msword",
    DocumentFormat.DOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    DocumentFormat.XLS: "application/vnd.ms-excel",
    DocumentFormat.XLSX: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    DocumentFormat.ZIP: "application/zip",
}


class DocumentTrigger(StrEnum):
    VALIDATED = "validated"
    PRICED = "priced"
    UNDERWRITTEN = "underwritten"
    ACCEPTED = "accepted"
    ISSUED = "issued"
    GENERATED = "generated"


class Artifact(BaseModel):
    """Where an instance's rendered or uploaded file is (S3 path under the tenant), and what it is."""

    path: str
    size: int
    checksum: str
    """`sha256:` and the hex digest of the bytes."""
    mediaType: str


class DocumentFields(BaseModel):
    """What an instance's record and its answer (documents/schemas.py's DocumentInstanceResponse) share, in the
    answer's order."""

    locator: str
    referenceLocator: str
    referenceType: ReferenceType
    documentInstanceState: DocumentState
    documentFormat: DocumentFormat
    external: bool
    createdAt: datetime
    consolidatedFrom: list[str] = []
    consolidatedTo: list[str] = []
    metadata: dict[str, Any] = {}
    renderingData: dict[str, Any] = {}
    policyLocator: str | None = None
    termLocator: str | None = None
    transactionLocator: str | None = None
    segmentLocator: str | None = None
    referenceDocumentLocator: str | None = None
    staticName: str | None = None
    name: str | None = None
    category: str | None = None
    processingErrors: str | None = None
    copyOnIssuance: bool | None = None
    readyAt: datetime | None = None


class Document(DocumentFields):
    createdBy: str | None = None
    jobLocator: str | None = None
    """The documents job that generates it (generated instances only)."""
    artifact: Artifact | None = None
    source: str | None = None
    """The template it was rendered from (generated instances only)."""
    anonymizedAt: datetime | None = None
    """When its record's personal data was replaced: its rendering data, metadata and name replaced, and its file
    rendered again from them (an attached file removed; a prerendered one is the package's, nobody's data)."""
    version: int = 1
    _stored_rendering_data_bytes: int = PrivateAttr(default=0)
    """Read, not stored: the size of its rendering data's object in S3 when it is kept there (0: on its record,
    at most documents/repository.py's RENDERING_DATA_INLINE_BYTES)."""

    @property
    def stored_rendering_data_bytes(self) -> int:
        return self._stored_rendering_data_bytes

    def with_stored_rendering_data_bytes(self, size: int) -> Document:
        self._stored_rendering_data_bytes = size
        return self


class JobStatus(StrEnum):
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


class DocumentsJob(BaseModel):
    """One generation at one trigger for one record: renders the instances it lists."""

    locator: str
    referenceType: ReferenceType
    referenceLocator: str
    documentTrigger: DocumentTrigger
    status: JobStatus
    documents: list[str]
    """The instances it generates, by locator."""
    createdAt: datetime
    createdBy: str | None = None
    updatedAt: datetime | None = None
    completedAt: datetime | None = None
    processingErrors: str | None = None
    transactionLocator: str | None = None
    segmentLocator: str | None = None
    attempts: int = 0
    version: int = 1


class Reference(BaseModel):
    """The record a document belongs to, with the policy, term, transaction and segment it names."""

    referenceType: ReferenceType
    referenceLocator: str
    productName: str | None = None
    configVersion: str | None = None
    policyLocator: str | None = None
    termLocator: str | None = None
    transactionLocator: str | None = None
    segmentLocator: str | None = None
