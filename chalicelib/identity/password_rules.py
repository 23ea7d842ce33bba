"""What a new password must be: long enough as typed, not blank, not one character repeated, not a simple
sequence, not one of the common passwords, not the user name."""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from pathlib import Path

MIN_LENGTH = 10
MAX_LENGTH = 1000
COMMON_PASSWORDS = Path(__file__).with_name("common_passwords.txt")
# rows typed left to right (their reverses count too); the digits wrap round, as in 7890123456
SEQUENCES = (
    "0123456789" * 3,
    "`1234567890-=",
    "~!@#$%^&*()_+",
    "qwertyuiop[]\\",
    "asdfghjkl;'",
    "zxcvbnm,./",
)
_INVISIBLE = {"Zs", "Zl", "Zp", "Cc", "Cf"}  # separators, controls and format characters (zero-width space)


@lru_cache(maxsize=1)
def _common_passwords() -> frozenset[str]:
    """Read on the first password set, never at import (cold starts stay fast)."""
    lines = COMMON_PASSWORDS.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def password_problems(password: str, user_name: str) -> list[str]:
    """Why `password` is refused for `user_name`; empty when it is acceptable. The length counts what was
    typed; the shape rules (blank, repeated, sequence) look at the visible characters, case-blind, once the
    length is right."""
    problems = []
    if len(password) < MIN_LENGTH:
        problems.append(f"must be at least {MIN_LENGTH} characters long")
    elif len(password) > MAX_LENGTH:
        problems.append(f"must be at most {MAX_LENGTH} characters long")
    else:
        problems += _shape_problems("".join(c for c in password if not _is_blank(c)).casefold())
    folded = password.strip().lower()
    if folded in _common_passwords():
        problems.append("is one of the most common passwords")
    if folded in {user_name.lower(), user_name.lower().partition("@")[0]}:
        problems.append("must not be the user name")
    return problems


def _shape_problems(visible: str) -> list[str]:
    """What is wrong with the visible characters of a password of acceptable length."""
    if not visible:
        return ["must not be blank (whitespace only)"]
    if len(set(visible)) == 1:
        return ["must not be one character repeated"]
    if _is_sequence(visible):
        return ["must not be a simple sequence (like 0123456789, abcdefghij or qwertyuiop)"]
    return []


def _is_blank(character: str) -> bool:
    return character.isspace() or unicodedata.category(character) in _INVISIBLE


def _is_sequence(text: str) -> bool:
    """Consecutive characters of any alphabet (abc..., 987..., αβγ...), or a run along a keyboard row."""
    steps = {ord(b) - ord(a) for a, b in zip(text, text[1:])}
    if steps in ({1}, {-1}):
        return True
    return any(text in row or text in row[::-1] for row in SEQUENCES)
