"""Schemathesis against our own `/openapi.json`: requests generated from every operation's declared
contract (valid and invalid ones), by a caller who may do anything, on a tenant that holds real records.
No answer is a 5xx, and every answer fits the operation's description: a documented status, its content
type, its schema (an error's `code` among those the operation declares). `make fuzz` runs it longer."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis import checks as general
from schemathesis.specs.openapi import checks as openapi_checks

from tests.architecture.fuzzing import EXAMPLES_PER_OPERATION, schema
from tests.architecture.support import World, make_world, value_key
from tests.support.wsgi import wsgi_app

CHECKS = [
    general.not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_schema_conformance,
]

_state: dict[str, Any] = {}


@pytest.fixture(scope="module", autouse=True)
def world(app, admin_token, fuzz_tally) -> Iterator[World]:
    built = make_world(app, admin_token)
    _state.update(world=built, wsgi=wsgi_app(app), token=admin_token, tally=fuzz_tally)
    yield built
    _state.clear()


@schema.hook
def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any]) -> Any:
    """Half of the requests name the world's real records, so they reach past the 404s."""
    world: World | None = _state.get("world")
    if world is None or not path_parameters:
        return st.just(path_parameters)
    path = context.operation.path
    real = {name: world.values.get(value_key(path, name), value) for name, value in path_parameters.items()}
    return st.sampled_from([path_parameters, real])


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=not os.environ.get("PAS_FUZZ_RANDOM"),
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_it_is_described(case):
    if case.method.upper() == "OPTIONS":
        return  # a CORS preflight is the gateway's to answer, not an operation's
    # schemathesis asks for gzip as requests does, but its WSGI client does not undo a Content-Encoding
    headers = {"Authorization": f"Bearer {_state['token']}", "Accept-Encoding": "identity"}
    case.call_and_validate(app=_state["wsgi"], headers=headers, checks=CHECKS)
    _state["tally"].request(case.operation.label)
