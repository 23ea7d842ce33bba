"""Test clocks (our extension; DECISIONS.md "Test clocks"): a tenant's time, and moving a test clock
forward. Every request on a test-clock tenant takes its business time from the clock (clock/service.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.clock import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.clock", "schemas", "service")

bp = Blueprint(__name__)


@bp.route("/clock/{tenantLocator}", methods=["GET"])
@endpoint("clock.read")
def fetch_clock(tenantLocator: str) -> schemas.ClockResponse:
    return schemas.ClockResponse.of(service.time(request_context()))


@bp.route("/clock/{tenantLocator}/advance", methods=["POST"])
@endpoint("clock.write", errors=[codes.CLOCK_NOT_A_TEST_CLOCK, codes.CLOCK_ADVANCING, codes.CLOCK_NOT_FORWARD])
def advance_clock(tenantLocator: str, body: schemas.ClockAdvanceRequest) -> schemas.ClockResponse:
    return schemas.ClockResponse.of(service.advance(request_context(), body.to))
