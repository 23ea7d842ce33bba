"""The deployed job worker, its queue and the job lease are sized together: a worker killed by its
timeout is retried soon (its message comes back, or the reaper re-queues it), never while it still runs."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

from chalicelib.settings import Settings
from chalicelib.workers import queue

ROOT = Path(__file__).resolve().parents[2]
CONFIG = json.loads((ROOT / ".chalice" / "config.json").read_text())
TEMPLATE = json.loads((ROOT / "infra" / "template.json").read_text())
DEPLOYED_STAGE = "prod"
LOCAL_STAGE = "dev"
"""The stage of `make run` (local/run.py)."""
WORKER = "run_job"
"""The function of workers/queue.py that SQS triggers (chalice names its per-function settings so)."""
AWS_VISIBILITY_PER_TIMEOUT = 6
"""AWS: a queue feeding a Lambda function has a visibility timeout of at least six times its timeout."""


def stage_setting(stage: str, function: str, name: str) -> int:
    """As chalice reads it: the function's own value, else the stage's, else the top level's."""
    config = CONFIG["stages"][stage]
    for scope in (config.get("lambda_functions", {}).get(function, {}), config, CONFIG):
        if name in scope:
            return int(scope[name])
    raise AssertionError(f"{name} is not set for {function} in stage {stage}")


def lease_seconds(stage: str) -> int:
    environment = CONFIG["stages"][stage]["environment_variables"]
    if "PAS_JOB_LEASE_SECONDS" in environment:
        return int(environment["PAS_JOB_LEASE_SECONDS"])
    return Settings.model_fields["job_lease_seconds"].default


def test_the_queue_outlasts_six_worker_timeouts():
    timeout = stage_setting(DEPLOYED_STAGE, WORKER, "lambda_timeout")
    visibility = TEMPLATE["Resources"]["JobsQueue"]["Properties"]["VisibilityTimeout"]

    assert timeout * AWS_VISIBILITY_PER_TIMEOUT <= visibility
    assert visibility <= 2 * 3600, "a killed job would wait hours for its message to come back"


def test_the_lease_outlasts_the_worker_and_runs_out_before_the_message_comes_back():
    timeout = stage_setting(DEPLOYED_STAGE, WORKER, "lambda_timeout")
    visibility = TEMPLATE["Resources"]["JobsQueue"]["Properties"]["VisibilityTimeout"]
    lease = lease_seconds(DEPLOYED_STAGE)

    assert timeout < lease, "the reaper would re-queue a job whose worker still runs"
    assert lease <= visibility, "a redelivered message would find the lease running and be dropped"


def test_the_worker_timeout_is_set_for_the_function_the_queue_triggers():
    functions = CONFIG["stages"][DEPLOYED_STAGE].get("lambda_functions", {})

    assert WORKER in functions
    source = inspect.getsource(queue)
    assert "@bp.on_sqs_message(" in source and f"def {WORKER}(" in source


def test_the_readme_gives_the_figures_of_the_deployed_stage_and_of_make_run():
    readme = (ROOT / "README.md").read_text()
    timeout = stage_setting(DEPLOYED_STAGE, WORKER, "lambda_timeout")
    visibility = TEMPLATE["Resources"]["JobsQueue"]["Properties"]["VisibilityTimeout"]

    assert (
        f"deployed (stage `{DEPLOYED_STAGE}`, `.chalice/config.json`): worker timeout {timeout} s < job lease "
        f"{lease_seconds(DEPLOYED_STAGE)} s <= SQS visibility {visibility} s"
    ) in readme
    assert f"`make run` (stage `{LOCAL_STAGE}`): job lease {lease_seconds(LOCAL_STAGE)} s" in readme
