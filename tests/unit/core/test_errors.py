"""The error tree: each error's stable code and the message the error body carries."""
from __future__ import annotations

import pytest

from chalicelib.core.errors import (
    AlreadyExists,
    ConcurrentModification,
    Conflict,
    DomainError,
    FieldError,
    Forbidden,
    InvalidRequest,
    InvalidState,
    NotFound,
    PayloadTooLarge,
    TooManyRequests,
    Unauthenticated,
    Unavailable,
)


@pytest.mark.parametrize("error_class, code", [
    (DomainError, "error"), (InvalidRequest, "request.invalid"), (Forbidden, "auth.forbidden"),
    (Conflict, "conflict"), (AlreadyExists, "conflict.already_exists"), (InvalidState, "conflict.invalid_state"),
    (PayloadTooLarge, "request.too_large"), (Unavailable, "service.unavailable"),
])
def test_each_error_has_its_stable_default_code_and_keeps_its_message(error_class, code):
    error = error_class("Something is off")

    assert (error.code, error.message, str(error), error.field_errors) == (
        code, "Something is off", "Something is off", [])
    assert error_class("Something is off", code="custom.code").code == "custom.code"


def test_field_errors_travel_with_the_error():
    problems = [FieldError("count", "must be between 1 and 100")]

    assert InvalidRequest("Invalid paging parameters", field_errors=problems).field_errors == problems


def test_unauthenticated_and_concurrent_modification_have_default_messages():
    unauthenticated = Unauthenticated()
    conflict = ConcurrentModification()

    assert (unauthenticated.code, str(unauthenticated)) == ("auth.unauthenticated", "Authentication required")
    assert Unauthenticated("Token expired", code="auth.token_expired").code == "auth.token_expired"
    assert str(Unauthenticated("Token expired")) == "Token expired"
    assert (conflict.code, str(conflict)) == ("conflict.concurrent_modification",
                                              "The record was changed by another request; reload and retry")
    assert isinstance(conflict, Conflict)


def test_not_found_names_the_entity_and_its_code_follows_it():
    with_locator = NotFound("policy", "01JPOLICY")
    without = NotFound("tenant")

    assert (with_locator.code, str(with_locator), with_locator.entity) == (
        "policy.not_found", "policy 01JPOLICY not found", "policy")
    assert (without.code, without.message) == ("tenant.not_found", "tenant not found")


def test_too_many_requests_says_how_long_to_wait():
    throttled = TooManyRequests("Too many sign-in attempts", retry_after_seconds=30)

    assert (throttled.code, str(throttled), throttled.retry_after_seconds) == (
        "request.throttled", "Too many sign-in attempts", 30)
    assert TooManyRequests("Slow down", 5, code="auth.throttled").code == "auth.throttled"
