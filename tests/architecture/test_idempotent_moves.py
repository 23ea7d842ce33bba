"""The state moves whose lost answer a replay rebuilds (`@endpoint(replay=...)`, runtime/idempotency.py): each
rebuilds it with the fetch route of the record it moves (the same path without the move's last segment), whose
answer has the move's shape, and the moves a client retries most are among them (issue 31). The moves whose
answer no fetch route gives (REBUILT_OTHERWISE: a void move, an answer that depends on the request) rebuild it
with a view of their own of the move's shape."""
from __future__ import annotations

from tests.architecture.support import routes, spec_of

EXPECTED = {
    "PATCH /policy/{tenantLocator}/quotes/{locator}/accept", "PATCH /policy/{tenantLocator}/quotes/{locator}/issue",
    "PATCH /policy/{tenantLocator}/transactions/{locator}/accept",
    "PATCH /policy/{tenantLocator}/transactions/{locator}/issue",
    "PATCH /billing/{tenantLocator}/payments/{locator}/post",
    "PATCH /billing/{tenantLocator}/payments/{locator}/reverse",
    "PATCH /billing/{tenantLocator}/writeOffs/{locator}/reverse",
    "PATCH /billing/{tenantLocator}/creditDistributions/{locator}/execute",
    "PATCH /billing/{tenantLocator}/creditDistributions/{locator}/reverse",
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
        if spec.replay is None:
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
