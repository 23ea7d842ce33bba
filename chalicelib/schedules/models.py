"""Schedules: the item lists of a quote's or transaction's elements whose type names a configured
`schedule` (DECISIONS.md "Schedules"), and the jobs that fill them from large files. Pure.

An item keeps its versions (`versions`, oldest first): an add writes the first, a patch or a delete
appends one (a delete a tombstone). A version belongs to one write, named by its token, and shows once
that write's commit record exists, so a request or a job whose items span many DynamoDB writes shows
all of them or none.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel
from ulid import ULID

from chalicelib.configuration.datamodel import Error, ValidationItem, ValidationResult, error_text

MAX_ITEMS_PER_REQUEST = 500
"""Spec part 1, Limits 1: a request adds at most 500 items; patches and deletes take as many."""
ITEMS_PAGE = 100
"""Items answered per page of `GET .../schedules/{staticElementLocator}` (then `lastSeenLocator`)."""
DEFAULT_MAX_VALIDATION_ERRORS = 50
"""Errors reported for one upload when the configuration sets no `defaultScheduleUploadErrorsLimit`."""

OwnerKind = Literal["quote", "transaction"]


class Owner(BaseModel):
    """The schedule's quote or transaction, and the element (by static locator) whose schedule it is."""

    kind: OwnerKind
    locator: str
    staticElementLocator: str


class ScheduleDescription(BaseModel):
    """An element's schedule as the configuration describes it."""

    staticElementLocator: str
    elementType: str
    scheduleItemType: str
    properties: dict[str, Any]
    resetOnRenewal: bool
    maxValidationErrors: int

    @property
    def complex_data(self) -> bool:
        """Whether an item may hold objects or lists (data types, `*` and `+` fields): no CSV then."""
        return any(not flat_type(prop) for prop in self.properties.values())


def flat_type(prop: Any) -> bool:
    """A PropertyRef of a built-in scalar type (string, number, date, boolean, guid; optional or not)."""
    if not isinstance(prop, dict) or not isinstance(prop.get("type"), str):
        return False
    name = prop["type"]
    return not name.endswith(("*", "+", "!")) and name.rstrip("?") in SCALAR_TYPES


SCALAR_TYPES = frozenset({"string", "int", "long", "decimal", "date", "datetime", "boolean", "guid"})


class ItemVersion(BaseModel):
    token: str
    data: dict[str, Any] = {}
    deleted: bool = False


class ScheduleItem(BaseModel):
    locator: str
    staticElementLocator: str
    type: str
    createdAt: datetime
    createdBy: str
    versions: list[ItemVersion]

    def current(self, committed: Collection[str]) -> ItemVersion | None:
        """The latest version whose write committed (None before the add committed)."""
        return next((version for version in reversed(self.versions) if version.token in committed), None)

    def visible_data(self, committed: Collection[str]) -> dict[str, Any] | None:
        """The item's data as readers see it; None when it is not (yet, or any more) an item."""
        current = self.current(committed)
        return None if current is None or current.deleted else current.data

    def with_version(self, version: ItemVersion, committed: Collection[str]) -> ScheduleItem:
        """The item with only its visible version and `version` after it: a writer holding the schedule's
        lock drops the versions of writes that never committed and those older than the visible one."""
        current = self.current(committed)
        return self.model_copy(update={"versions": [*([current] if current else []), version]})


class ItemsPage(BaseModel):
    items: list[tuple[ScheduleItem, dict[str, Any]]]
    lastSeenLocator: str


class ItemPatch(BaseModel):
    locator: str
    setData: dict[str, Any] = {}
    removeData: dict[str, Any] = {}


class DeserializationJobState(StrEnum):
    INITIALIZED = "initialized"
    RUNNING = "running"
    INTERRUPTED = "interrupted"
    FAILED = "failed"
    COMPLETED = "completed"
    TERMINATED = "terminated"


ACTIVE_STATES = frozenset({DeserializationJobState.INITIALIZED, DeserializationJobState.RUNNING})
TERMINABLE_STATES = ACTIVE_STATES | {DeserializationJobState.INTERRUPTED}
RESTARTABLE_STATES = frozenset(
    {DeserializationJobState.FAILED, DeserializationJobState.TERMINATED, DeserializationJobState.INTERRUPTED}
)
SCHEDULE_ITEMS_JOB = "scheduleItems"


class DeserializationMetadata(BaseModel):
    referenceLocator: str
    staticElementLocator: str
    fileName: str
    referenceType: OwnerKind
    fileSize: int
    params: dict[str, str] = {}


class DeserializationJob(BaseModel):
    """A file of schedule items being read in chunks. Each run (`attempt`) writes its items under its
    own token; only the run that reaches the end commits, so a terminated, failed or superseded run
    leaves nothing visible. Progress: `rowsRead` rows up to byte `byteOffset` (CSV) or item index
    (JSON), `errors` those found so far."""

    locator: str
    jobType: str = SCHEDULE_ITEMS_JOB
    jobState: DeserializationJobState
    metadata: DeserializationMetadata
    fileFormat: Literal["csv", "json"] = "csv"
    retryCount: int = 0
    attempt: int = 1
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    processingErrors: str | None = None
    rowsRead: int = 0
    byteOffset: int = 0
    header: list[str] = []
    errors: list[str] = []
    itemsWritten: int = 0
    step: int = 0
    firstItemLocator: str
    version: int = 1

    @property
    def token(self) -> str:
        """The write token of the current run."""
        return f"{self.locator}.{self.attempt}"

    @property
    def owner(self) -> Owner:
        return Owner(
            kind=self.metadata.referenceType,
            locator=self.metadata.referenceLocator,
            staticElementLocator=self.metadata.staticElementLocator,
        )


def item_errors(row: int, errors: list[Error]) -> list[str]:
    """An item's errors as `row N: path: message` (rows count from 1, as a spreadsheet shows them)."""
    return [f"row {row}: {error_text(error)}" for error in errors]


def result_of(messages: list[str], description: ScheduleDescription) -> ValidationResult:
    """The ValidationResult of a request's item errors (already cut to maxValidationErrors): one item
    for the schedule's element, naming each failed row."""
    if not messages:
        return ValidationResult(success=True)
    return ValidationResult(
        success=False,
        validationItems=[
            ValidationItem(
                locator=description.staticElementLocator, elementType=description.scheduleItemType, errors=messages
            )
        ],
    )


def sequential_locators(first: str, count: int) -> list[str]:
    """`count` locators from `first` on, each one past the one before: items keep the order they came in
    (locators made one by one within a millisecond would not), and a job's item of row n has the same
    locator however often that row is read."""
    start = int(ULID.from_str(first))
    return [str(ULID.from_int(start + offset)) for offset in range(count)]
