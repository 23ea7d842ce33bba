"""Sign-in throttling arithmetic: attempts counted per fixed time window before their password is checked,
pure (the counters are stored by the repository, and a success takes its attempt back). A window that
ends takes its counts with it, so no lockout lasts longer than one window after the last counted failure;
attempts refused while throttled are not counted."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import datetime

WINDOW_SECONDS = 15 * 60
MAX_FAILURES_PER_USER_NAME = 10
MAX_FAILURES_PER_SOURCE = 100
USER_NAME = "name"
SOURCE = "source"


@dataclass(frozen=True)
class Subject:
    """Something failures are counted for: a user name (known or not) or a source address."""

    kind: str
    digest: str
    limit: int


def subjects(user_name: str, source_ip: str | None) -> list[Subject]:
    found = [Subject(USER_NAME, _digest(user_name.strip().lower()), MAX_FAILURES_PER_USER_NAME)]
    if source_ip:
        found.append(Subject(SOURCE, _digest(source_ip), MAX_FAILURES_PER_SOURCE))
    return found


def _digest(text: str) -> str:
    # fixed length whatever the input, and no user name in clear in a key
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]


def window_of(now: datetime) -> int:
    return int(now.timestamp()) // WINDOW_SECONDS


def window_end(window: int) -> int:
    """Epoch seconds at which `window` ends."""
    return (window + 1) * WINDOW_SECONDS


def retry_after_seconds(now: datetime) -> int:
    """Seconds until the current window ends (at least 1)."""
    return max(1, math.ceil(window_end(window_of(now)) - now.timestamp()))
