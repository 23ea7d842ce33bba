"""Asynchronous work of the transactions domain: the auto-renewal of a policy when its due entry falls due."""
from __future__ import annotations

from typing import Any

from chalicelib.core.context import CallContext
from chalicelib.runtime.due import DueWork, due_handler
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.transactions import auto_renewal


@due_handler(DueKind.POLICY_AUTO_RENEW)
def auto_renew(ctx: CallContext, work: DueWork) -> dict[str, Any]:
    """Put by the policies domain at the renewal's first step, moved on to each next one here
    (auto_renewal.py); run by the due pager (every quarter hour, or a test clock's advance) at its due time."""
    return auto_renewal.renew_due(ctx, work)
