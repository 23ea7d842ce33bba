"""The billing holds API contract (OpenAPI definition: HoldCreateRequest, HoldUpdateRequest,
HoldResponse; spec part 3: HoldListResponse)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from chalicelib.billing.holds.models import HoldState, HoldTarget
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListQuery, ListResponse


class HoldCreateRequest(Input):
    accountLocator: str = Field(min_length=1, max_length=64)
    targetType: HoldTarget


class HoldUpdateRequest(Input):
    accountLocator: str | None = Field(default=None, min_length=1, max_length=64)
    targetType: HoldTarget | None = None


class HoldResponse(Response):
    locator: str
    accountLocator: str
    targetType: HoldTarget
    holdState: HoldState
    validationResult: ValidationResult | None = None
    createdAt: datetime
    updatedAt: datetime


class HoldListResponse(ListResponse[HoldResponse]):
    pass


class HoldListQuery(ListQuery):
    state: HoldState | None = None
