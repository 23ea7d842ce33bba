"""Parallel state moves of one migration, threads against the app (each request reads the migration before either
writes: its moves are conditional on the version read): exactly one wins, the other answers 409 and moved nothing."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from chalicelib.migration import service
from tests.api.migration.support import account_request, control, events_of_type, fetch, start
from tests.support.api import assert_error, ok
from tests.support.in_turns import in_turns


def _racing(api, token, tenant, migration, actions, monkeypatch):
    turns = in_turns(monkeypatch)
    turns.writes_meet(len(actions))
    with ThreadPoolExecutor(len(actions)) as pool:
        return list(pool.map(lambda action: control(api, token, tenant, migration, action), actions))


def test_pause_racing_pause_and_resume_racing_resume_move_the_migration_once(
    api, admin_token, tenant, jobs, monkeypatch
):
    migration = ok(start(api, admin_token, tenant, [account_request("SRC-R1")]))["locator"]
    paused = _racing(api, admin_token, tenant, migration, ["pause", "pause"], monkeypatch)
    assert sorted(answer.status_code for answer in paused) == [200, 409]
    assert_error(next(a for a in paused if a.status_code == 409), 409, "conflict.concurrent_modification")
    assert fetch(api, admin_token, tenant, migration)["migrationState"] == "paused"

    resumed = _racing(api, admin_token, tenant, migration, ["resume", "resume"], monkeypatch)
    assert sorted(answer.status_code for answer in resumed) == [200, 409]
    assert [len(events_of_type(api, admin_token, tenant, f"migration.{kind}")) for kind in ("pause", "resume")] == [
        1,
        1,
    ]
    runs = [m for m in jobs.sent if m.job_type == "migration.run"]
    assert len(runs) == 2  # the start's and one resume's
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["completedAccounts"]) == ("finished", 1)


def test_a_pause_that_wins_the_race_with_the_last_accounts_end_is_resumed_to_the_end(
    api, admin_token, tenant, jobs, monkeypatch
):
    """The last account's job read the migration processing; a pause committed before its end move, which then
    lost (409, swallowed): the migration is paused with every account processed, and resume ends it."""
    migration = ok(start(api, admin_token, tenant, [account_request("SRC-R2")]))["locator"]
    real = service.get_migration
    paused: list[int] = []

    def read_then_paused(ctx, locator):
        found = real(ctx, locator)
        if found.processedAccounts == found.totalAccounts and not paused:
            paused.append(0)  # the pause's own read of the migration passes through
            paused[0] = control(api, admin_token, tenant, migration, "pause").status_code
        return found

    monkeypatch.setattr(service, "get_migration", read_then_paused)
    jobs.drain()
    assert paused == [200]
    stuck = fetch(api, admin_token, tenant, migration)
    assert (stuck["migrationState"], stuck["processedAccounts"]) == ("paused", 1)
    monkeypatch.setattr(service, "get_migration", real)
    assert control(api, admin_token, tenant, migration, "resume").status_code == 200
    jobs.drain()
    assert fetch(api, admin_token, tenant, migration)["migrationState"] == "finished"
    assert len(events_of_type(api, admin_token, tenant, "migration.finish")) == 1
