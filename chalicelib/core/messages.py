"""The bases of the API's messages, defined once for every package: what clients send (`Input`: a request
body or a model it names, in schemas.py or a pure models.py) and what the service answers (`Response`, and
core.paging.ListResponse for a page of a list)."""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel, ConfigDict

__all__ = ["Input", "Response"]


class Input(BaseModel):
    """What clients send: unknown fields are a 400."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class Response(BaseModel):
    """An answer: a field with a default is always written, so the description marks it required."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True, defer_build=True)

    @classmethod
    def of_record(cls, record: BaseModel) -> Self:
        """The answer of a record that holds its fields under the same names (the record's others left out)."""
        return cls.model_validate(record.model_dump(include=set(cls.model_fields)))
