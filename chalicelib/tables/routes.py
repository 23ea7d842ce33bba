"""Lookup, range and constraint tables (spec part 1, "Tables (lookup, range, constraint)").

Uploads come as a raw ZIP body or as `multipart/form-data` with the ZIP in the part `file`; the ZIP
holds one CSV. Downloads answer a ZIP holding the CSV last uploaded for the instance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.contract import Upload
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context
from chalicelib.http.responses import ZipFile

if TYPE_CHECKING:
    from chalicelib.tables import models, schemas, service
else:
    models, schemas, service = lazy_modules("chalicelib.tables", "models", "schemas", "service")

bp = Blueprint(__name__)

UPLOAD_TYPES = ["application/zip", "multipart/form-data", "application/octet-stream"]


def _create(kind: models.TableKind, upload: Upload, query: schemas.CreateTableQuery) -> schemas.BasicResourceResponse:
    return schemas.BasicResourceResponse.of(
        service.create_table(
            request_context(),
            kind,
            name=query.name,
            static_name=query.staticName,
            jurisdictions=query.jurisdiction,
            upload=upload,
        )
    )


def _replace(kind: models.TableKind, name: str, upload: Upload) -> schemas.BasicResourceResponse:
    return schemas.BasicResourceResponse.of(service.replace_table(request_context(), kind, name, upload))


def _download(kind: models.TableKind, name: str) -> ZipFile:
    file_name, content = service.download_table(request_context(), kind, name)
    return ZipFile(content, filename=file_name)


# --- lookup tables -------------------------------------------------------------------------------


@bp.route("/resource/{tenantLocator}/tables", methods=["POST"], content_types=UPLOAD_TYPES)
@endpoint(
    "tables.upload",
    idempotent=True,
    errors=[codes.NOT_FOUND["table"], codes.TABLE_ALREADY_EXISTS["table"], codes.TABLE_FILE_NOT_ZIP],
)
def create_lookup_table(
    tenantLocator: str, body: schemas.TableFile, query: schemas.CreateTableQuery
) -> schemas.BasicResourceResponse:
    return _create(models.TableKind.LOOKUP, body, query)


@bp.route("/resource/{tenantLocator}/tables/{name}", methods=["PATCH"], content_types=UPLOAD_TYPES)
@endpoint(
    "tables.upload",
    errors=[
        codes.NOT_FOUND["table"],
        codes.TABLE_COLUMNS_MISMATCH,
        codes.TABLE_DUPLICATE_KEY,
        codes.TABLE_FILE_INVALID,
        codes.TABLE_FILE_NOT_ZIP,
        codes.TABLE_INVALID_VALUE,
        codes.TABLE_OVERLAPPING_RANGES,
    ],
)
def replace_lookup_table(tenantLocator: str, name: str, body: schemas.TableFile) -> schemas.BasicResourceResponse:
    return _replace(models.TableKind.LOOKUP, name, body)


@bp.route("/resource/{tenantLocator}/tables/{name}", methods=["GET"])
@endpoint("tables.read", errors=[codes.NOT_FOUND["table"]])
def fetch_lookup_table_zip(tenantLocator: str, name: str) -> ZipFile:
    return _download(models.TableKind.LOOKUP, name)


@bp.route("/resource/{tenantLocator}/tables/{name}/record", methods=["GET"])
@endpoint("tables.read", errors=[codes.NOT_FOUND["table"], codes.NOT_FOUND["tableRecord"], codes.TABLE_KEY_INVALID])
def fetch_table_record(tenantLocator: str, name: str, query: schemas.RecordQuery) -> schemas.TableLookupResponse:
    return schemas.TableLookupResponse(
        value=service.table_record(
            request_context(),
            name,
            query.key,
            at=query.date,
            jurisdiction=query.jurisdiction,
            by_static_name=query.byStaticName,
        )
    )


# --- range tables --------------------------------------------------------------------------------


@bp.route("/resource/{tenantLocator}/rangeTables", methods=["POST"], content_types=UPLOAD_TYPES)
@endpoint(
    "tables.upload",
    idempotent=True,
    errors=[
        codes.NOT_FOUND["rangeTable"],
        codes.TABLE_ALREADY_EXISTS["rangeTable"],
        codes.TABLE_DEFINITION_INVALID["rangeTable"],
        codes.TABLE_FILE_NOT_ZIP,
    ],
)
def create_range_table(
    tenantLocator: str, body: schemas.TableFile, query: schemas.CreateTableQuery
) -> schemas.BasicResourceResponse:
    return _create(models.TableKind.RANGE, body, query)


@bp.route("/resource/{tenantLocator}/rangeTables/{name}", methods=["PATCH"], content_types=UPLOAD_TYPES)
@endpoint(
    "tables.upload",
    errors=[
        codes.NOT_FOUND["rangeTable"],
        codes.TABLE_COLUMNS_MISMATCH,
        codes.TABLE_DUPLICATE_KEY,
        codes.TABLE_FILE_INVALID,
        codes.TABLE_FILE_NOT_ZIP,
        codes.TABLE_INVALID_VALUE,
        codes.TABLE_OVERLAPPING_RANGES,
    ],
)
def replace_range_table(tenantLocator: str, name: str, body: schemas.TableFile) -> schemas.BasicResourceResponse:
    return _replace(models.TableKind.RANGE, name, body)


@bp.route("/resource/{tenantLocator}/rangeTables/{name}", methods=["GET"])
@endpoint("tables.read", errors=[codes.NOT_FOUND["rangeTable"]])
def fetch_range_table_zip(tenantLocator: str, name: str) -> ZipFile:
    return _download(models.TableKind.RANGE, name)


@bp.route("/resource/{tenantLocator}/rangeTables/{name}/record", methods=["GET"])
@endpoint(
    "tables.read", errors=[codes.NOT_FOUND["rangeTable"], codes.NOT_FOUND["rangeTableRecord"], codes.TABLE_KEY_INVALID]
)
def fetch_range_table_record(
    tenantLocator: str, name: str, query: schemas.RangeRecordQuery
) -> schemas.TableLookupResponse:
    return schemas.TableLookupResponse(
        value=service.range_table_record(
            request_context(),
            name,
            query.key,
            query.boundValue,
            at=query.date,
            jurisdiction=query.jurisdiction,
            by_static_name=query.byStaticName,
        )
    )


# --- constraint tables ---------------------------------------------------------------------------


@bp.route("/resource/{tenantLocator}/constraints", methods=["POST"], content_types=UPLOAD_TYPES)
@endpoint(
    "constraints.upload",
    idempotent=True,
    errors=[
        codes.NOT_FOUND["constraintTable"],
        codes.TABLE_ALREADY_EXISTS["constraintTable"],
        codes.TABLE_FILE_NOT_ZIP,
    ],
)
def create_constraint_table(
    tenantLocator: str, body: schemas.TableFile, query: schemas.CreateTableQuery
) -> schemas.BasicResourceResponse:
    return _create(models.TableKind.CONSTRAINT, body, query)


@bp.route("/resource/{tenantLocator}/constraints/{name}", methods=["PATCH"], content_types=UPLOAD_TYPES)
@endpoint(
    "constraints.upload",
    errors=[
        codes.NOT_FOUND["constraintTable"],
        codes.TABLE_COLUMNS_MISMATCH,
        codes.TABLE_DUPLICATE_KEY,
        codes.TABLE_FILE_INVALID,
        codes.TABLE_FILE_NOT_ZIP,
        codes.TABLE_INVALID_VALUE,
        codes.TABLE_OVERLAPPING_RANGES,
    ],
)
def replace_constraint_table(tenantLocator: str, name: str, body: schemas.TableFile) -> schemas.BasicResourceResponse:
    return _replace(models.TableKind.CONSTRAINT, name, body)


@bp.route("/resource/{tenantLocator}/constraints/{name}", methods=["GET"])
@endpoint("constraints.read", errors=[codes.NOT_FOUND["constraintTable"]])
def fetch_constraint_table_zip(tenantLocator: str, name: str) -> ZipFile:
    return _download(models.TableKind.CONSTRAINT, name)


@bp.route("/resource/{tenantLocator}/constraints/{name}/record", methods=["GET"])
@endpoint("constraints.read", errors=[codes.NOT_FOUND["constraintTable"], codes.TABLE_KEY_INVALID])
def fetch_constraint_record(tenantLocator: str, name: str, query: schemas.RecordQuery) -> dict[str, list[Any]]:
    return service.constraint_record(
        request_context(),
        name,
        query.key,
        at=query.date,
        jurisdiction=query.jurisdiction,
        by_static_name=query.byStaticName,
    )


# --- the tables of the package createTenant deployed ---------------------------------------------


@bp.route("/resource/{tenantLocator}/resources/bootstrap", methods=["GET"])
@endpoint("resources.list")
def fetch_bootstrap_status(tenantLocator: str) -> list[models.BootstrapStatus]:
    """How far the tables.bootstrap job has come: each table resource queued, created or failed."""
    return service.bootstrap_status(request_context())
