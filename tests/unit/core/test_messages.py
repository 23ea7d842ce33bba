"""The bases of the API's messages: a request refuses what it does not know, an answer copies a record."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from chalicelib.core.messages import Input, Response


class Asked(Input):
    name: str


class Answer(Response):
    locator: str
    amount: int = 0


class Record(BaseModel):
    locator: str
    amount: int
    secret: str


def test_an_input_with_an_unknown_field_is_refused_naming_it():
    with pytest.raises(ValidationError) as refused:
        Asked.model_validate({"name": "a", "nmae": "b"})

    assert [(e["type"], e["loc"]) for e in refused.value.errors()] == [("extra_forbidden", ("nmae",))]


def test_an_answer_of_a_record_takes_its_fields_by_name_and_leaves_the_others_out():
    answer = Answer.of_record(Record(locator="L1", amount=7, secret="s"))

    assert answer.model_dump() == {"locator": "L1", "amount": 7}
