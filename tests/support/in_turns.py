"""Requests in parallel threads against the app (race tests): DynamoDB calls made one at a time, as moto in
process is not thread-safe, and the writes of parallel requests made to meet."""

from __future__ import annotations

import threading
from typing import Any


class InTurns:
    """DynamoDB calls made one at a time, as the service makes each atomically (moto in process is not
    thread-safe); `writes_meet(n)` makes the next n TransactWriteItems wait for each other, so each of n
    parallel requests has read all it checks before any of them writes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.meeting: threading.Barrier | None = None

    def writes_meet(self, parties: int) -> None:
        self.meeting = threading.Barrier(parties, timeout=30)

    def call(self, original: Any, operation: str, params: Any) -> Any:
        meeting = self.meeting
        if operation == "TransactWriteItems" and meeting is not None and meeting.wait() == 0:
            self.meeting = None
        with self.lock:
            return original(operation, params)


def in_turns(monkeypatch: Any) -> InTurns:
    """The DynamoDB client's calls made in turns for the test (`monkeypatch` undoes it)."""
    from chalicelib.storage import clients

    client = clients.dynamodb()
    turns = InTurns()
    original = client._make_api_call
    monkeypatch.setattr(client, "_make_api_call", lambda operation, params: turns.call(original, operation, params))
    return turns
