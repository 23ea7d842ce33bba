"""Sign-in, authentication tokens, users and roles (spec part 1)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core.errors import FieldError, InvalidRequest
from chalicelib.core.paging import PageRequest
from chalicelib.http.auth import source_ip
from chalicelib.http.endpoint import declared_permissions, endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import (
    body_as,
    content_type,
    form_or_json,
    json_value,
    query_as,
    raw_body,
    request_context,
    validate,
)
from chalicelib.http.responses import SecretAnswer

if TYPE_CHECKING:
    from chalicelib.identity import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.identity", "schemas", "service")

bp = Blueprint(__name__)

BASIC_LIST_MAX_COUNT = 1000
FORM_OR_JSON = ["application/x-www-form-urlencoded", "application/json"]
JSON_OR_TEXT = ["application/json", "text/plain"]

# --- sign-in -------------------------------------------------------------------------------------


@bp.route("/auth/token", methods=["POST"], content_types=FORM_OR_JSON)
@endpoint(public=True)
def sign_in() -> schemas.TokenGrantResponse:
    ctx = request_context()
    grant = validate(schemas.TokenGrantRequest, form_or_json())
    if grant.grant_type != "password":
        raise InvalidRequest("Only the password grant is supported", code="auth.unsupported_grant_type",
                             field_errors=[FieldError("grant_type", "must be 'password'")])
    token, lifetime = service.sign_in(grant.username, grant.password, ctx.now, ctx.request_id, source_ip())
    return schemas.TokenGrantResponse(access_token=token, expires_in=lifetime)


# --- authentication tokens -----------------------------------------------------------------------


def _create_token(user_locator: str) -> SecretAnswer:
    """The new token string, answered once: its idempotency guard keeps only which token it was."""
    ctx = request_context()
    request = body_as(schemas.AuthTokenCreateRequest)
    token = service.create_token(ctx, user_locator, name=request.name, expires_at=request.expiresAt,
                                 permissions=request.permissions, tenants=request.tenants)
    return SecretAnswer(token, f"the token named '{request.name}' of user {user_locator}")


def _tokens(user_locator: str) -> list[schemas.AuthTokenResponse]:
    fields = schemas.AuthTokenResponse.model_fields
    return [schemas.AuthTokenResponse(**{k: v for k, v in t.items() if k in fields})
            for t in service.list_tokens(request_context(), user_locator)]


@bp.route("/auth/users/tokens", methods=["POST"])
@endpoint("users.write", "users.token", idempotent=True)
def create_own_token() -> SecretAnswer:
    return _create_token(request_context().user_locator)


@bp.route("/auth/users/{locator}/tokens", methods=["POST"])
@endpoint("users.custom", "users.write", idempotent=True)
def create_user_token(locator: str) -> SecretAnswer:
    return _create_token(locator)


@bp.route("/auth/users/tokens", methods=["GET"])
@endpoint("users.read", "users.custom")
def list_own_tokens() -> list[schemas.AuthTokenResponse]:
    return _tokens(request_context().user_locator)


@bp.route("/auth/users/{locator}/tokens", methods=["GET"])
@endpoint("users.read", "users.custom")
def list_user_tokens(locator: str) -> list[schemas.AuthTokenResponse]:
    return _tokens(locator)


@bp.route("/auth/users/tokens/{tokenOrName}", methods=["DELETE"])
@endpoint("users.write", "users.custom")
def delete_own_token(tokenOrName: str) -> None:
    ctx = request_context()
    service.delete_token(ctx, ctx.user_locator, tokenOrName)


@bp.route("/auth/users/{locator}/tokens/{tokenOrName}", methods=["DELETE"])
@endpoint("users.write", "users.custom")
def delete_user_token(locator: str, tokenOrName: str) -> None:
    service.delete_token(request_context(), locator, tokenOrName)


@bp.route("/auth/users/{locator}/revoke", methods=["POST"])
@endpoint("users.write", "users.custom", "users.revoke")
def revoke_user_sessions(locator: str) -> None:
    service.revoke_sessions(request_context(), locator)


@bp.route("/auth/users/{locator}/credentials", methods=["DELETE"])
@endpoint("users.write", "users.custom")
def remove_user_credentials(locator: str) -> None:
    service.remove_credentials(request_context(), locator)


# --- users ---------------------------------------------------------------------------------------


@bp.route("/auth/users", methods=["POST"])
@endpoint("users.add", idempotent=True)
def create_user() -> schemas.UserResponse:
    ctx = request_context()
    request = body_as(schemas.UserCreateRequest)
    query = query_as(schemas.CreateUserQuery)
    profile = service.create_user(
        ctx, user_name=request.userName, first_name=request.firstName, last_name=request.lastName,
        email=request.email, password=request.password, temporary_password=request.temporaryPassword,
        service_account=request.serviceAccount, roles=request.roles, tenants=request.tenants,
        enable_user=query.enableUser,
    )
    return schemas.UserResponse.of(profile)


@bp.route("/auth/users/whoami", methods=["GET"])
@endpoint("users.custom")
def fetch_whoami() -> schemas.UserResponse:
    return schemas.UserResponse.of(service.whoami(request_context()))


@bp.route("/auth/users/username/{username}", methods=["GET"])
@endpoint("users.read")
def fetch_users_by_name(username: str) -> list[schemas.UserResponse]:
    return [schemas.UserResponse.of(p) for p in service.users_by_name(request_context(), username)]


@bp.route("/auth/users/{locator}", methods=["GET"])
@endpoint("users.custom", "users.read")
def fetch_user(locator: str) -> schemas.UserResponse:
    return schemas.UserResponse.of(service.get_user(request_context(), locator))


@bp.route("/auth/users/list", methods=["GET"])
@endpoint("users.read", "users.list")
def list_users() -> schemas.UserListResponse | list[schemas.UserResponse]:
    query = query_as(schemas.ListQuery)
    page = service.list_users(request_context(), PageRequest.of(query.offset, query.count))
    items = [schemas.UserResponse.of(p) for p in page.items]
    if query.extended is False:
        return items
    return schemas.UserListResponse(listCompleted=page.list_completed, items=items)


@bp.route("/auth/users/basic/list", methods=["GET"])
@endpoint("users.read", "users.list")
def list_basic_users() -> schemas.BasicUserListResponse | list[schemas.BasicUserResponse]:
    query = query_as(schemas.ListQuery)
    page = service.list_users(request_context(), PageRequest.of(query.offset, query.count, BASIC_LIST_MAX_COUNT))
    items = [schemas.BasicUserResponse(locator=p.user.locator, userName=p.user.userName,
                                       firstName=p.user.firstName, lastName=p.user.lastName) for p in page.items]
    if query.extended is False:
        return items
    return schemas.BasicUserListResponse(listCompleted=page.list_completed, items=items)


@bp.route("/auth/users/{locator}", methods=["PATCH"])
@endpoint("users.update", "users.custom")
def update_user(locator: str) -> schemas.UserResponse:
    request = body_as(schemas.UserUpdateRequest)
    if request.permissions:
        raise InvalidRequest("Permissions are granted through roles", code="user.direct_permissions",
                             field_errors=[FieldError("permissions", "assign a role that holds them")])
    profile = service.update_user(request_context(), locator, first_name=request.firstName,
                                  last_name=request.lastName, email=request.email, tenants=request.tenants,
                                  roles=request.roles)
    return schemas.UserResponse.of(profile)


@bp.route("/auth/users/{locator}/passwordreset", methods=["PATCH"], content_types=JSON_OR_TEXT)
@endpoint("users.password-reset", "users.custom")
def reset_user_password(locator: str) -> None:
    query = query_as(schemas.PasswordResetQuery)
    password = raw_body().decode("utf-8", "replace") if content_type() == "text/plain" else json_value()
    if not isinstance(password, str) or not password or len(password) > 1000:
        raise InvalidRequest("The body must be the new password as a non-empty string",
                             code="user.invalid_password")
    service.reset_password(request_context(), locator, password, temporary=query.temporaryPassword)


@bp.route("/auth/users/{locator}", methods=["DELETE"])
@endpoint("users.delete")
def delete_user(locator: str) -> None:
    service.delete_user(request_context(), locator)


@bp.route("/auth/users/{locator}/permissions", methods=["GET"])
@endpoint("users.read", "users.custom")
def fetch_user_permissions(locator: str) -> list[str]:
    return service.user_permissions(request_context(), locator)


@bp.route("/auth/users/{locator}/roles", methods=["PATCH"])
@endpoint("users.update-roles")
def update_user_roles(locator: str) -> schemas.UserResponse:
    request = body_as(schemas.UserRolesUpdateRequest)
    return schemas.UserResponse.of(service.update_user_roles(request_context(), locator, request.addRoles,
                                                     request.removeRoles))


@bp.route("/auth/users/{locator}/tenants", methods=["PATCH"])
@endpoint("users.update-tenants")
def update_user_tenants(locator: str) -> schemas.UserResponse:
    request = body_as(schemas.UserTenantsAssignmentsUpdateRequest)
    return schemas.UserResponse.of(service.update_user_tenants(request_context(), locator, request.addTenants,
                                                       request.removeTenants))


# --- roles ---------------------------------------------------------------------------------------


@bp.route("/auth/roles", methods=["POST"])
@endpoint("roles.add", idempotent=True)
def create_role() -> schemas.RoleResponse:
    request = body_as(schemas.RoleCreateRequest)
    return schemas.RoleResponse.of(service.create_role(request_context(), name=request.name,
                                               description=request.description, permissions=request.permissions))


@bp.route("/auth/roles/permissions", methods=["GET"])
@endpoint("roles.read")
def list_permissions() -> list[str]:
    return declared_permissions()


@bp.route("/auth/roles/list", methods=["GET"])
@endpoint("roles.read", "roles.list")
def list_roles() -> schemas.RoleListResponse | list[schemas.RoleResponse]:
    query = query_as(schemas.ListQuery)
    page = service.list_roles(request_context(), PageRequest.of(query.offset, query.count))
    items = [schemas.RoleResponse.of(r) for r in page.items]
    if query.extended is False:
        return items
    return schemas.RoleListResponse(listCompleted=page.list_completed, items=items)


@bp.route("/auth/roles/{locator}", methods=["GET"])
@endpoint("roles.read")
def fetch_role(locator: str) -> schemas.RoleResponse:
    return schemas.RoleResponse.of(service.get_role(request_context(), locator))


@bp.route("/auth/roles/{locator}", methods=["PATCH"])
@endpoint("roles.update")
def update_role(locator: str) -> schemas.RoleResponse:
    request = body_as(schemas.RoleUpdateRequest)
    return schemas.RoleResponse.of(service.update_role(
        request_context(), locator, name=request.name, description=request.description, version=request.version,
        add_permissions=request.addPermissions, remove_permissions=request.removePermissions))


@bp.route("/auth/roles/{locator}", methods=["DELETE"])
@endpoint("roles.delete")
def delete_role(locator: str) -> None:
    service.delete_role(request_context(), locator)
