"""The auto-renewal job's due index: the policy roots with an auto-renewal plan, on GSI3 under
`storage/keys.renewals_due(tenant)` sorted by `{endTime}#{policyLocator}` (policies/repository.py writes
the keys wherever it writes a root). Read a page at a time by term end. An index is eventually
consistent: the job only picks candidates from it and works from each policy's consistent stack.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from chalicelib.core.clock import isoformat
from chalicelib.policies.models import Policy
from chalicelib.storage import codec, keys, table

INDEX = "GSI3"
SORT_KEY = f"{INDEX}SK"


@dataclass(frozen=True)
class DuePage:
    policies: list[Policy]
    after: str | None
    """The sort key to continue after, or None: the window has no more."""


def due(tenant: str, start: datetime, end: datetime, *, after: str | None, limit: int) -> DuePage:
    """Up to `limit` policies whose term ends in [start, end], in term end order, from `after` on."""
    scope, partition = keys.tenant_scope(tenant), keys.renewals_due(tenant)
    last = f"{isoformat(end)}#~"
    if after is None:
        items, more = table.gateway().query(scope, partition, index=INDEX, sk_from=isoformat(start), sk_to=last,
                                            limit=limit)
    else:
        items, more = table.gateway().query(scope, partition, index=INDEX, sk_after=after, sk_to=last, limit=limit)
    return DuePage([Policy.model_validate(codec.without_keys(item)) for item in items],
                   str(items[-1][SORT_KEY]) if more is not None and items else None)
