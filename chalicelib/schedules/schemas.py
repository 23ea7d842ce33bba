"""The schedules API contract (spec part 2, "Schedule records"; part 3, DeserializationJob)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Json, RootModel

from chalicelib.configuration.datamodel import ValidationResult as ValidationResult
from chalicelib.core.messages import Response
from chalicelib.core.paging import ListQuery, ListResponse
from chalicelib.http.contract import Upload
from chalicelib.priceable.models import Ulid
from chalicelib.schedules.models import (
    DeserializationJob,
    DeserializationJobState,
    DeserializationMetadata,
    ItemPatch,
    ItemsPage,
    ScheduleDescription,
    ScheduleItem,
)


class ScheduleFile(Upload):
    """A schedule's CSV (or JSON): the raw body, its `file` part of a multipart body, or an upload
    (`?uploadLocator=`)."""

    purpose = "schedule"


class ElementScheduleResponse(Response):
    staticElementLocator: str
    complexData: bool
    elementType: str
    maxValidationErrors: int
    scheduleItemType: str


class ElementSchedules(RootModel[dict[str, ElementScheduleResponse]]):
    """The schedules of a quote's or transaction's elements, by static element locator."""

    @classmethod
    def of(cls, described: list[ScheduleDescription]) -> ElementSchedules:
        return cls(
            {
                each.staticElementLocator: ElementScheduleResponse(
                    staticElementLocator=each.staticElementLocator,
                    complexData=each.complex_data,
                    elementType=each.elementType,
                    maxValidationErrors=each.maxValidationErrors,
                    scheduleItemType=each.scheduleItemType,
                )
                for each in described
            }
        )


class ScheduleItemResponse(Response):
    locator: str
    staticElementLocator: str
    type: str
    data: dict[str, Any]
    createdAt: datetime
    createdBy: str

    @classmethod
    def of(cls, item: ScheduleItem, data: dict[str, Any]) -> ScheduleItemResponse:
        return cls(
            locator=item.locator,
            staticElementLocator=item.staticElementLocator,
            type=item.type,
            data=data,
            createdAt=item.createdAt,
            createdBy=item.createdBy,
        )


class ScheduleItemsResponse(Response):
    lastSeenLocator: str
    items: list[ScheduleItemResponse]

    @classmethod
    def of(cls, page: ItemsPage) -> ScheduleItemsResponse:
        return cls(
            lastSeenLocator=page.lastSeenLocator,
            items=[ScheduleItemResponse.of(item, data) for item, data in page.items],
        )


class ItemsQuery(BaseModel):
    lastSeenLocator: Ulid | None = None


class AddScheduleItemRequest(BaseModel):
    data: dict[str, Any]


class AddScheduleItemRequests(RootModel[list[AddScheduleItemRequest]]):
    pass


class PatchScheduleItemRequest(BaseModel):
    locator: Ulid
    removeData: dict[str, Any]
    setData: dict[str, Any]

    def patch(self) -> ItemPatch:
        return ItemPatch(locator=self.locator, removeData=self.removeData, setData=self.setData)


class PatchScheduleItemRequests(RootModel[list[PatchScheduleItemRequest]]):
    pass


class ItemLocators(RootModel[list[Ulid]]):
    pass


class DeserializeQuery(BaseModel):
    params: Json[dict[str, str]]
    """A JSON object of text values, kept with the job (`metadata.params`)."""


class DeserializationResponse(Response):
    jobLocator: str


class DeserializationRequestMetadata(BaseModel):
    referenceLocator: str
    staticElementLocator: str
    fileName: str
    referenceType: str
    fileSize: int
    params: dict[str, str]

    @classmethod
    def of(cls, metadata: DeserializationMetadata) -> DeserializationRequestMetadata:
        return cls(**metadata.model_dump())


class DeserializationJobResponse(Response):
    locator: str
    jobState: DeserializationJobState
    jobType: Literal["scheduleItems"]
    metadata: DeserializationRequestMetadata
    retryCount: int
    updatedAt: datetime
    createdAt: datetime
    createdBy: str
    processingErrors: str | None = None

    @classmethod
    def of(cls, job: DeserializationJob) -> DeserializationJobResponse:
        return cls(
            locator=job.locator,
            jobState=job.jobState,
            jobType="scheduleItems",
            metadata=DeserializationRequestMetadata.of(job.metadata),
            retryCount=job.retryCount,
            updatedAt=job.updatedAt,
            createdAt=job.createdAt,
            createdBy=job.createdBy,
            processingErrors=job.processingErrors,
        )


class DeserializationJobListQuery(ListQuery):
    state: list[str] = []


class DeserializationJobListResponse(ListResponse[DeserializationJobResponse]):
    pass
