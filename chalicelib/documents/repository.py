"""Persistence of document instances, documents jobs and their artifacts.

An instance is one item (`DOC#{locator}`) listed through the overloaded indexes: GSI1 by the record it
belongs to (quote, transaction, invoice, ...), GSI2 by segment, GSI3 by term; each in creation order
(locators are ULIDs). A documents job is one item (`DOCJOB#{locator}`) listed by GSI1 under its record.
Rendered and uploaded files live in S3 under `documents/{locator}/`, one object per instance. So does an
instance's rendering data when it is larger than RENDERING_DATA_INLINE_BYTES (a fleet's invoice: thousands of
items, megabytes; an item holds 400 KB): `documents/{locator}/rendering-data.json`, the record naming it
(`renderingDataPath`) with empty `renderingData`; every read of the instance reads it back, so readers see the
same instance either way.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from chalicelib.core.paging import Page, PageRequest
from chalicelib.documents.models import Artifact, Document, DocumentsJob
from chalicelib.storage import blobs, codec, keys, query, table
from chalicelib.storage.keys import Key
from chalicelib.storage.unit_of_work import UnitOfWork
from chalicelib.storage.versioned import rewrite


def _scope(tenant: str) -> str:
    return keys.tenant_scope(tenant)


def _document_key(tenant: str, locator: str) -> Key:
    return Key(f"{_scope(tenant)}DOC#{locator}")


def _job_key(tenant: str, locator: str) -> Key:
    return Key(f"{_scope(tenant)}DOCJOB#{locator}")


def _of_reference(tenant: str, reference_type: str, reference_locator: str) -> str:
    return f"{_scope(tenant)}DOCOF#{reference_type}#{reference_locator}"


def _of_segment(tenant: str, segment_locator: str) -> str:
    return f"{_scope(tenant)}DOCSEG#{segment_locator}"


def _of_term(tenant: str, term_locator: str) -> str:
    return f"{_scope(tenant)}DOCTERM#{term_locator}"


def _jobs_of(tenant: str, reference_type: str, reference_locator: str) -> str:
    return f"{_scope(tenant)}DOCJOBOF#{reference_type}#{reference_locator}"


def _document_indexes(tenant: str, document: Document) -> dict[str, Any]:
    indexes: dict[str, Any] = {
        "GSI1PK": _of_reference(tenant, document.referenceType, document.referenceLocator),
        "GSI1SK": document.locator,
    }
    if document.segmentLocator:
        indexes.update(GSI2PK=_of_segment(tenant, document.segmentLocator), GSI2SK=document.locator)
    if document.termLocator:
        indexes.update(GSI3PK=_of_term(tenant, document.termLocator), GSI3SK=document.locator)
    return indexes


# --- document instances ------------------------------------------------------------------------------


RENDERING_DATA_INLINE_BYTES = 100_000
"""The largest rendering data an instance's record holds itself (as DynamoDB counts it); larger is in S3."""


RENDERING_DATA_PATH = "renderingDataPath"


def _rendering_data_path(locator: str) -> str:
    return f"documents/{locator}/rendering-data.json"


def _kept_apart(document: Document) -> bool:
    data = document.renderingData
    return bool(data) and codec.item_size(codec.serialize({"renderingData": data})) > RENDERING_DATA_INLINE_BYTES


def _stored(tenant: str, document: Document) -> tuple[Document, str | None]:
    """The instance as its record holds it and the path of its rendering data in S3 (None: on the record). The
    data is stored before the record that names it (one path an instance, rewritten with it)."""
    if not _kept_apart(document):
        return document, None
    path = _rendering_data_path(document.locator)
    body = json.dumps(codec.serialize({"renderingData": document.renderingData}), separators=(",", ":"))
    blobs.put(tenant, path, body.encode("utf-8"), "application/json")
    return document.model_copy(update={"renderingData": {}}), path


def _document(tenant: str, item: dict[str, Any]) -> Document:
    fields = codec.without_keys(item)
    path = fields.pop(RENDERING_DATA_PATH, None)
    size = 0
    if path:
        stored = blobs.get(tenant, path)
        if stored is not None:
            fields["renderingData"] = codec.deserialize(json.loads(stored))["renderingData"]
            size = len(stored)
    return Document.model_validate(fields).with_stored_rendering_data_bytes(size)


def get_document(tenant: str, locator: str) -> Document | None:
    item = table.gateway().get(_scope(tenant), _document_key(tenant, locator))
    return _document(tenant, item) if item else None


def get_documents(tenant: str, locators: list[str]) -> list[Document]:
    """In the order asked, in one BatchGetItem per hundred; missing ones left out."""
    found: dict[str, Document] = {}
    for start in range(0, len(locators), 100):
        items = table.gateway().batch_get(
            _scope(tenant), [_document_key(tenant, locator) for locator in locators[start : start + 100]]
        )
        for item in items:
            document = _document(tenant, item)
            found[document.locator] = document
    return [found[locator] for locator in locators if locator in found]


def _item(tenant: str, document: Document) -> dict[str, Any]:
    stored, path = _stored(tenant, document)
    return {
        **_document_key(tenant, document.locator).as_dict(),
        "entity": "document",
        **_document_indexes(tenant, document),
        **stored.model_dump(exclude_none=True),
        **({RENDERING_DATA_PATH: path} if path else {}),
    }


def add_document(uow: UnitOfWork, tenant: str, document: Document) -> None:
    """A new instance in `uow`; its rendering data kept in S3 (stored now, before the record) is removed again
    should that write fail (an invoice's write that lost its billing root: nothing else names the object)."""
    item = _item(tenant, document)
    uow.add(table.put_new(item))
    path = item.get(RENDERING_DATA_PATH)
    if path:
        uow.after_failure(lambda: blobs.remove(tenant, path))


def put_document(uow: UnitOfWork, tenant: str, document: Document) -> None:
    """Writes a draft whose locator is derived from its job's, whether or not an earlier attempt did."""
    uow.add(table.put(_item(tenant, document)))


def save_document(uow: UnitOfWork, tenant: str, document: Document) -> None:
    """Rewrites a changed instance on the version it was read at (409 when another change came first)."""
    stored, path = _stored(tenant, document)
    uow.add(
        rewrite(
            _document_key(tenant, document.locator),
            stored,
            extra={**_document_indexes(tenant, document), RENDERING_DATA_PATH: path},
        )
    )


def delete_document(uow: UnitOfWork, tenant: str, document: Document) -> None:
    uow.add(table.delete(_document_key(tenant, document.locator), must_exist=True))
    if _kept_apart(document):
        blobs.remove(tenant, _rendering_data_path(document.locator))


def documents_of(tenant: str, reference_type: str, reference_locator: str, page: PageRequest) -> Page[Document]:
    return _page(tenant, _of_reference(tenant, reference_type, reference_locator), "GSI1", page)


def documents_of_segment(tenant: str, segment_locator: str, page: PageRequest) -> Page[Document]:
    return _page(tenant, _of_segment(tenant, segment_locator), "GSI2", page)


def documents_of_term(tenant: str, term_locator: str, page: PageRequest) -> Page[Document]:
    return _page(tenant, _of_term(tenant, term_locator), "GSI3", page)


def all_documents_of(tenant: str, reference_type: str, reference_locator: str) -> list[Document]:
    items = query.all_items(
        table.gateway(), _scope(tenant), _of_reference(tenant, reference_type, reference_locator), index="GSI1"
    )
    return [_document(tenant, item) for item in items]


def _page(tenant: str, partition: str, index: str, page: PageRequest) -> Page[Document]:
    found = query.page(table.gateway(), _scope(tenant), partition, page, index=index)
    return Page(
        items=[_document(tenant, item) for item in found.items],
        list_completed=found.list_completed,
    )


# --- artifacts ---------------------------------------------------------------------------------------


def store_artifact(tenant: str, document_locator: str, name: str, content: bytes, media_type: str) -> Artifact:
    """Stores the file before the instance that names it is written: a file no instance names is
    harmless, an instance naming no file would not be."""
    path = f"documents/{document_locator}/{name}"
    blobs.put(tenant, path, content, media_type)
    return artifact_of(path, content, media_type)


def artifact_of(path: str, content: bytes, media_type: str) -> Artifact:
    """The artifact of the stored object at `path` holding `content`."""
    return Artifact(
        path=path, size=len(content), checksum="sha256:" + hashlib.sha256(content).hexdigest(), mediaType=media_type
    )


def read_artifact(tenant: str, artifact: Artifact) -> bytes | None:
    return blobs.get(tenant, artifact.path)


def remove_artifact(tenant: str, artifact: Artifact) -> None:
    """Deletes the stored file (a file already gone is no error)."""
    blobs.remove(tenant, artifact.path)


def invoice_exists(tenant: str, locator: str) -> bool:
    """Whether billing has an invoice of this locator: its alias item (storage/keys.py, billing) names it
    without reading billing's partition (billing is a domain above this one)."""
    item = table.gateway().get(_scope(tenant), keys.billing_alias(tenant, locator))
    return item is not None and item.get("kind") == "invoice"


def read_bootstrap_file(tenant: str, path: str) -> bytes | None:
    """A bootstrap resource file as createTenant stored it (configuration's BootstrapFile.path)."""
    return blobs.get(tenant, path)


# --- documents jobs ----------------------------------------------------------------------------------


def get_job(tenant: str, locator: str) -> DocumentsJob | None:
    item = table.gateway().get(_scope(tenant), _job_key(tenant, locator))
    return DocumentsJob.model_validate(codec.without_keys(item)) if item else None


def add_job(uow: UnitOfWork, tenant: str, job: DocumentsJob) -> None:
    """Listed under its record (GSI1) and, a transaction's, under the segment it makes (GSI2)."""
    by_segment = (
        {"GSI2PK": _jobs_of(tenant, "segment", job.segmentLocator), "GSI2SK": job.locator} if job.segmentLocator else {}
    )
    uow.add(
        table.put_new(
            {
                **_job_key(tenant, job.locator).as_dict(),
                "entity": "documentsJob",
                "GSI1PK": _jobs_of(tenant, job.referenceType, job.referenceLocator),
                "GSI1SK": job.locator,
                **by_segment,
                **job.model_dump(exclude_none=True),
            }
        )
    )


def save_job(uow: UnitOfWork, tenant: str, job: DocumentsJob) -> None:
    uow.add(rewrite(_job_key(tenant, job.locator), job))


def jobs_of(tenant: str, reference_type: str, reference_locator: str, page: PageRequest) -> Page[DocumentsJob]:
    found = query.page(
        table.gateway(),
        _scope(tenant),
        _jobs_of(tenant, reference_type, reference_locator),
        page,
        index=_jobs_index(reference_type),
    )
    return Page(
        items=[DocumentsJob.model_validate(codec.without_keys(item)) for item in found.items],
        list_completed=found.list_completed,
    )


def all_jobs_of(tenant: str, reference_type: str, reference_locator: str) -> list[DocumentsJob]:
    items = query.all_items(
        table.gateway(),
        _scope(tenant),
        _jobs_of(tenant, reference_type, reference_locator),
        index=_jobs_index(reference_type),
    )
    return [DocumentsJob.model_validate(codec.without_keys(item)) for item in items]


def _jobs_index(reference_type: str) -> str:
    return "GSI2" if reference_type == "segment" else "GSI1"
