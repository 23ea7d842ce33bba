"""`X-Idempotency-Key`: the guard item is claimed inside the request's transaction (unit_of_work),
and the response is remembered on it afterwards, so a replay answers without doing the work again.

A key belongs to the user and is bound to the credential (the token) that made the first request: the
same user replaying it with another token gets 409, never the stored answer. An answer that carries a
secret (a new token) is not kept: its replay answers 409 naming what the first request created.

The guard is written in the transaction that makes the change, and the answer after it: an answer lost
between the two (a fault, a process killed) leaves a guard without one. A route that moves a record's state
can rebuild it from what that transaction committed (`@endpoint(replay=...)`: the record read as its fetch
answers it), and a replay of such a guard is `Committed`; so can a route that creates a record
(`@endpoint(creates=..., replay=...)`), whose guard keeps the created record's locator, written in the same
transaction (`Committed.created`). Any other route's replay answers 409 in progress."""

from __future__ import annotations

import base64
import hashlib
import zlib
from dataclasses import dataclass

from chalicelib.core import codes
from chalicelib.core.context import IdempotencyClaim
from chalicelib.storage import keys, table


def scope_of(tenant: str | None) -> str:
    """The key scope of a request's guard: its tenant's, or the system's for a request outside any tenant."""
    return keys.tenant_scope(tenant) if tenant else keys.SYSTEM_SCOPE


@dataclass(frozen=True)
class Replay:
    status: int
    body: str


@dataclass(frozen=True)
class Committed:
    """The guard's transaction committed, and its answer was never kept: the route rebuilds it (from the record
    `created`, for a create route)."""

    claim: IdempotencyClaim
    created: str | None = None


def claim_or_replay(
    scope: str,
    user_locator: str,
    credential: str,
    operation: str,
    key: str,
    request_fingerprint: bytes,
    *,
    rebuildable: bool = False,
    creates: str | None = None,
) -> IdempotencyClaim | Replay | Committed:
    """`rebuildable`: a state move's lost answer is rebuilt; `creates`: the entity a create route makes, whose
    lost answer is rebuilt from the record its guard names."""
    if not key or len(key) > 200:
        raise codes.IDEMPOTENCY_INVALID_KEY("X-Idempotency-Key must be 1 to 200 characters")
    request_hash = hashlib.sha256(request_fingerprint).hexdigest()
    guard = table.gateway().get(scope, keys.idempotency_guard(scope, user_locator, operation, key))
    if guard is None:
        return IdempotencyClaim(
            key=key, operation=operation, request_hash=request_hash, credential=credential, creates=creates
        )
    if guard.get("credential") != credential:
        raise codes.IDEMPOTENCY_OTHER_CREDENTIAL(
            "This idempotency key was used with another of your credentials; its answer goes only to that one"
        )
    if guard["requestHash"] != request_hash:
        raise codes.IDEMPOTENCY_KEY_REUSED("This idempotency key was used with a different request")
    if "secretCreated" in guard:
        raise codes.IDEMPOTENCY_SECRET_NOT_REPLAYABLE(
            f"The request with this idempotency key created {guard['secretCreated']}; its secret was "
            "answered once and is not kept, so it cannot be answered again"
        )
    if "responseBody" in guard:
        return Replay(status=int(guard["responseStatus"]), body=guard["responseBody"])
    if COMPRESSED in guard:
        return Replay(
            status=int(guard["responseStatus"]),
            body=zlib.decompress(base64.b64decode(guard[COMPRESSED])).decode("utf-8"),
        )
    if creates is not None and "createdLocator" in guard:
        return Committed(
            IdempotencyClaim(
                key=key,
                operation=operation,
                request_hash=request_hash,
                credential=credential,
                claimed=True,
                creates=creates,
            ),
            created=str(guard["createdLocator"]),
        )
    if rebuildable and creates is None:
        return Committed(
            IdempotencyClaim(
                key=key, operation=operation, request_hash=request_hash, credential=credential, claimed=True
            )
        )
    raise codes.IDEMPOTENCY_IN_PROGRESS("A request with this idempotency key is in progress")


PLAIN_ANSWER_CHARACTERS = 100_000
"""A longer answer is kept compressed (`COMPRESSED`): a record as large as an item holds answers a body larger
still (JSON spells a map's keys and strings longer than DynamoDB counts them), which the guard item must hold."""
COMPRESSED = "responseBodyZ"


def remember_response(scope: str, user_locator: str, claim: IdempotencyClaim, status: int, body: str) -> None:
    key = keys.idempotency_guard(scope, user_locator, claim.operation, claim.key)
    kept = (
        {"responseBody": body}
        if len(body) <= PLAIN_ANSWER_CHARACTERS
        else {COMPRESSED: base64.b64encode(zlib.compress(body.encode("utf-8"))).decode("ascii")}
    )
    table.gateway().write(scope, table.update(key, {"responseStatus": status, **kept}))


def remember_secret_created(scope: str, user_locator: str, claim: IdempotencyClaim, created: str) -> None:
    """In place of an answer that carries a secret: what it created (`created` names it, without the secret)."""
    key = keys.idempotency_guard(scope, user_locator, claim.operation, claim.key)
    table.gateway().write(scope, table.update(key, {"secretCreated": created}))
