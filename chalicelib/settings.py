"""Settings: the only module that reads the process environment. Read once, validated. A leaf: storage and
runtime both read it, and it imports nothing of the service."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, Field, model_validator

LOCAL_STAGES = frozenset({"dev", "test", "local"})


class Settings(BaseModel, frozen=True):
    stage: str = "dev"
    region: str = "us-east-1"
    table_name: str = "pas-core"
    bucket_name: str = "pas-blobs"
    jobs_queue_name: str = "pas-jobs"
    aws_endpoint_url: str | None = None
    aws_unsigned: bool = False
    """DynamoDB requests go unsigned to the tests' in-process moto, which checks no signature (botocore's SigV4
    signing was a seventh of a billing test's CPU). Honoured on the local stages without an endpoint URL only: a
    moto server (`make run`) reads the account and region of a request from its signature."""
    admin_username: str | None = None
    admin_password: str | None = None
    session_token_ttl_seconds: int = Field(3600, ge=60)
    max_json_body_bytes: int = Field(1024 * 1024, ge=1024)
    max_upload_body_bytes: int = Field(10 * 1024 * 1024, ge=1024)
    """The direct limit of a file body: API Gateway takes at most 10 MB a request. A larger file goes through
    `POST /uploads` (DECISIONS.md "Uploads")."""
    max_upload_object_bytes: int = Field(100 * 1024 * 1024, ge=1024)
    """The largest file an upload intent may announce."""
    paging_secret: str | None = None
    job_lease_seconds: int = Field(900, ge=10)
    event_settle_ms: int = Field(2000, ge=0)
    """The event stream lists only events committed at least this long ago (DECISIONS.md)."""
    test_clocks: bool | None = None
    """Tenants may be created with a test clock (`createTenant?testClock=true`, DECISIONS.md "Test clocks"):
    true by default on the local stages (tests, `make run`), false elsewhere unless PAS_TEST_CLOCKS says so."""
    plugin_runner: Literal["local", "lambda"] = "local"
    plugin_function_name: str = "pas-tenant-{tenant}"
    """The tenant function of `PAS_PLUGIN_RUNNER=lambda` (its IAM role takes the same name)."""
    tenant_function_boundary_arn: str | None = None
    """The permissions boundary of every tenant function's role (infra/template.json `TenantFunctionBoundary`)."""
    tenant_function_subnet_ids: str = ""
    """Comma-separated subnets without a route out, for the tenant functions (none: no VPC, locally only)."""
    tenant_function_security_group_ids: str = ""
    tenant_function_concurrency: int = Field(5, ge=0)
    """Reserved concurrency of each tenant function (0: none reserved)."""
    tenant_function_versions_kept: int = Field(10, ge=1)
    """Configuration versions whose code a tenant function keeps: the most recently published ones, and always the
    current one; each publish removes the other versions' aliases (a call needing one publishes it again)."""
    warm_renderers: int | None = Field(None, ge=0, le=16)
    """Renderers started ahead of their request and kept waiting (documents/rendering.py), each for one render.
    Unset: 2 with tenant code in the local sandbox, none on the test stage (tests stay deterministic) and none
    with tenant code in its function (renders go there)."""
    in_lambda: bool = False
    """Running in AWS Lambda (AWS_LAMBDA_FUNCTION_NAME set): never a local stage, whatever PAS_STAGE says,
    so a deployed `dev` or `test` stage gets no default administrator or secret."""
    tracing: bool = False
    """Traces go to X-Ray: in Lambda (LAMBDA_TASK_ROOT), not under SAM's or Chalice's local emulation, and not
    turned off by POWERTOOLS_TRACE_DISABLED (Powertools' own rule). Without it the Tracer, and so the X-Ray
    SDK, is never loaded (runtime/observability.py: a cold start's first request need not pay for it)."""

    @model_validator(mode="after")
    def _local_defaults(self) -> Settings:
        if self.is_local:
            # one laptop, one command: the local stages know their own admin and signing secret
            defaults = {
                "admin_username": self.admin_username or "admin@example.com",
                "admin_password": self.admin_password or "admin",
                "paging_secret": self.paging_secret or f"pas-{self.stage}-paging-secret",
                "test_clocks": True if self.test_clocks is None else self.test_clocks,
            }
            object.__setattr__(self, "__dict__", {**self.__dict__, **defaults})
        elif not self.paging_secret:
            raise ValueError("PAS_PAGING_SECRET is required outside the local stages (and in any Lambda)")
        if not self.is_local and self.test_clocks is None:
            object.__setattr__(self, "__dict__", {**self.__dict__, "test_clocks": False})
        if self.warm_renderers is None:
            warm = 0 if self.stage == "test" or self.plugin_runner == "lambda" else 2
            object.__setattr__(self, "__dict__", {**self.__dict__, "warm_renderers": warm})
        return self

    @property
    def is_local(self) -> bool:
        return self.stage in LOCAL_STAGES and not self.in_lambda


_ENV_NAMES = {
    "stage": "PAS_STAGE",
    "table_name": "PAS_TABLE_NAME",
    "bucket_name": "PAS_BUCKET_NAME",
    "jobs_queue_name": "PAS_JOBS_QUEUE_NAME",
    "aws_endpoint_url": "PAS_AWS_ENDPOINT_URL",
    "aws_unsigned": "PAS_AWS_UNSIGNED",
    "admin_username": "PAS_ADMIN_USERNAME",
    "admin_password": "PAS_ADMIN_PASSWORD",
    "session_token_ttl_seconds": "PAS_TOKEN_TTL_SECONDS",
    "max_json_body_bytes": "PAS_MAX_JSON_BODY_BYTES",
    "max_upload_body_bytes": "PAS_MAX_UPLOAD_BODY_BYTES",
    "max_upload_object_bytes": "PAS_MAX_UPLOAD_OBJECT_BYTES",
    "paging_secret": "PAS_PAGING_SECRET",
    "job_lease_seconds": "PAS_JOB_LEASE_SECONDS",
    "event_settle_ms": "PAS_EVENT_SETTLE_MS",
    "test_clocks": "PAS_TEST_CLOCKS",
    "plugin_runner": "PAS_PLUGIN_RUNNER",
    "plugin_function_name": "PAS_PLUGIN_FUNCTION_NAME",
    "tenant_function_boundary_arn": "PAS_TENANT_FUNCTION_BOUNDARY_ARN",
    "tenant_function_subnet_ids": "PAS_TENANT_FUNCTION_SUBNET_IDS",
    "tenant_function_security_group_ids": "PAS_TENANT_FUNCTION_SECURITY_GROUP_IDS",
    "tenant_function_concurrency": "PAS_TENANT_FUNCTION_CONCURRENCY",
    "tenant_function_versions_kept": "PAS_TENANT_FUNCTION_VERSIONS_KEPT",
    "warm_renderers": "PAS_WARM_RENDERERS",
}


_TRUTHY = frozenset({"1", "y", "yes", "t", "true", "on"})
"""What Powertools reads as true (its `strtobool`)."""


@lru_cache(maxsize=1)
def settings() -> Settings:
    values = {field: os.environ[name] for field, name in _ENV_NAMES.items() if os.environ.get(name)}
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        values["region"] = region
    tracing = (
        bool(os.environ.get("LAMBDA_TASK_ROOT"))
        and not os.environ.get("AWS_SAM_LOCAL")
        and not os.environ.get("AWS_CHALICE_CLI_MODE")
        and os.environ.get("POWERTOOLS_TRACE_DISABLED", "false").strip().lower() not in _TRUTHY
    )
    return Settings(**values, in_lambda=bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME")), tracing=tracing)


def reload() -> Settings:
    """Forget the cached settings (tests that change the environment)."""
    settings.cache_clear()
    return settings()
