"""The HTTP status of an error: its class's (chalicelib.core.errors)."""

from __future__ import annotations

from chalicelib.core import errors


def status_of(error: errors.DomainError) -> int:
    return error.status
