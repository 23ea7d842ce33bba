"""The run job (issue 29 "Measured", stop 43): it queues the run's accounts with their messages 10 to a
SendMessageBatch, a slice of ACCOUNTS_PER_RUN_JOB accounts per run job (each enqueueing the next slice's once), so a
run job delivered again (its worker died, its lease ran out) goes through its own slice only and queues no account
twice."""

from __future__ import annotations

import math

import pytest

from chalicelib.migration import repository, service
from tests.api.migration.support import account_request, control, fetch, start
from tests.support.api import ok

RUN = frozenset({"migration.run"})


def _accounts(count: int, prefix: str) -> list[dict]:
    return [account_request(f"{prefix}{n}", policies=[]) for n in range(count)]


def _account_jobs(jobs) -> list[str]:
    return [sent.job_locator for sent in jobs.sent if sent.job_type == "migration.account"]


@pytest.mark.parametrize("count", [1, 10, 23, 41])
def test_the_run_job_of_n_accounts_sends_their_messages_in_ceil_n_over_10_batches(
    api, admin_token, tenant, jobs, count
):
    migration = ok(start(api, admin_token, tenant, _accounts(count, "SRC-B")))["locator"]
    before = jobs.calls
    jobs.drain(job_types=RUN)
    assert jobs.calls - before == math.ceil(count / 10)
    assert len(set(_account_jobs(jobs))) == len(_account_jobs(jobs)) == count
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["completedAccounts"]) == ("finished", count)


def test_a_run_in_slices_enqueues_each_slice_once_and_batches_each_chunk(api, admin_token, tenant, jobs, monkeypatch):
    """9 accounts, slices of 4, chunks of 2: 3 run jobs (2 continuations, one send each), 5 chunks of 1 batch each;
    the request read 700 bytes at a time (its lines are longer: each is carried over windows)."""
    monkeypatch.setattr(service, "ACCOUNTS_PER_RUN_JOB", 4)
    monkeypatch.setattr(repository, "REQUEST_WINDOW", 700)
    monkeypatch.setattr(service, "ACCOUNTS_PER_WRITE", 2)
    migration = ok(start(api, admin_token, tenant, _accounts(9, "SRC-S")))["locator"]
    before = jobs.calls
    jobs.drain(job_types=RUN)
    assert [sent.payload.get("at", 0) > 0 for sent in jobs.sent if sent.job_type == "migration.run"] == [
        False,
        True,
        True,
    ]
    assert jobs.calls - before == 2 + 5
    assert len(set(_account_jobs(jobs))) == len(_account_jobs(jobs)) == 9
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["completedAccounts"], done["processedAccounts"]) == ("finished", 9, 9)


def test_a_run_job_killed_mid_slice_and_delivered_again_queues_each_account_once(
    api, admin_token, tenant, jobs, monkeypatch
):
    """The run job's worker dies after its second chunk committed; SQS delivers its message again (and once more
    after it finished, as a second worker would): the rerun skips the committed chunks, queues the rest, and
    every account is queued and processed once."""
    monkeypatch.setattr(service, "ACCOUNTS_PER_RUN_JOB", 6)
    monkeypatch.setattr(service, "ACCOUNTS_PER_WRITE", 2)
    real, commits = service._queue, []

    def killed_after_the_second_chunk(ctx, migration, payload, chunk, lines=None, numbered=None):
        queued = real(ctx, migration, payload, chunk, lines, numbered)
        commits.append(queued)
        if len(commits) == 2:
            raise RuntimeError("worker killed")
        return queued

    monkeypatch.setattr(service, "_queue", killed_after_the_second_chunk)
    migration = ok(start(api, admin_token, tenant, _accounts(11, "SRC-R")))["locator"]
    with pytest.raises(RuntimeError, match="worker killed"):
        jobs.drain(job_types=RUN)
    assert len(_account_jobs(jobs)) == 4
    (first,) = [sent for sent in jobs.sent if sent.job_type == "migration.run"]
    jobs.send(first.model_dump_json())  # delivered again: its worker did not delete it
    jobs.drain(job_types=RUN)
    assert commits[2:4] == [0, 0]  # the rerun's first two chunks: queued before, skipped
    for sent in [sent for sent in jobs.sent if sent.job_type == "migration.run"]:
        jobs.send(sent.model_dump_json())  # and each run job once more after it finished
    before = jobs.calls
    jobs.drain(job_types=RUN)
    assert jobs.calls == before  # nothing queued again
    assert len(set(_account_jobs(jobs))) == len(_account_jobs(jobs)) == 11
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["completedAccounts"], done["processedAccounts"]) == ("finished", 11, 11)


def test_a_resume_goes_through_the_accounts_in_slices(api, admin_token, tenant, jobs, monkeypatch):
    monkeypatch.setattr(service, "ACCOUNTS_PER_RUN_JOB", 3)
    monkeypatch.setattr(service, "ACCOUNTS_PER_WRITE", 2)
    migration = ok(start(api, admin_token, tenant, _accounts(7, "SRC-P")))["locator"]
    assert control(api, admin_token, tenant, migration, "pause").status_code in (200, 204)
    jobs.drain()  # the accounts' jobs find the migration paused and leave them pending
    paused = fetch(api, admin_token, tenant, migration)
    assert (paused["migrationState"], paused["processedAccounts"]) == ("paused", 0)
    queued_before = len(_account_jobs(jobs))
    assert control(api, admin_token, tenant, migration, "resume").status_code in (200, 204)
    jobs.drain(job_types=RUN)
    resumed = _account_jobs(jobs)[queued_before:]
    assert len(set(resumed)) == len(resumed) == 7
    jobs.drain()
    done = fetch(api, admin_token, tenant, migration)
    assert (done["migrationState"], done["completedAccounts"]) == ("finished", 7)
