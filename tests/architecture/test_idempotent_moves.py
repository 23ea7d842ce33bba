"""The state moves whose lost answer a replay rebuilds (`@endpoint(replay=...)`, runtime/idempotency.py): each
rebuilds it with the fetch route of the record it moves (the same path without the move's last segment), whose
answer has the move's shape, and the moves a client retries most are among them (issue 31). The moves whose
answer no fetch route gives (REBUILT_OTHERWISE: a void move, an answer that depends on the request) rebuild it
with a view of their own of the move's shape. A keyed create rebuilds it with the fetch of the record it created
(`@endpoint(creates=..., replay=...)`)."""

from __future__ import annotations

from tests.architecture.support import routes, spec_of

EXPECTED = {
    "PATCH /policy/{tenantLocator}/quotes/{locator}/accept",
    "PATCH /policy/{tenantLocator}/quotes/{locator}/issue",
    "PATCH /policy/{tenantLocator}/transactions/{locator}/accept",
    "PATCH /policy/{tenantLocator}/transactions/{locator}/issue",
    "PATCH /billing/{tenantLocator}/payments/{locator}/post",
    "PATCH /billing/{tenantLocator}/payments/{locator}/reverse",
    "PATCH /billing/{tenantLocator}/writeOffs/{locator}/reverse",
    "PATCH /billing/{tenantLocator}/creditDistributions/{locator}/execute",
    "PATCH /billing/{tenantLocator}/creditDistributions/{locator}/reverse",
    "PATCH /billing/{tenantLocator}/disbursements/{locator}/validate",
    "PATCH /billing/{tenantLocator}/disbursements/{locator}/approve",
    "PATCH /billing/{tenantLocator}/disbursements/{locator}/execute",
    "PATCH /billing/{tenantLocator}/disbursements/{locator}/reverse",
}
REBUILT_OTHERWISE = {
    "PATCH /migration/{tenantLocator}/migrations/{migrationLocator}/pause": "void, once the migration is read",
    "PATCH /migration/{tenantLocator}/migrations/{migrationLocator}/resume": "void, once the migration is read",
    "PATCH /migration/{tenantLocator}/migrations/{migrationLocator}/recover": "void, once the migration is read",
    "PATCH /migration/{tenantLocator}/migrations/{migrationLocator}": "the failures the patch kept for its key",
    "POST /compliance/{tenantLocator}/anonymize": "the jobs the keyed request started, started again if it did not",
}


def test_every_rebuilt_answer_is_the_fetch_of_the_moved_record(app):
    from typing import get_type_hints

    views = {(method, path): entry.view_function for path, method, entry in routes(app)}
    rebuilt, wrong = set(), []
    for path, method, entry in routes(app):
        spec, view = spec_of(entry), entry.view_function
        if spec.replay is None or spec.creates is not None:  # a create's: the next test's
            continue
        rebuilt.add(f"{method} {path}")
        fetch = views.get(("GET", path.rsplit("/", 1)[0]))
        if f"{method} {path}" in REBUILT_OTHERWISE:
            if any(view.__wrapped__ is spec.replay for view in views.values()):
                wrong.append(f"{method} {path}: rebuilt otherwise, but by a route")
        elif fetch is None or fetch.__wrapped__ is not spec.replay:
            wrong.append(f"{method} {path}: replay is not the GET of {path.rsplit('/', 1)[0]}")
        elif get_type_hints(spec.replay)["return"] is not get_type_hints(view.__wrapped__)["return"]:
            wrong.append(f"{method} {path}: the fetch answers another shape than the move")
        if not spec.idempotent:
            wrong.append(f"{method} {path}: replay without idempotent")
    assert wrong == []
    assert EXPECTED | REBUILT_OTHERWISE.keys() <= rebuilt


CREATES = {
    "POST /policy/{tenantLocator}/accounts": "account",
    "POST /policy/{tenantLocator}/quotes": "quote",
    "POST /billing/{tenantLocator}/payments": "payment",
    "POST /billing/{tenantLocator}/writeOffs": "writeOff",
    "POST /billing/{tenantLocator}/creditDistributions": "creditDistribution",
    "POST /billing/{tenantLocator}/disbursements": "disbursement",
    "POST /auth/users": "user",
    "POST /auth/roles": "role",
    "POST /policy/{tenantLocator}/quickquotes": "quickQuote",
    "POST /billing/{tenantLocator}/holds": "hold",
    "POST /migration/{tenantLocator}/migrations": "migration",
    "POST /migration/{tenantLocator}/migrations/accounts/{accountLocator}": "migration",
    **{
        f"PATCH /policy/{{tenantLocator}}/policies/{{locator}}/{kind}": "transaction"
        for kind in ("change", "renew", "cancel", "reinstate", "reversal", "{transactionType}")
    },
}


def test_every_keyed_create_rebuilds_a_lost_answer_from_the_record_it_created(app):
    """A keyed create whose record has a fetch route (`GET <path>/{locator}`, answering the create's shape)
    declares what it creates and replays that fetch: a retry after its answer was lost after the commit answers
    the created record, never 409 in progress for good (issue 31)."""
    from typing import get_type_hints

    views = {(method, path): entry.view_function for path, method, entry in routes(app)}
    declared, missing = {}, []
    for path, method, entry in routes(app):
        spec, view = spec_of(entry), entry.view_function
        fetch = views.get(("GET", f"{path}/{{locator}}"))
        if method != "POST" or not spec.idempotent or fetch is None:
            continue
        if get_type_hints(fetch.__wrapped__)["return"] is not get_type_hints(view.__wrapped__)["return"]:
            continue
        if spec.creates is None or spec.replay is not fetch.__wrapped__:
            missing.append(f"{method} {path}: creates={spec.creates}, replay is not the GET of {path}/{{locator}}")
        else:
            declared[f"{method} {path}"] = spec.creates
    for path, method, entry in routes(app):  # the creates of a record under another (a policy's transactions)
        spec, view = spec_of(entry), entry.view_function
        if spec.creates is not None and f"{method} {path}" not in declared:
            if (
                spec.replay is None
                or get_type_hints(spec.replay)["return"] is not get_type_hints(view.__wrapped__)["return"]
                or not spec.idempotent
            ):
                missing.append(f"{method} {path}: creates={spec.creates} replays no fetch of its shape")
            declared[f"{method} {path}"] = spec.creates
    assert missing == [], "\n".join(missing)
    assert CREATES.items() <= declared.items()
