"""One error tree for the whole service.

Every error carries a stable code (``domain.problem``) that clients may switch on, an entry of the one
catalogue, `chalicelib.core.codes`: raises name its entries (`raise codes.QUOTE_NOT_PRICED("...")`). An
entry's class decides the HTTP status, here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str


@dataclass(frozen=True)
class ErrorCode:
    """A stable error code: what it means, and the class (so the status) it is raised as."""

    code: str
    kind: type[DomainError]
    meaning: str

    @property
    def status(self) -> int:
        return self.kind.status

    def __call__(self, message: str, field_errors: list[FieldError] | None = None) -> DomainError:
        """The error to raise, of this entry's class."""
        return self.kind(message, self, field_errors)


class DomainError(Exception):
    """Base of every error the service raises on purpose."""

    status: ClassVar[int] = 400

    def __init__(self, message: str, code: ErrorCode, field_errors: list[FieldError] | None = None):
        super().__init__(message)
        self.message = message
        self.entry = code
        self.code = code.code
        self.field_errors = field_errors or []


class InvalidRequest(DomainError):
    """Malformed body, wrong types, unknown enum values, limits exceeded."""


class Unauthenticated(DomainError):
    status = 401


class Forbidden(DomainError):
    status = 403


class NotFound(DomainError):
    status = 404


class MethodNotAllowed(DomainError):
    status = 405


class Conflict(DomainError):
    """A duplicate name or number, or a state that does not allow the operation."""

    status = 409


class AlreadyExists(Conflict):
    pass


class ConcurrentModification(Conflict):
    """A write lost a race with another request (its version moved); retrying may succeed."""


class InvalidState(Conflict):
    pass


class PayloadTooLarge(DomainError):
    status = 413


class UnsupportedMediaType(DomainError):
    status = 415


class TooManyRequests(DomainError):
    """The caller must wait `retry_after_seconds` before trying again (answered with Retry-After)."""

    status = 429

    def __init__(
        self,
        message: str,
        code: ErrorCode,
        field_errors: list[FieldError] | None = None,
        *,
        retry_after_seconds: int = 60,
    ):
        super().__init__(message, code, field_errors)
        self.retry_after_seconds = retry_after_seconds


class Unavailable(DomainError):
    """A dependency is throttled or down; the caller may retry (after `retry_after_seconds` when it is set:
    answered with Retry-After)."""

    status = 503

    def __init__(
        self,
        message: str,
        code: ErrorCode,
        field_errors: list[FieldError] | None = None,
        *,
        retry_after_seconds: int | None = None,
    ):
        super().__init__(message, code, field_errors)
        self.retry_after_seconds = retry_after_seconds
