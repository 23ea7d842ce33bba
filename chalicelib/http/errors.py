"""The one table from error class to HTTP status."""
from __future__ import annotations

from chalicelib.core import errors

_STATUS_BY_CLASS: list[tuple[type[errors.DomainError], int]] = [
    (errors.InvalidRequest, 400),
    (errors.Unauthenticated, 401),
    (errors.Forbidden, 403),
    (errors.NotFound, 404),
    (errors.Conflict, 409),
    (errors.PayloadTooLarge, 413),
    (errors.TooManyRequests, 429),
    (errors.Unavailable, 503),
]


def status_of(error: errors.DomainError) -> int:
    for cls, status in _STATUS_BY_CLASS:
        if isinstance(error, cls):
            return status
    return 400
