from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def s3_calls(aws) -> Iterator[list[str]]:
    """The names of the S3 operations made while the test runs (clear() between requests)."""
    from chalicelib.storage import clients

    calls: list[str] = []

    def count(event_name: str, **_: object) -> None:
        calls.append(event_name.rsplit(".", 1)[-1])

    events = clients.s3().meta.events
    events.register("before-call.s3", count)
    yield calls
    events.unregister("before-call.s3", count)
