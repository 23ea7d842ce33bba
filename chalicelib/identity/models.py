"""Identity records: users, roles, tokens, tenants."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, StringConstraints

from chalicelib.core.ids import is_uuid
from chalicelib.core.messages import Input
from chalicelib.core.permissions import ANY_TENANT

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
LastName = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)]
EmailStr = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=254, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
]
Password = Annotated[str, StringConstraints(min_length=1, max_length=1000)]


def _tenant_ref(value: str) -> str:
    if value != ANY_TENANT and not is_uuid(value.lower()):
        raise ValueError(f"must be a tenant locator (a UUID) or '{ANY_TENANT}'")
    return value.lower()


TenantRef = Annotated[str, StringConstraints(strip_whitespace=True), AfterValidator(_tenant_ref)]


class UserFields(Input):
    """A new user as a client describes it (POST /auth/users' body), what `service.create_user` takes."""

    userName: EmailStr
    firstName: Name
    lastName: LastName
    password: Password | None = None
    temporaryPassword: bool = False
    serviceAccount: bool = False
    email: EmailStr | None = None
    roles: list[Name] = []
    tenants: list[TenantRef] = []


class User(BaseModel):
    locator: str
    userName: str
    firstName: str
    lastName: str
    email: str | None = None
    serviceAccount: bool = False
    tenants: list[str] = []
    roleLocators: list[str] = []
    passwordHash: str | None = None
    temporaryPassword: bool = False
    enabled: bool = True
    sessionGeneration: int = 0
    version: int = 1
    createdAt: datetime
    createdBy: str


class Role(BaseModel):
    locator: str
    name: str
    description: str
    permissions: list[str]
    version: int = 1
    createdAt: datetime
    createdBy: str


class RoleHolders(BaseModel):
    """The tenants of the users who hold a role (`any` included), and the version of that record, which
    every change of a holder's roles or tenants bumps."""

    tenants: frozenset[str] = frozenset()
    version: int = 0


class TokenKind(StrEnum):
    SESSION = "session"
    NAMED = "named"


class Token(BaseModel):
    tokenHash: str
    userLocator: str
    kind: TokenKind
    name: str | None = None
    permissions: list[str] | None = None
    tenants: list[str] | None = None
    sessionGeneration: int = 0
    passwordChangeOnly: bool = False  # a sign-in with a temporary password: it may only change it
    createdAt: datetime
    expiresAt: datetime | None = None


class Tenant(BaseModel):
    locator: str
    name: str
    description: str | None = None
    createdAt: datetime
    createdBy: str
    testClock: bool = False
    """Created with a test clock (clock/service.py): the schedules pass it over."""


class UserProfile(BaseModel):
    """A user as the API shows it: the record plus its role names and effective permissions."""

    user: User
    roleNames: list[str]
    permissions: list[str]


class Session(BaseModel):
    """What a bearer token resolved to: the caller's profile, the roles version its permissions were
    computed at and the copy of it that was read (so the request can reuse cached roles, and commit a change
    of a user only while that version holds), and whether it may only change the password."""

    profile: UserProfile
    rolesVersion: int
    rolesVersionShard: int
    passwordChangeOnly: bool = False
