"""Asynchronous work of the policies domain: the statuses that time changes, when their moment comes."""

from __future__ import annotations

from typing import Any

from chalicelib.core.context import CallContext
from chalicelib.policies import service
from chalicelib.runtime.due import DueWork, due_handler
from chalicelib.runtime.due_kinds import DueKind


@due_handler(DueKind.POLICY_STATUS_CHANGE)
def status_change(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    """Put by issuing the policy and by every issue that moves its start, end or cancellation; run by the due
    pager (every quarter hour, or a test clock's advance) at its moment: `policy.status.update`."""
    return service.run_status_change(ctx, work)
