"""The error tree and its catalogue: every code is one entry with its class, so its status; raising an
entry builds an error of that class, carrying the message and field errors the error body shows."""

from __future__ import annotations

import re

import pytest

from chalicelib.core import codes
from chalicelib.core.errors import (
    AlreadyExists,
    ConcurrentModification,
    Conflict,
    DomainError,
    ErrorCode,
    FieldError,
    Forbidden,
    InvalidRequest,
    InvalidState,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    TooManyRequests,
    Unauthenticated,
    Unavailable,
    UnsupportedMediaType,
)


@pytest.mark.parametrize(
    "error_class, status",
    [
        (DomainError, 400),
        (InvalidRequest, 400),
        (Unauthenticated, 401),
        (Forbidden, 403),
        (NotFound, 404),
        (MethodNotAllowed, 405),
        (Conflict, 409),
        (AlreadyExists, 409),
        (ConcurrentModification, 409),
        (InvalidState, 409),
        (PayloadTooLarge, 413),
        (UnsupportedMediaType, 415),
        (TooManyRequests, 429),
        (Unavailable, 503),
    ],
)
def test_each_class_answers_its_status(error_class, status):
    assert error_class.status == status


def test_an_entry_raises_an_error_of_its_class_with_its_code_message_and_fields():
    problems = [FieldError("count", "must be between 1 and 100")]
    error = codes.REQUEST_INVALID("Invalid paging parameters", field_errors=problems)

    assert isinstance(error, InvalidRequest)
    assert (error.code, error.entry, error.message, str(error), error.field_errors) == (
        "request.invalid",
        codes.REQUEST_INVALID,
        "Invalid paging parameters",
        "Invalid paging parameters",
        problems,
    )
    assert isinstance(codes.CONCURRENT_MODIFICATION("lost"), ConcurrentModification)
    assert codes.QUOTE_POLICY_NUMBER_TAKEN.status == 409


def test_a_family_holds_one_entry_per_entity():
    assert codes.INVALID_ELEMENT["quote"].code == "quote.invalid_element"
    assert codes.INVALID_ELEMENT["transaction"].code == "transaction.invalid_element"
    assert codes.NOT_DRAFT["quickQuote"].meaning == "Only a draft quickQuote takes this change"
    with pytest.raises(KeyError):
        codes.INVALID_ELEMENT["widget"]


def test_not_found_names_the_entity_and_what_was_looked_for():
    with_locator = codes.not_found("policy", "01JPOLICY")
    without = codes.not_found("tenant")

    assert isinstance(with_locator, NotFound)
    assert (with_locator.code, str(with_locator)) == ("policy.not_found", "policy 01JPOLICY not found")
    assert (without.code, without.message) == ("tenant.not_found", "tenant not found")


def test_too_many_requests_says_how_long_to_wait():
    throttled = TooManyRequests("Too many sign-in attempts", codes.AUTH_SIGN_IN_THROTTLED, retry_after_seconds=30)

    assert (throttled.code, throttled.status, throttled.retry_after_seconds) == ("auth.sign_in_throttled", 429, 30)
    assert (throttled.message, throttled.field_errors) == ("Too many sign-in attempts", [])
    field = FieldError("password", "wait")
    later = TooManyRequests("Slow down", codes.AUTH_SIGN_IN_THROTTLED, [field])
    assert (later.message, later.field_errors, later.retry_after_seconds) == ("Slow down", [field], 60)


def test_the_catalogue_holds_every_entry_once_with_a_meaning():
    entries = [value for value in vars(codes).values() if isinstance(value, ErrorCode)]
    entries += [
        entry
        for value in vars(codes).values()
        if isinstance(value, dict) and value is not codes.CATALOGUE
        for entry in value.values()
        if isinstance(entry, ErrorCode)
    ]
    assert {entry.code for entry in entries} == set(codes.CATALOGUE)
    for code, entry in codes.CATALOGUE.items():
        assert entry.code == code
        assert re.fullmatch(r"[a-z][A-Za-z_]*(\.[a-z][a-z_]*)*", code), code
        assert entry.meaning and not entry.meaning.endswith("."), code
