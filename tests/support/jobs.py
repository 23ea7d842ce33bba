"""Jobs whose messages are lost: what the reaper does with them, for the tests of what a given-up job leaves."""

from __future__ import annotations

from typing import Any

from chalicelib.runtime.jobs import MAX_ATTEMPTS, reap_expired
from chalicelib.settings import settings


def lose_every_message_until_given_up(tenant: str, jobs: Any, clock: Any) -> None:
    """Every message of the tenant's one queued job is lost until the reaper gives the job up: MAX_ATTEMPTS
    re-queues, each on a lease twice the last (`runtime.jobs.requeue_lease`), then the failure."""
    for requeues in range(MAX_ATTEMPTS + 1):
        jobs.messages.clear()
        clock.advance(seconds=settings().job_lease_seconds * 2**requeues + 1)
        assert reap_expired(tenant, clock.now()) == 1
