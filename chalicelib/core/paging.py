"""Offset/count paging: the list contract of the platform we mirror."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar

from pydantic import BaseModel

from chalicelib.core import codes
from chalicelib.core.errors import FieldError
from chalicelib.core.messages import Response

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_COUNT = 20
MAX_COUNT = 100
MAX_OFFSET = 10_000


@dataclass(frozen=True)
class PageRequest:
    offset: int = 0
    count: int = DEFAULT_COUNT

    @classmethod
    def of(cls, offset: int | None, count: int | None, max_count: int = MAX_COUNT) -> PageRequest:
        offset = 0 if offset is None else offset
        count = DEFAULT_COUNT if count is None else count
        problems = []
        if not 0 <= offset <= MAX_OFFSET:
            problems.append(FieldError("offset", f"must be between 0 and {MAX_OFFSET}"))
        if not 1 <= count <= max_count:
            problems.append(FieldError("count", f"must be between 1 and {max_count}"))
        if problems:
            raise codes.REQUEST_INVALID("Invalid paging parameters", field_errors=problems)
        return cls(offset, count)


class ListQuery(BaseModel):
    """The query parameters of every offset/count list (a list may add its own)."""

    offset: int | None = None
    count: int | None = None
    extended: bool = False

    def page(self, max_count: int = MAX_COUNT) -> PageRequest:
        return PageRequest.of(self.offset, self.count, max_count)


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    list_completed: bool

    @classmethod
    def window(cls, items: Sequence[T], request: PageRequest) -> Page[T]:
        """The page `request` asks for of `items`: a whole list, or one read `offset + count + 1` deep (the list
        is complete when nothing follows the page)."""
        end = request.offset + request.count
        return cls(list(items[request.offset : end]), end >= len(items))


class ListResponse(Response, Generic[R]):
    """ListPageResponse<R>: one page of a list as the API answers it."""

    listCompleted: bool
    items: list[R]

    @classmethod
    def of(cls, page: Page[T], convert: Callable[[T], R], **fields: Any) -> Self:
        """The page with each item converted to its response (and the fields a list answers besides)."""
        return cls(listCompleted=page.list_completed, items=[convert(item) for item in page.items], **fields)
