"""Sign-in, authentication tokens, users and roles (spec part 1)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.core.errors import FieldError
from chalicelib.core.paging import PageRequest
from chalicelib.http.auth import source_ip
from chalicelib.http.contract import FORM, TEXT
from chalicelib.http.endpoint import declared_permissions, endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context
from chalicelib.http.responses import SecretAnswer

if TYPE_CHECKING:
    from chalicelib.identity import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.identity", "schemas", "service")

bp = Blueprint(__name__)

TOKEN_CREATION = [
    codes.IDEMPOTENCY_SECRET_NOT_REPLAYABLE,
    codes.NOT_FOUND["user"],
    codes.ROLE_INVALID_PERMISSION,
    codes.TOKEN_LIMIT_REACHED,
    codes.TOKEN_NAME_TAKEN,
    codes.TOKEN_PERMISSION_NOT_HELD,
    codes.TOKEN_TENANT_NOT_HELD,
]
"""What creating a named token may be refused with."""

BASIC_LIST_MAX_COUNT = 1000
FORM_OR_JSON = ["application/x-www-form-urlencoded", "application/json"]
JSON_OR_TEXT = ["application/json", "text/plain"]

# --- sign-in -------------------------------------------------------------------------------------


@bp.route("/auth/token", methods=["POST"], content_types=FORM_OR_JSON)
@endpoint(
    public=True, errors=[codes.AUTH_SIGN_IN_FAILED, codes.AUTH_SIGN_IN_THROTTLED, codes.AUTH_UNSUPPORTED_GRANT_TYPE]
)
def sign_in(body: Annotated[schemas.TokenGrantRequest, FORM]) -> schemas.TokenGrantResponse:
    ctx = request_context()
    if body.grant_type != "password":
        raise codes.AUTH_UNSUPPORTED_GRANT_TYPE(
            "Only the password grant is supported", field_errors=[FieldError("grant_type", "must be 'password'")]
        )
    token, lifetime = service.sign_in(body.username, body.password, ctx.now, ctx.request_id, source_ip())
    return schemas.TokenGrantResponse(access_token=token, expires_in=lifetime)


# --- authentication tokens -----------------------------------------------------------------------


def _create_token(user_locator: str, request: schemas.AuthTokenCreateRequest) -> SecretAnswer[str]:
    """The new token string, answered once: its idempotency guard keeps only which token it was."""
    token = service.create_token(
        request_context(),
        user_locator,
        name=request.name,
        expires_at=request.expiresAt,
        permissions=request.permissions,
        tenants=request.tenants,
    )
    return SecretAnswer(token, f"the token named '{request.name}' of user {user_locator}")


def _tokens(user_locator: str) -> list[schemas.AuthTokenResponse]:
    fields = schemas.AuthTokenResponse.model_fields
    return [
        schemas.AuthTokenResponse(**{k: v for k, v in t.items() if k in fields})
        for t in service.list_tokens(request_context(), user_locator)
    ]


@bp.route("/auth/users/tokens", methods=["POST"])
@endpoint("users.write", "users.token", idempotent=True, errors=TOKEN_CREATION)
def create_own_token(body: schemas.AuthTokenCreateRequest) -> SecretAnswer[str]:
    return _create_token(request_context().user_locator, body)


@bp.route("/auth/users/{locator}/tokens", methods=["POST"])
@endpoint(
    "users.custom",
    "users.write",
    idempotent=True,
    errors=[*TOKEN_CREATION, codes.AUTH_USER_OUTRANKS_CALLER, codes.TOKEN_NOT_SERVICE_ACCOUNT],
)
def create_user_token(locator: str, body: schemas.AuthTokenCreateRequest) -> SecretAnswer[str]:
    return _create_token(locator, body)


@bp.route("/auth/users/tokens", methods=["GET"])
@endpoint("users.read", "users.custom")
def list_own_tokens() -> list[schemas.AuthTokenResponse]:
    return _tokens(request_context().user_locator)


@bp.route("/auth/users/{locator}/tokens", methods=["GET"])
@endpoint("users.read", "users.custom", errors=[codes.NOT_FOUND["user"]])
def list_user_tokens(locator: str) -> list[schemas.AuthTokenResponse]:
    return _tokens(locator)


@bp.route("/auth/users/tokens/{tokenOrName}", methods=["DELETE"])
@endpoint("users.write", "users.custom", errors=[codes.NOT_FOUND["token"]])
def delete_own_token(tokenOrName: str) -> None:
    ctx = request_context()
    service.delete_token(ctx, ctx.user_locator, tokenOrName)


@bp.route("/auth/users/{locator}/tokens/{tokenOrName}", methods=["DELETE"])
@endpoint(
    "users.write",
    "users.custom",
    errors=[codes.AUTH_USER_OUTRANKS_CALLER, codes.NOT_FOUND["token"], codes.NOT_FOUND["user"]],
)
def delete_user_token(locator: str, tokenOrName: str) -> None:
    service.delete_token(request_context(), locator, tokenOrName)


@bp.route("/auth/users/{locator}/revoke", methods=["POST"])
@endpoint(
    "users.write", "users.custom", "users.revoke", errors=[codes.AUTH_USER_OUTRANKS_CALLER, codes.NOT_FOUND["user"]]
)
def revoke_user_sessions(locator: str) -> None:
    service.revoke_sessions(request_context(), locator)


@bp.route("/auth/users/{locator}/credentials", methods=["DELETE"])
@endpoint("users.write", "users.custom", errors=[codes.AUTH_USER_OUTRANKS_CALLER, codes.NOT_FOUND["user"]])
def remove_user_credentials(locator: str) -> None:
    service.remove_credentials(request_context(), locator)


# --- users ---------------------------------------------------------------------------------------


@bp.route("/auth/users/{locator}", methods=["GET"])
@endpoint("users.custom", "users.read", errors=[codes.NOT_FOUND["user"]])
def fetch_user(locator: str) -> schemas.UserResponse:
    return schemas.UserResponse.of(service.get_user(request_context(), locator))


@bp.route("/auth/users", methods=["POST"])
@endpoint(
    "users.add",
    idempotent=True,
    creates="user",
    replay=fetch_user,
    errors=[codes.AUTH_TENANT_NOT_HELD, codes.ROLE_UNKNOWN, codes.USER_NAME_TAKEN, codes.USER_WEAK_PASSWORD],
)
def create_user(body: schemas.UserCreateRequest, query: schemas.CreateUserQuery) -> schemas.UserResponse:
    ctx = request_context()
    return schemas.UserResponse.of(service.create_user(ctx, body, enable_user=query.enableUser))


@bp.route("/auth/users/whoami", methods=["GET"])
@endpoint("users.custom")
def fetch_whoami() -> schemas.UserResponse:
    return schemas.UserResponse.of(service.whoami(request_context()))


@bp.route("/auth/users/username/{username}", methods=["GET"])
@endpoint("users.read")
def fetch_users_by_name(username: str) -> list[schemas.UserResponse]:
    return [schemas.UserResponse.of(p) for p in service.users_by_name(request_context(), username)]


@bp.route("/auth/users/list", methods=["GET"])
@endpoint("users.read", "users.list")
def list_users(query: schemas.ListQuery) -> schemas.UserListResponse:
    page = service.list_users(request_context(), PageRequest.of(query.offset, query.count))
    return schemas.UserListResponse.of(page, schemas.UserResponse.of)


@bp.route("/auth/users/basic/list", methods=["GET"])
@endpoint("users.read", "users.list")
def list_basic_users(query: schemas.ListQuery) -> schemas.BasicUserListResponse:
    page = service.list_users(request_context(), PageRequest.of(query.offset, query.count, BASIC_LIST_MAX_COUNT))
    return schemas.BasicUserListResponse.of(page, schemas.BasicUserResponse.of)


@bp.route("/auth/users/{locator}", methods=["PATCH"])
@endpoint(
    "users.update",
    "users.custom",
    errors=[
        codes.AUTH_TENANT_NOT_HELD,
        codes.AUTH_USER_OUTRANKS_CALLER,
        codes.NOT_FOUND["user"],
        codes.ROLE_UNKNOWN,
        codes.USER_DIRECT_PERMISSIONS,
    ],
)
def update_user(locator: str, body: schemas.UserUpdateRequest) -> schemas.UserResponse:
    if body.permissions:
        raise codes.USER_DIRECT_PERMISSIONS(
            "Permissions are granted through roles",
            field_errors=[FieldError("permissions", "assign a role that holds them")],
        )
    profile = service.update_user(
        request_context(),
        locator,
        first_name=body.firstName,
        last_name=body.lastName,
        email=body.email,
        tenants=body.tenants,
        roles=body.roles,
    )
    return schemas.UserResponse.of(profile)


@bp.route("/auth/users/{locator}/passwordreset", methods=["PATCH"], content_types=JSON_OR_TEXT)
@endpoint(
    "users.password-reset",
    "users.custom",
    errors=[codes.AUTH_USER_OUTRANKS_CALLER, codes.NOT_FOUND["user"], codes.USER_WEAK_PASSWORD],
)
def reset_user_password(
    locator: str, body: Annotated[schemas.NewPassword, TEXT], query: schemas.PasswordResetQuery
) -> None:
    """The body is the new password: a JSON string, or the text itself as `text/plain`"""
    service.reset_password(request_context(), locator, body, temporary=query.temporaryPassword)


@bp.route("/auth/users/{locator}", methods=["DELETE"])
@endpoint("users.delete", errors=[codes.AUTH_USER_OUTRANKS_CALLER, codes.NOT_FOUND["user"], codes.USER_DELETE_SELF])
def delete_user(locator: str) -> None:
    service.delete_user(request_context(), locator)


@bp.route("/auth/users/{locator}/permissions", methods=["GET"])
@endpoint("users.read", "users.custom", errors=[codes.NOT_FOUND["user"]])
def fetch_user_permissions(locator: str) -> list[str]:
    return service.user_permissions(request_context(), locator)


@bp.route("/auth/users/{locator}/roles", methods=["PATCH"])
@endpoint(
    "users.update-roles",
    errors=[
        codes.AUTH_ROLE_NOT_GRANTABLE,
        codes.AUTH_USER_OUTRANKS_CALLER,
        codes.NOT_FOUND["user"],
        codes.ROLE_UNKNOWN,
    ],
)
def update_user_roles(locator: str, body: schemas.UserRolesUpdateRequest) -> schemas.UserResponse:
    return schemas.UserResponse.of(
        service.update_user_roles(request_context(), locator, body.addRoles, body.removeRoles)
    )


@bp.route("/auth/users/{locator}/tenants", methods=["PATCH"])
@endpoint(
    "users.update-tenants",
    errors=[codes.AUTH_TENANT_NOT_HELD, codes.AUTH_USER_OUTRANKS_CALLER, codes.NOT_FOUND["user"]],
)
def update_user_tenants(locator: str, body: schemas.UserTenantsAssignmentsUpdateRequest) -> schemas.UserResponse:
    return schemas.UserResponse.of(
        service.update_user_tenants(request_context(), locator, body.addTenants, body.removeTenants)
    )


# --- roles ---------------------------------------------------------------------------------------


@bp.route("/auth/roles/{locator}", methods=["GET"])
@endpoint("roles.read", errors=[codes.NOT_FOUND["role"]])
def fetch_role(locator: str) -> schemas.RoleResponse:
    return schemas.RoleResponse.of(service.get_role(request_context(), locator))


@bp.route("/auth/roles", methods=["POST"])
@endpoint(
    "roles.add",
    idempotent=True,
    creates="role",
    replay=fetch_role,
    errors=[codes.AUTH_ROLE_OUTRANKS_CALLER, codes.ROLE_INVALID_PERMISSION, codes.ROLE_NAME_TAKEN],
)
def create_role(body: schemas.RoleCreateRequest) -> schemas.RoleResponse:
    return schemas.RoleResponse.of(
        service.create_role(
            request_context(), name=body.name, description=body.description, permissions=body.permissions
        )
    )


@bp.route("/auth/roles/permissions", methods=["GET"])
@endpoint("roles.read")
def list_permissions() -> list[str]:
    return declared_permissions()


@bp.route("/auth/roles/list", methods=["GET"])
@endpoint("roles.read", "roles.list")
def list_roles(query: schemas.ListQuery) -> schemas.RoleListResponse:
    page = service.list_roles(request_context(), PageRequest.of(query.offset, query.count))
    return schemas.RoleListResponse.of(page, schemas.RoleResponse.of)


@bp.route("/auth/roles/{locator}", methods=["PATCH"])
@endpoint(
    "roles.update",
    errors=[
        codes.AUTH_ROLE_OUTRANKS_CALLER,
        codes.NOT_FOUND["role"],
        codes.ROLE_BUILT_IN,
        codes.ROLE_INVALID_PERMISSION,
        codes.ROLE_NAME_TAKEN,
    ],
)
def update_role(locator: str, body: schemas.RoleUpdateRequest) -> schemas.RoleResponse:
    return schemas.RoleResponse.of(
        service.update_role(
            request_context(),
            locator,
            name=body.name,
            description=body.description,
            version=body.version,
            add_permissions=body.addPermissions,
            remove_permissions=body.removePermissions,
        )
    )


@bp.route("/auth/roles/{locator}", methods=["DELETE"])
@endpoint("roles.delete", errors=[codes.AUTH_ROLE_OUTRANKS_CALLER, codes.NOT_FOUND["role"], codes.ROLE_BUILT_IN])
def delete_role(locator: str) -> None:
    service.delete_role(request_context(), locator)
