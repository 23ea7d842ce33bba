"""The SQS worker: each message is one job, run through the same dispatch as tests and `make run`."""

from __future__ import annotations

from typing import Any

from chalice import Blueprint

from chalicelib.runtime import observability
from chalicelib.runtime.jobs import JobMessage, dispatch
from chalicelib.workers.handlers import load_job_handlers

bp = Blueprint(__name__)


# `chalice package` writes the queue name into an Fn::Sub ARN: this names the JobsQueue resource of
# infra/template.json, so the deployed trigger reads the queue the stack creates.
@bp.on_sqs_message(queue="${JobsQueue.QueueName}", batch_size=1)
@observability.handler  # traced; each job's log lines and metrics carry the correlation id of its message
def run_job(event: Any) -> None:
    for record in event:
        run_message(record.body)


def run_message(body: str) -> None:
    """Run one job message: what the SQS trigger does per record, and `make run`'s worker per message."""
    load_job_handlers()  # dispatch runs only the handlers loaded
    dispatch(JobMessage.model_validate_json(body))
