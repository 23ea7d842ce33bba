"""Asynchronous work of the plugins domain: publishing a configuration version's tenant code to its tenant
function (plugins/tenant_code.py)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chalicelib.core.context import CallContext
from chalicelib.plugins import tenant_code
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler


class Publish(BaseModel):
    version: str


def _gave_up(ctx: CallContext, payload: Publish) -> None:
    tenant_code.gave_up(ctx, payload.version)


@job_handler(JobType.TENANT_CODE_PUBLISH, payload=Publish, on_give_up=_gave_up)
def publish_tenant_code(ctx: CallContext, payload: Publish) -> dict[str, Any]:
    """Enqueued by a configuration deployment on the `lambda` runner (configuration/service.py), in the
    deployment's own unit of work. A transient Lambda or IAM error makes it run again (SQS delivers the
    message again); Lambda refusing the code fails it, and the version's tenant code is `failed`."""
    return tenant_code.publish(ctx, payload.version)
