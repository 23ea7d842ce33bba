"""Loads every domain's job handlers: each job_handlers module registers its @job_handler (and
@due_handler) functions as it is imported. The worker and the schedules call `load_job_handlers()` when
they first run, never at import, so `import app` (an API cold start) loads no domain service for them;
tests/jobs checks that the handlers loaded here cover every JobType and nothing else."""

from __future__ import annotations

from functools import cache
from types import ModuleType


@cache
def load_job_handlers() -> tuple[ModuleType, ...]:
    """Import (once) and answer every domain's job_handlers module."""
    from chalicelib.billing import job_handlers as billing
    from chalicelib.clock import job_handlers as clock
    from chalicelib.compliance import job_handlers as compliance
    from chalicelib.documents import job_handlers as documents
    from chalicelib.migration import job_handlers as migration
    from chalicelib.plugins import job_handlers as plugins
    from chalicelib.policies import job_handlers as policies
    from chalicelib.schedules import job_handlers as schedule_items
    from chalicelib.tables import job_handlers as tables
    from chalicelib.transactions import job_handlers as transactions
    from chalicelib.workers import job_handlers as schedules

    return (
        billing,
        tables,
        transactions,
        schedules,
        clock,
        schedule_items,
        documents,
        policies,
        plugins,
        compliance,
        migration,
    )
