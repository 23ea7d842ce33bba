"""The SQS worker: each message is one job, run through the same dispatch as tests and `make run`."""
from __future__ import annotations

from typing import Any

from chalice import Blueprint

from chalicelib.runtime.jobs import JobMessage, dispatch

bp = Blueprint(__name__)


@bp.on_sqs_message(queue="pas-jobs", batch_size=1)
def run_job(event: Any) -> None:
    for record in event:
        dispatch(JobMessage.model_validate_json(record.body))
