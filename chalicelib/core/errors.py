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


class DomainError(Exception):
    """Base of every error the service raises on purpose."""

    default_code = "error"

    def __init__(self, message: str, code: str | None = None, field_errors: list[FieldError] | None = None):
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.field_errors = field_errors or []


class InvalidRequest(DomainError):
    """Malformed body, wrong types, unknown enum values, limits exceeded."""

    default_code = "request.invalid"


class Unauthenticated(DomainError):
    default_code = "auth.unauthenticated"

    def __init__(self, message: str = "Authentication required", code: str | None = None):
        super().__init__(message, code)


class Forbidden(DomainError):
    default_code = "auth.forbidden"


class NotFound(DomainError):
    def __init__(self, entity: str, locator: str | None = None):
        what = f"{entity} {locator}" if locator else entity
        super().__init__(f"{what} not found", code=f"{entity}.not_found")
        self.entity = entity


class Conflict(DomainError):
    """A duplicate name or number, or a state that does not allow the operation."""

    default_code = "conflict"


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


class Unavailable(DomainError):
    """A dependency is throttled or down; the caller may retry."""

    default_code = "service.unavailable"


class TooManyRequests(DomainError):
    """The caller must wait `retry_after_seconds` before trying again (answered with Retry-After)."""

    default_code = "request.throttled"

    def __init__(self, message: str, retry_after_seconds: int, code: str | None = None):
        super().__init__(message, code)
        self.retry_after_seconds = retry_after_seconds
