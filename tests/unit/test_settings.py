"""Settings: the local stages' defaults (an administrator and secrets anyone can read in the source) apply on
a developer's machine and in the tests, never inside AWS Lambda, whatever stage name a deployment uses."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chalicelib.settings import Settings


def test_a_local_stage_outside_lambda_knows_its_administrator_and_secret():
    current = Settings(stage="dev")

    assert current.is_local
    assert (current.admin_username, current.admin_password, current.paging_secret) == (
        "admin@example.com",
        "admin",
        "pas-dev-paging-secret",
    )


@pytest.mark.parametrize("stage", ["dev", "test", "local"])
def test_a_local_stage_name_deployed_to_lambda_gets_no_defaults(stage):
    with pytest.raises(ValidationError, match="PAS_PAGING_SECRET is required"):
        Settings(stage=stage, in_lambda=True)

    deployed = Settings(stage=stage, in_lambda=True, paging_secret="from-the-deployment")
    assert not deployed.is_local
    assert (deployed.admin_username, deployed.admin_password) == (None, None)


def test_the_environment_says_whether_this_is_a_lambda(monkeypatch):
    from chalicelib.settings import reload

    monkeypatch.setenv("PAS_STAGE", "dev")
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "pas-dev")
    monkeypatch.setenv("PAS_PAGING_SECRET", "from-the-deployment")
    try:
        assert reload().in_lambda
        monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME")
        assert not reload().in_lambda
    finally:
        monkeypatch.undo()
        reload()


@pytest.mark.parametrize(
    ("environment", "tracing"),
    [
        ({"LAMBDA_TASK_ROOT": "/var/task"}, True),
        ({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "1"}, False),
        ({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "false"}, True),
        ({"LAMBDA_TASK_ROOT": "/var/task", "AWS_SAM_LOCAL": "true"}, False),
        ({"LAMBDA_TASK_ROOT": "/var/task", "AWS_CHALICE_CLI_MODE": "true"}, False),
        ({}, False),
    ],
)
def test_traces_go_to_x_ray_only_in_lambda_unless_turned_off(monkeypatch, environment, tracing):
    """Powertools' own rule (its Tracer is disabled in the same cases): where it is false, the Tracer and the
    X-Ray SDK are never loaded (runtime/observability.py)."""
    from chalicelib.settings import reload

    for name in ("LAMBDA_TASK_ROOT", "POWERTOOLS_TRACE_DISABLED", "AWS_SAM_LOCAL", "AWS_CHALICE_CLI_MODE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    try:
        assert reload().tracing is tracing
    finally:
        monkeypatch.undo()
        reload()
