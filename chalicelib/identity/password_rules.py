"""What a new password must be: long enough, not one of the common passwords, not the user name."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

MIN_LENGTH = 10
MAX_LENGTH = 1000
COMMON_PASSWORDS = Path(__file__).with_name("common_passwords.txt")


@lru_cache(maxsize=1)
def _common_passwords() -> frozenset[str]:
    """Read on the first password set, never at import (cold starts stay fast)."""
    lines = COMMON_PASSWORDS.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def password_problems(password: str, user_name: str) -> list[str]:
    """Why `password` is refused for `user_name`; empty when it is acceptable."""
    problems = []
    if len(password) < MIN_LENGTH:
        problems.append(f"must be at least {MIN_LENGTH} characters long")
    if len(password) > MAX_LENGTH:
        problems.append(f"must be at most {MAX_LENGTH} characters long")
    folded = password.strip().lower()
    if folded in _common_passwords():
        problems.append("is one of the most common passwords")
    if folded in {user_name.lower(), user_name.lower().partition("@")[0]}:
        problems.append("must not be the user name")
    return problems
