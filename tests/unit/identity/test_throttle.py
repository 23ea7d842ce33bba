from datetime import datetime, timedelta, timezone

from chalicelib.identity import throttle

START = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)  # a window boundary (15-minute windows)


def test_a_window_lasts_fifteen_minutes():
    assert throttle.window_of(START + timedelta(minutes=14, seconds=59)) == throttle.window_of(START)
    assert throttle.window_of(START + timedelta(minutes=15)) == throttle.window_of(START) + 1


def test_retry_after_counts_the_seconds_left_in_the_window():
    assert throttle.retry_after_seconds(START) == 900
    assert throttle.retry_after_seconds(START + timedelta(minutes=14, seconds=30)) == 30
    assert throttle.retry_after_seconds(START + timedelta(minutes=14, seconds=59, microseconds=500000)) == 1


def test_user_names_are_counted_case_blind_and_never_in_clear():
    (upper,) = throttle.subjects("Ada@Example.com", None)
    lower, source = throttle.subjects(" ada@example.com", "203.0.113.9")
    assert upper == lower and "ada" not in upper.digest
    assert (upper.kind, upper.limit) == (throttle.USER_NAME, throttle.MAX_FAILURES_PER_USER_NAME)
    assert (source.kind, source.limit) == (throttle.SOURCE, throttle.MAX_FAILURES_PER_SOURCE)
    assert len(throttle.subjects("x" * 100_000, "::1")[0].digest) == 32
