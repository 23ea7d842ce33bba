from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.support import LocalStack


@pytest.fixture
def stacks() -> Iterator[list[LocalStack]]:
    """Every LocalStack a test appends here is killed at its end, whatever happened."""
    started: list[LocalStack] = []
    yield started
    for stack in started:
        stack.kill()


@pytest.fixture(scope="session")
def local_stack(tmp_path_factory) -> Iterator[LocalStack]:
    """One `make run` shared by the e2e tests that need a running stack but not one of their own (a start
    costs seconds). Each test works in tenants of its own; a test may restart it (same state and ports),
    and the tests after it use the restarted stack. A test that kills a stack starts its own."""
    directory = tmp_path_factory.mktemp("local-stack")
    started = LocalStack(directory / "state", directory / "stack.log")
    try:
        yield started
    finally:
        started.kill()
