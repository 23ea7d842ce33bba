"""Loads every domain's job handlers: each job_handlers module registers its @job_handler functions as it
is imported. The worker and the schedules import this module, never a domain's job_handlers directly;
tests/jobs checks that the handlers loaded here cover every JobType and nothing else."""
from __future__ import annotations

from chalicelib.tables import job_handlers as tables

DOMAIN_JOB_HANDLERS = (tables,)
