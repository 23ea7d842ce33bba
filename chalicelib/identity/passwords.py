"""argon2id password hashing (RFC 9106 parameters from argon2-cffi), built on first use."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from chalicelib.runtime import wiring

if TYPE_CHECKING:
    from argon2 import PasswordHasher

# A fixed hash to verify against when the user does not exist, so both failures take the same time.
_DUMMY_PASSWORD = "not-a-password"


@lru_cache(maxsize=1)
def _hasher() -> PasswordHasher:
    from argon2 import PasswordHasher

    return PasswordHasher()


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _hasher().hash(_DUMMY_PASSWORD)


def _active_hasher() -> wiring.PasswordHasher:
    return wiring.password_hasher() or _hasher()


def hash_password(password: str) -> str:
    return _active_hasher().hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    from argon2.exceptions import InvalidHashError, VerificationError

    try:
        return bool(_active_hasher().verify(password_hash or _dummy_hash(), password)) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False
