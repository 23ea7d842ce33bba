"""Uploads (our extension, DECISIONS.md "Uploads"): a file over the direct limit of a body (API Gateway takes
at most 10 MB a request) goes to a presigned S3 URL, and then the operation names it with `?uploadLocator=`.

The route takes any permission an upload may need; the service then requires the one of the purpose's
operation (uploads/purposes.py), and access to the body's tenant."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context
from chalicelib.uploads.purposes import ALL_PERMISSIONS

if TYPE_CHECKING:
    from chalicelib.uploads import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.uploads", "schemas", "service")

bp = Blueprint(__name__)


@bp.route("/uploads", methods=["POST"])
@endpoint(*ALL_PERMISSIONS, errors=[codes.AUTH_TENANT_FORBIDDEN, codes.UPLOAD_TOO_LARGE])
def create_upload(body: schemas.UploadRequest) -> schemas.UploadResponse:
    tenant = str(body.tenantLocator) if body.tenantLocator is not None else None
    return schemas.UploadResponse.of(
        service.create_upload(request_context(), body.purpose, tenant, body.size, body.sha256, body.contentType)
    )
