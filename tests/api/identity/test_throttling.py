"""Sign-in throttling: 10 failures per user name (known or not) and 100 per source address in a
15-minute window, then 429 with Retry-After until the window ends, even for the right password. An attempt
is counted before its password is checked, so parallel attempts never get more checks than the limit."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import pytest
from argon2 import PasswordHasher

from tests.api.identity.support import PASSWORD, assert_error, sign_in, user_with_password, whoami
from tests.builders import unique_name
from tests.support.api import ok


@pytest.fixture(autouse=True)
def bootstrapped(admin_token) -> None:
    """The session's first sign-in bootstraps the administrator, an event the failures here must not own."""


def own_window(clock, days: int) -> None:
    """Every test here works in a window of its own: the source address of the test client is shared."""
    clock.advance(days=days)


def fail(api, user_name: str, times: int) -> None:
    for _ in range(times):
        assert_error(sign_in(api, user_name, "not the password"), 401, "auth.sign_in_failed")


def assert_throttled(response, retry_after: int) -> None:
    assert_error(response, 429, "auth.sign_in_throttled")
    assert response.headers["Retry-After"] == str(retry_after)


def test_ten_failures_throttle_the_user_name_even_for_the_right_password(api, clock):
    own_window(clock, 101)
    _, name = user_with_password([])
    clock.advance(minutes=5)  # 10 minutes left in the window
    fail(api, name, 10)
    assert_throttled(sign_in(api, name), 600)
    assert_throttled(sign_in(api, name.upper()), 600)  # user names are case-blind
    clock.advance(minutes=9, seconds=30)
    assert_throttled(sign_in(api, name, "not the password"), 30)


def test_an_unknown_user_name_gets_the_same_answers(api, clock):
    own_window(clock, 102)
    name = unique_name()
    fail(api, name, 10)
    assert_throttled(sign_in(api, name), 900)


def test_the_user_signs_in_again_once_the_window_is_over(api, clock):
    own_window(clock, 103)
    _, name = user_with_password([])
    fail(api, name, 10)
    clock.advance(minutes=15)
    ok(whoami(api, ok(sign_in(api, name))["access_token"]))


def test_a_success_clears_the_user_names_failures(api, clock):
    own_window(clock, 104)
    _, name = user_with_password([])
    fail(api, name, 9)
    ok(sign_in(api, name))
    fail(api, name, 9)
    ok(sign_in(api, name, PASSWORD))


def test_other_user_names_are_not_throttled_by_one_users_failures(api, clock):
    own_window(clock, 105)
    _, victim = user_with_password([])
    _, bystander = user_with_password([])
    fail(api, victim, 10)
    ok(sign_in(api, bystander))


def test_a_source_with_too_many_failures_is_throttled_for_every_user_name(api, clock):
    from chalicelib.core.errors import TooManyRequests
    from chalicelib.identity import repository, throttle

    own_window(clock, 106)
    _, name = user_with_password([])
    window = throttle.window_of(clock.now())
    source = next(s for s in throttle.subjects(name, "127.0.0.1") if s.kind == throttle.SOURCE)
    for _ in range(throttle.MAX_FAILURES_PER_SOURCE - 1):  # what 99 failed sign-ins from it leave behind
        repository.count_sign_in_attempt(
            [(source.kind, source.digest, source.limit)], window, 0, on_limit=lambda: TooManyRequests("unexpected", 1)
        )
    ok(sign_in(api, name))  # the source's count is not cleared by a success
    assert_error(sign_in(api, unique_name()), 401, "auth.sign_in_failed")
    assert_throttled(sign_in(api, name), 900)
    clock.advance(minutes=15)
    ok(sign_in(api, name))


def test_throttled_attempts_do_not_extend_the_lockout(api, clock):
    own_window(clock, 107)
    _, name = user_with_password([])
    fail(api, name, 10)
    for _ in range(20):
        assert sign_in(api, name, "guess").status_code == 429
    clock.advance(minutes=15)
    assert_error(sign_in(api, name, "guess"), 401, "auth.sign_in_failed")
    ok(sign_in(api, name))


class CountingHasher(PasswordHasher):
    """The tests' cheap argon2id, counting its checks, each as slow as a real one can be under load (so
    parallel attempts overlap)."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=64, parallelism=1)
        self.checks = 0
        self._lock = threading.Lock()

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        with self._lock:
            self.checks += 1
        time.sleep(0.05)
        return super().verify(hash, password)


def test_parallel_wrong_passwords_are_checked_at_most_ten_times(api, clock, dynamodb_in_turns):
    from chalicelib.runtime import wiring

    own_window(clock, 108)
    _, name = user_with_password([])
    hasher = CountingHasher()
    wiring.override(password_hasher=hasher)

    with ThreadPoolExecutor(20) as pool:
        responses = list(pool.map(lambda _: sign_in(api, name, "not the password"), range(20)))

    assert hasher.checks == 10
    assert sorted(r.status_code for r in responses) == [401] * 10 + [429] * 10
    for response in responses:
        if response.status_code == 429:
            assert_throttled(response, 900)
        else:
            assert_error(response, 401, "auth.sign_in_failed")
    assert_throttled(sign_in(api, name), 900)
    assert hasher.checks == 10
