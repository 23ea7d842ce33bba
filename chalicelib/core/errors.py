"""One error tree for the whole service.

Every error carries a stable `code` (``domain.problem``) that clients may switch on. The HTTP status is
chosen in exactly one place, ``chalicelib.http.errors``, from the error's class.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str


@dataclass(frozen=True)
class ErrorCode:
    """A stable error code of the catalogue below: what it means, and the error class (so the status)
    it is raised as."""

    code: str
    kind: type[DomainError]
    meaning: str

    @property
    def status(self) -> int:
        return self.kind.status

    def __call__(self, message: str, field_errors: list[FieldError] | None = None) -> DomainError:
        error = self.kind.__new__(self.kind)
        DomainError.__init__(error, message, self.code, field_errors)
        return error


class DomainError(Exception):
    """Base of every error the service raises on purpose."""

    default_code = "error"
    status = 400

    def __init__(self, message: str, code: str | None = None, field_errors: list[FieldError] | None = None):
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.field_errors = field_errors or []


class InvalidRequest(DomainError):
    """Malformed body, wrong types, unknown enum values, limits exceeded."""

    default_code = "request.invalid"
    status = 400


class Unauthenticated(DomainError):
    default_code = "auth.unauthenticated"
    status = 401

    def __init__(self, message: str = "Authentication required", code: str | None = None):
        super().__init__(message, code)


class Forbidden(DomainError):
    default_code = "auth.forbidden"
    status = 403


class NotFound(DomainError):
    status = 404

    def __init__(self, entity: str, locator: str | None = None):
        what = f"{entity} {locator}" if locator else entity
        super().__init__(f"{what} not found", code=f"{entity}.not_found")
        self.entity = entity


class Conflict(DomainError):
    """A duplicate name or number, or a state that does not allow the operation."""

    default_code = "conflict"
    status = 409


class AlreadyExists(Conflict):
    default_code = "conflict.already_exists"


class ConcurrentModification(Conflict):
    default_code = "conflict.concurrent_modification"

    def __init__(self, message: str = "The record was changed by another request; reload and retry"):
        super().__init__(message)


class InvalidState(Conflict):
    default_code = "conflict.invalid_state"


class PayloadTooLarge(DomainError):
    default_code = "request.too_large"
    status = 413


class Unavailable(DomainError):
    """A dependency is throttled or down; the caller may retry."""

    default_code = "service.unavailable"
    status = 503


class TooManyRequests(DomainError):
    """The caller must wait `retry_after_seconds` before trying again (answered with Retry-After)."""

    default_code = "request.throttled"
    status = 429

    def __init__(self, message: str, retry_after_seconds: int, code: str | None = None):
        super().__init__(message, code)
        self.retry_after_seconds = retry_after_seconds


# --- the catalogue: every stable error code, its class (so its status) and what it means ------------------

CATALOGUE: dict[str, ErrorCode] = {}


def _code(kind: type[DomainError], code: str, meaning: str) -> ErrorCode:
    if code in CATALOGUE:
        raise ValueError(f"error code {code} is in the catalogue twice")
    entry = CATALOGUE[code] = ErrorCode(code, kind, meaning)
    return entry


# Answered by any route: authentication, tenant access, permission, size, the data store.
AUTH_TOKEN_MISSING = _code(Unauthenticated, "auth.token_missing", "No bearer token was sent")
AUTH_TOKEN_INVALID = _code(Unauthenticated, "auth.token_invalid", "The token is not one the service issued")
AUTH_TOKEN_EXPIRED = _code(Unauthenticated, "auth.token_expired", "The token has expired")
AUTH_TOKEN_REVOKED = _code(Unauthenticated, "auth.token_revoked", "The token was revoked, or its user's sessions were")
AUTH_PASSWORD_CHANGE_REQUIRED = _code(Forbidden, "auth.password_change_required",
                                      "The user signed in with a temporary password and must reset it first")
AUTH_TENANT_FORBIDDEN = _code(Forbidden, "auth.tenant_forbidden", "The caller has no access to this tenant")
AUTH_PERMISSION_DENIED = _code(Forbidden, "auth.permission_denied", "The caller lacks the route's permission")
TENANT_NOT_FOUND = _code(NotFound, "tenant.not_found", "No tenant with this locator")
REQUEST_TOO_LARGE = _code(PayloadTooLarge, "request.too_large", "The request body is larger than the route takes")
SERVICE_UNAVAILABLE = _code(Unavailable, "service.unavailable", "A dependency is busy or down; retry shortly")

# Answered by a route that reads a body or a query.
REQUEST_INVALID = _code(InvalidRequest, "request.invalid", "The body or query does not fit the route's model "
                                                           "(`fieldErrors` names the fields)")
REQUEST_BODY_MISSING = _code(InvalidRequest, "request.body_missing", "The route needs a body and none was sent")
REQUEST_MALFORMED_JSON = _code(InvalidRequest, "request.malformed_json", "The body is not JSON")
REQUEST_MALFORMED_TEXT = _code(InvalidRequest, "request.malformed_text",
                               "A string of the body is not Unicode text (a lone surrogate)")
REQUEST_TOO_DEEP = _code(InvalidRequest, "request.too_deep", "The body nests objects and arrays more than 32 deep")
REQUEST_NUMBER_OUT_OF_RANGE = _code(InvalidRequest, "request.number_out_of_range",
                                    "A number of the body cannot be stored (beyond 38 digits or DynamoDB's range)")
REQUEST_DATE_OUT_OF_RANGE = _code(InvalidRequest, "request.date_out_of_range",
                                  "A date lies within a day of the calendar's ends (years 1 and 9999)")
REQUEST_MALFORMED_FORM = _code(InvalidRequest, "request.malformed_form", "The form-encoded body is not UTF-8 text")
REQUEST_MALFORMED_MULTIPART = _code(InvalidRequest, "request.malformed_multipart",
                                    "The multipart body does not follow RFC 7578")
REQUEST_FILE_MISSING = _code(InvalidRequest, "request.file_missing", "The multipart body has no `file` part")

# Answered by a route that honours X-Idempotency-Key.
IDEMPOTENCY_INVALID_KEY = _code(Conflict, "idempotency.invalid_key", "The idempotency key is empty or too long")
IDEMPOTENCY_KEY_REUSED = _code(Conflict, "idempotency.key_reused",
                               "The idempotency key was used before with another request")
IDEMPOTENCY_IN_PROGRESS = _code(Conflict, "idempotency.in_progress",
                                "The first request with this idempotency key is still running")

DOCS_ASSET_NOT_FOUND = _code(NotFound, "docs.asset_not_found", "The documentation page has no such file")
