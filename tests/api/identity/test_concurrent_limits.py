"""The 10-named-token limit and user-name uniqueness hold under parallel requests: both are guarded by
items written in the request's own transaction, never by a count read before it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from chalicelib.core.errors import Conflict
from tests.api.identity.support import user_body
from tests.builders import new_user, system_ctx
from tests.support.api import call, ok


def after_all_parties(monkeypatch, module: Any, name: str, parties: int) -> None:
    """Make `module.name` wait, once it has run, until `parties` threads ran it: every request has done
    that step before any goes further (the interleaving where a count-then-write check fails)."""
    barrier = threading.Barrier(parties, timeout=30)
    original = getattr(module, name)

    def step(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        barrier.wait()
        return result

    monkeypatch.setattr(module, name, step)


def in_parallel(action: Callable[[int], Any], parties: int) -> list[Any]:
    """Each outcome: the result, or the DomainError raised."""

    def attempt(i: int) -> Any:
        try:
            return action(i)
        except Conflict as error:
            return error

    with ThreadPoolExecutor(parties) as pool:
        return list(pool.map(attempt, range(parties)))


def test_parallel_token_creations_never_pass_ten(api, monkeypatch, dynamodb_in_turns):
    from chalicelib.identity import repository, service

    locator, token = new_user([], [])  # holds one named token already
    ctx = system_ctx()
    for i in range(7):
        service.create_token(
            ctx, locator, name=f"kept-{i}", permissions=[], tenants=[], expires_at=ctx.now + timedelta(days=1)
        )
    after_all_parties(monkeypatch, repository, "named_tokens", 4)  # each reads 8 tokens before any writes

    outcomes = in_parallel(
        lambda i: service.create_token(
            ctx, locator, name=f"parallel-{i}", permissions=[], tenants=[], expires_at=ctx.now + timedelta(days=1)
        ),
        4,
    )

    refused = [o for o in outcomes if isinstance(o, Conflict)]
    assert len(refused) == 2 and {e.code for e in refused} == {"token.limit_reached"}
    monkeypatch.undo()
    assert len(ok(call(api, "GET", f"/auth/users/{locator}/tokens", token))) == 10


def test_a_deleted_token_frees_its_slot(api, clock):
    from tests.api.identity.support import assert_error, token_body

    locator, token = new_user([], [])
    tokens = f"/auth/users/{locator}/tokens"
    for i in range(9):
        ok(call(api, "POST", f"{tokens}", token, token_body(clock, name=f"t{i}")))
    assert_error(call(api, "POST", tokens, token, token_body(clock, name="eleventh")), 409, "token.limit_reached")
    assert call(api, "DELETE", f"{tokens}/t3", token).status_code == 200
    ok(call(api, "POST", tokens, token, token_body(clock, name="eleventh")))
    assert len(ok(call(api, "GET", tokens, token))) == 10


def test_parallel_creations_of_one_user_name_create_one_user(api, admin_token, monkeypatch, dynamodb_in_turns):
    from chalicelib.identity import repository, service
    from chalicelib.identity.models import UserFields

    name = user_body()["userName"]
    spellings = [name, name.upper(), name.capitalize(), name]
    after_all_parties(monkeypatch, repository, "add_user", len(spellings))  # all commit together

    outcomes = in_parallel(
        lambda i: service.create_user(
            system_ctx(), UserFields(userName=spellings[i], firstName="Twin", lastName=str(i)), enable_user=True
        ),
        len(spellings),
    )

    created = [o for o in outcomes if not isinstance(o, Conflict)]
    assert len(created) == 1
    assert {o.code for o in outcomes if isinstance(o, Conflict)} == {"user.name_taken"}
    monkeypatch.undo()
    found = ok(call(api, "GET", f"/auth/users/username/{name}", admin_token))
    assert [u["locator"] for u in found] == [created[0].user.locator]
