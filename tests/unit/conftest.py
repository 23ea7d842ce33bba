"""What the unit tests of several packages share."""

from __future__ import annotations

import time

import pytest


@pytest.fixture
def server_in_tokyo(monkeypatch):
    """The process's own time zone is Asia/Tokyo: code that means UTC must not lean on the local zone."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
