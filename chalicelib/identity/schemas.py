"""The identity API contract (field names as the spec and the OpenAPI definition spell them)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListResponse
from chalicelib.identity.models import EmailStr, LastName, Name, Role, TenantRef, UserFields, UserProfile

Text = Annotated[str, StringConstraints(max_length=2000)]


def _utc(value: datetime) -> datetime:
    """A datetime without an offset is UTC, as everywhere on the wire."""
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value


UtcDatetime = Annotated[datetime, AfterValidator(_utc)]


class AuthTokenCreateRequest(Input):
    name: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.\- ]+$")
    ]
    expiresAt: UtcDatetime
    permissions: list[Name]
    tenants: list[TenantRef]


class AuthTokenResponse(Response):
    name: str
    expiresAt: datetime
    createdAt: datetime
    permissions: list[str] = []
    tenants: list[str] = []


NewPassword = Annotated[str, StringConstraints(min_length=1, max_length=1000)]
"""A password as a request body carries it (the password rules are the service's)."""


class TokenGrantRequest(BaseModel):
    grant_type: str
    username: str = ""
    password: str = ""
    model_config = ConfigDict(extra="ignore")


class TokenGrantResponse(Response):
    access_token: str
    token_type: str = "Bearer"
    expires_in: int


class UserCreateRequest(UserFields):
    pass


class UserUpdateRequest(Input):
    firstName: Name
    lastName: LastName
    tenants: list[TenantRef]
    email: EmailStr | None = None
    roles: list[Name] | None = None
    permissions: list[Name] | None = Field(None, description="Permissions are granted through roles only")


class UserRolesUpdateRequest(Input):
    addRoles: list[Name]
    removeRoles: list[Name]


class UserTenantsAssignmentsUpdateRequest(Input):
    addTenants: list[TenantRef]
    removeTenants: list[Name]


class UserResponse(Response):
    locator: str
    userName: str
    firstName: str
    lastName: str
    email: str | None = None
    serviceAccount: bool
    tenants: list[str]
    roles: list[str]
    permissions: list[str]

    @classmethod
    def of(cls, profile: UserProfile) -> UserResponse:
        fields = profile.user.model_dump(include=set(cls.model_fields))
        return cls(**fields, roles=profile.roleNames, permissions=profile.permissions)


class UserListResponse(ListResponse[UserResponse]):
    pass


class BasicUserResponse(Response):
    locator: str
    userName: str
    firstName: str | None = None
    lastName: str | None = None

    @classmethod
    def of(cls, profile: UserProfile) -> BasicUserResponse:
        user = profile.user
        return cls(locator=user.locator, userName=user.userName, firstName=user.firstName, lastName=user.lastName)


class BasicUserListResponse(ListResponse[BasicUserResponse]):
    pass


class ListQuery(Input):
    """`extended` is taken and changes nothing: every list answers the `listCompleted`/`items` envelope
    (spec part 1, "A response listing is an envelope")."""

    offset: int | None = None
    count: int | None = None
    extended: bool | None = None


class CreateUserQuery(Input):
    enableUser: bool = False


class PasswordResetQuery(Input):
    """Our extension (the body is the bare password): the next sign-in may only change it."""

    temporaryPassword: bool = False


class RoleCreateRequest(Input):
    name: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.\-]+$")
    ]
    description: Text
    permissions: list[Name]


class RoleUpdateRequest(Input):
    name: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.\-]+$")
    ]
    description: Text
    version: int
    addPermissions: list[Name]
    removePermissions: list[Name]


class RoleResponse(Response):
    locator: str
    name: str
    description: str
    version: int
    createdAt: datetime
    createdBy: str
    permissions: list[str]

    @classmethod
    def of(cls, role: Role) -> RoleResponse:
        return cls(**role.model_dump())


class RoleListResponse(ListResponse[RoleResponse]):
    pass
