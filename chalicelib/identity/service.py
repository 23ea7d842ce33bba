"""Identity use cases: sign-in, tokens, users, roles, tenant registry, and request authentication."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from chalicelib.core import codes
from chalicelib.core.context import SYSTEM, CallContext, Principal
from chalicelib.core.errors import (
    Conflict,
    DomainError,
    FieldError,
    TooManyRequests,
)
from chalicelib.core.ids import new_locator, new_tenant_locator, new_uuid_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.core.permissions import ANY_TENANT, is_valid_permission, restrict, tenant_allowed
from chalicelib.identity import passwords, repository, throttle
from chalicelib.identity.models import (
    Role,
    RoleHolders,
    Session,
    Tenant,
    Token,
    TokenKind,
    User,
    UserFields,
    UserProfile,
)
from chalicelib.identity.password_rules import password_problems
from chalicelib.runtime import wiring
from chalicelib.runtime.wiring import UnitOfWork
from chalicelib.settings import settings

ADMIN_ROLE = "admin"
SELF_SERVICE = "users.custom"
MAX_NAMED_TOKENS = 10
TOKEN_PREFIX = "pas"

_bootstrapped = False

# --- authentication ------------------------------------------------------------------------------


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _new_token(user_locator: str) -> str:
    # the owner travels in the token, so token and user are read in one round trip
    return f"{TOKEN_PREFIX}.{user_locator}.{secrets.token_urlsafe(32)}"


def authenticate(token: str, now: datetime) -> Principal:
    """The principal behind a bearer token, with the permissions and tenants it may use right now.
    One round trip: token, owner and roles version together; the roles come from a per-process cache
    that any role change invalidates (the version is read with every request)."""
    prefix, _, rest = token.partition(".")
    user_locator, _, secret = rest.partition(".")
    if prefix != TOKEN_PREFIX or not user_locator or not secret or len(token) > 200:
        raise codes.AUTH_TOKEN_INVALID("Invalid token")
    token_hash = _hash(token)
    shard = int(token_hash[:8], 16)
    stored, user, roles_version = repository.get_token_and_user(token_hash, user_locator, shard)
    if stored is None or user is None or stored.userLocator != user.locator or not user.enabled:
        raise codes.AUTH_TOKEN_INVALID("Invalid token")
    if stored.expiresAt is not None and stored.expiresAt <= now:
        raise codes.AUTH_TOKEN_EXPIRED("The token has expired")
    if stored.kind == TokenKind.SESSION and stored.sessionGeneration != user.sessionGeneration:
        raise codes.AUTH_TOKEN_REVOKED("The token was revoked")
    profile = _profile_of(user, _cached_roles(user.roleLocators, roles_version))
    session = Session(
        profile=profile,
        rolesVersion=roles_version,
        rolesVersionShard=shard,
        passwordChangeOnly=stored.passwordChangeOnly,
    )
    if stored.passwordChangeOnly:
        return Principal(
            user.locator, user.userName, frozenset({SELF_SERVICE}), frozenset(), profile=session, credential=token_hash
        )
    permissions = frozenset(profile.permissions)
    tenants = frozenset(user.tenants)
    if stored.kind == TokenKind.NAMED:
        permissions = restrict(permissions, stored.permissions or [])
        tenants = _restrict_tenants(tenants, stored.tenants or [])
    return Principal(user.locator, user.userName, permissions, tenants, profile=session, credential=token_hash)


def password_change_only(principal: Principal) -> bool:
    """True for a sign-in with a temporary password: its token serves only to change the password."""
    return isinstance(principal.profile, Session) and principal.profile.passwordChangeOnly


def _restrict_tenants(held: frozenset[str], wanted: list[str]) -> frozenset[str]:
    if ANY_TENANT in wanted:
        return held
    return frozenset(t for t in wanted if tenant_allowed(held, t))


# roles by locator (None: deleted), valid while the stored roles version equals the first element
_role_cache: tuple[int, dict[str, Role | None]] = (-1, {})


def _cached_roles(locators: list[str], roles_version: int) -> list[Role]:
    global _role_cache
    cached_version, cached = _role_cache
    if cached_version != roles_version:
        cached = {}
    missing = [r for r in locators if r not in cached]
    if missing:
        found = {role.locator: role for role in repository.roles(missing)}
        cached = {**cached, **{r: found.get(r) for r in missing}}
    _role_cache = (roles_version, cached)
    return [role for r in locators if (role := cached[r]) is not None]


def _profile_of(user: User, roles: list[Role]) -> UserProfile:
    permissions = {SELF_SERVICE} | {p for role in roles for p in role.permissions}
    return UserProfile(user=user, roleNames=[r.name for r in roles], permissions=sorted(permissions))


def _profile(ctx: CallContext, user: User) -> UserProfile:
    """The user's profile; inside an authenticated request, from the roles cache its version validated."""
    session = ctx.principal.profile
    if isinstance(session, Session):
        return _profile_of(user, _cached_roles(user.roleLocators, session.rolesVersion))
    return _profile_of(user, repository.roles(user.roleLocators))


def sign_in(
    user_name: str, password: str, now: datetime, request_id: str, source_ip: str | None = None
) -> tuple[str, int]:
    """OAuth2 password grant: a session token and its lifetime in seconds. Failures do not say why.
    An attempt is counted per user name (known or not) and per source address before its password is
    checked, atomically and only while both counts are below their limits; past a limit in the current
    window, sign-in answers 429 until the window ends, whatever the password. A success takes its attempt
    back and clears the user name's count, so the counts are the failures and the attempts under way."""
    ensure_bootstrap(now, request_id)
    window = throttle.window_of(now)
    name_subject, *source_subjects = throttle.subjects(user_name, source_ip)
    expires_at = throttle.window_end(window) + throttle.WINDOW_SECONDS
    repository.count_sign_in_attempt(
        [(s.kind, s.digest, s.limit) for s in (name_subject, *source_subjects)],
        window,
        expires_at,
        on_limit=lambda: TooManyRequests(
            "Too many failed sign-ins; retry later",
            codes.AUTH_SIGN_IN_THROTTLED,
            retry_after_seconds=throttle.retry_after_seconds(now),
        ),
    )
    locator = repository.user_locator_by_name(user_name) if user_name else None
    user = repository.get_user(locator) if locator else None
    if not passwords.verify_password(user.passwordHash if user else None, password) or not user or not user.enabled:
        raise codes.AUTH_SIGN_IN_FAILED("Invalid user name or password")
    lifetime = settings().session_token_ttl_seconds
    token = _new_token(user.locator)
    ctx = CallContext(
        principal=Principal(user.locator, user.userName, frozenset(), frozenset()), request_id=request_id, now=now
    )
    uow = wiring.system_unit_of_work(ctx)
    repository.add_session_token(
        uow,
        Token(
            tokenHash=_hash(token),
            userLocator=user.locator,
            kind=TokenKind.SESSION,
            sessionGeneration=user.sessionGeneration,
            passwordChangeOnly=user.temporaryPassword,
            createdAt=now,
            expiresAt=now + timedelta(seconds=lifetime),
        ),
    )
    repository.take_back_sign_in_attempt(
        uow, (name_subject.kind, name_subject.digest), [(s.kind, s.digest) for s in source_subjects], window, expires_at
    )
    uow.record_event("auth.session.create", {"userLocator": user.locator})
    uow.commit()
    return token, lifetime


def ensure_bootstrap(now: datetime, request_id: str) -> None:
    """When no administrator was ever created, create the `admin` role and user from the settings."""
    global _bootstrapped
    if _bootstrapped:
        return
    if repository.is_bootstrapped():
        _bootstrapped = True
        return
    current = settings()
    if not current.admin_username or not current.admin_password:
        return  # a deployed stage without an explicit password does not bootstrap
    ctx = CallContext(principal=SYSTEM, request_id=request_id, now=now)
    role = Role(
        locator=new_locator(),
        name=ADMIN_ROLE,
        description="Every permission on every tenant",
        permissions=["*.*"],
        createdAt=now,
        createdBy=SYSTEM.user_locator,
    )
    admin = User(
        locator=new_uuid_locator(),
        userName=current.admin_username,
        firstName="Administrator",
        lastName="",
        tenants=[ANY_TENANT],
        roleLocators=[role.locator],
        passwordHash=passwords.hash_password(current.admin_password),
        createdAt=now,
        createdBy=SYSTEM.user_locator,
    )
    uow = wiring.system_unit_of_work(ctx)
    repository.add_role(uow, role)
    repository.add_user(uow, admin)
    repository.mark_bootstrapped(uow, admin.locator)
    uow.record_event("auth.bootstrap", {"userLocator": admin.locator, "roleLocator": role.locator})
    try:
        uow.commit()
    except Conflict:
        pass  # another process bootstrapped at the same moment
    _bootstrapped = True


def forget_bootstrap() -> None:
    """Tests start from an empty table: let the next sign-in bootstrap again."""
    global _bootstrapped
    _bootstrapped = False


# --- users ---------------------------------------------------------------------------------------


def whoami(ctx: CallContext) -> UserProfile:
    if isinstance(ctx.principal.profile, Session):
        return ctx.principal.profile.profile
    return get_user(ctx, ctx.user_locator)


def _load_user(ctx: CallContext, locator: str) -> User:
    """The user, if the caller may see it (404 otherwise, as for a user that does not exist)."""
    user = repository.get_user(locator)
    if user is None or not _within_reach(ctx, user):
        raise codes.not_found("user", locator)
    return user


def _within_reach(ctx: CallContext, user: User) -> bool:
    """Users are system-wide, but a user who works only for tenants the caller does not hold belongs to
    those tenants: a caller sees and manages itself, and users whose every tenant it holds too."""
    caller = ctx.principal
    if caller.is_system or user.locator == caller.user_locator or ANY_TENANT in caller.tenants:
        return True
    return ANY_TENANT not in user.tenants and set(user.tenants) <= caller.tenants


def _load_manageable(ctx: CallContext, locator: str) -> tuple[User, UserProfile]:
    """The user, if the caller may change it: a caller manages itself, and users within its reach
    whose every permission (wildcards included) it holds too, so it can never act as someone stronger."""
    user = _load_user(ctx, locator)
    profile = _profile(ctx, user)
    caller = ctx.principal
    if caller.is_system or locator == caller.user_locator:
        return user, profile
    wanted = [p for p in profile.permissions if p != SELF_SERVICE]
    beyond = sorted(set(wanted) - restrict(caller.permissions, wanted))
    if beyond:
        raise codes.AUTH_USER_OUTRANKS_CALLER(
            f"You cannot manage a user holding permissions you do not hold: {', '.join(beyond)}"
        )
    return user, profile


def get_user(ctx: CallContext, locator: str) -> UserProfile:
    session = ctx.principal.profile
    if isinstance(session, Session) and session.profile.user.locator == locator:
        return session.profile
    return _profile(ctx, _load_user(ctx, locator))


def users_by_name(ctx: CallContext, user_name: str) -> list[UserProfile]:
    locator = repository.user_locator_by_name(user_name)
    user = repository.get_user(locator) if locator else None
    return [_profile(ctx, user)] if user and _within_reach(ctx, user) else []


def list_users(ctx: CallContext, page: PageRequest) -> Page[UserProfile]:
    """A page of users, oldest first. Users out of the caller's reach are left out of the page, so a
    caller that does not hold every tenant may get fewer than `count` items on a page that is not last."""
    found = repository.list_users(page)
    found = Page([u for u in found.items if _within_reach(ctx, u)], found.list_completed)
    roles = {r.locator: r for r in repository.roles(sorted({r for u in found.items for r in u.roleLocators}))}
    profiles = [_profile_of(user, [roles[r] for r in user.roleLocators if r in roles]) for user in found.items]
    return Page(profiles, found.list_completed)


def create_user(ctx: CallContext, fields: UserFields, *, enable_user: bool) -> UserProfile:
    _check_grantable_tenants(ctx, fields.tenants)
    password = fields.password
    if password:
        _check_password(password, fields.userName)
    user = User(
        locator=new_uuid_locator(),
        userName=fields.userName,
        firstName=fields.firstName,
        lastName=fields.lastName,
        email=fields.email,
        serviceAccount=fields.serviceAccount,
        tenants=sorted(set(fields.tenants)),
        roleLocators=_role_locators(ctx, fields.roles),
        passwordHash=passwords.hash_password(password) if password else None,
        temporaryPassword=fields.temporaryPassword and bool(password),
        enabled=bool(password) or enable_user or fields.serviceAccount,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
    )
    uow = _user_unit_of_work(ctx)
    repository.add_user(uow, user)
    uow.record_event("auth.user.create", {"userLocator": user.locator})
    uow.commit()
    return _profile(ctx, user)


def update_user(
    ctx: CallContext,
    locator: str,
    *,
    first_name: str,
    last_name: str,
    email: str | None,
    tenants: list[str],
    roles: list[str] | None,
) -> UserProfile:
    user, _ = _load_manageable(ctx, locator)
    _check_grantable_tenants(ctx, [t for t in tenants if t not in user.tenants])
    changes = {"firstName": first_name, "lastName": last_name, "email": email, "tenants": sorted(set(tenants))}
    if roles is not None:
        _require_any(ctx, "Changing roles", "users.update-roles", "users.write")
        changes["roleLocators"] = _role_locators(ctx, roles, user.roleLocators)
    return _save(ctx, user, changes, "auth.user.update")


def update_user_roles(ctx: CallContext, locator: str, add: list[str], remove: list[str]) -> UserProfile:
    user, _ = _load_manageable(ctx, locator)
    added = _role_locators(ctx, add, user.roleLocators)
    removed = set(repository.role_locators_by_name(remove).values())
    held = [r for r in user.roleLocators if r not in removed]
    held += [r for r in added if r not in held]
    return _save(ctx, user, {"roleLocators": held}, "auth.user.roles.update")


def update_user_tenants(ctx: CallContext, locator: str, add: list[str], remove: list[str]) -> UserProfile:
    user, _ = _load_manageable(ctx, locator)
    _check_grantable_tenants(ctx, add)
    tenants = sorted((set(user.tenants) - set(remove)) | set(add))
    return _save(ctx, user, {"tenants": tenants}, "auth.user.tenants.update")


def reset_password(ctx: CallContext, locator: str, password: str, temporary: bool = False) -> None:
    """A new password; every signed-in session of the user ends. A temporary password (never one set by
    the user itself) lets the next sign-in only change it."""
    user, _ = _load_manageable(ctx, locator)
    _check_password(password, user.userName)
    _save(
        ctx,
        user,
        {
            "passwordHash": passwords.hash_password(password),
            "temporaryPassword": temporary and locator != ctx.user_locator,
            "enabled": True,
            "sessionGeneration": user.sessionGeneration + 1,
        },
        "auth.user.password.reset",
    )


def _check_password(password: str, user_name: str) -> None:
    problems = password_problems(password, user_name)
    if problems:
        raise codes.USER_WEAK_PASSWORD(
            "The password is too weak", field_errors=[FieldError("password", p) for p in problems]
        )


def revoke_sessions(ctx: CallContext, locator: str) -> None:
    user, _ = _load_manageable(ctx, locator)
    _save(ctx, user, {"sessionGeneration": user.sessionGeneration + 1}, "auth.user.revoke")


def remove_credentials(ctx: CallContext, locator: str) -> None:
    """No password, no signed-in sessions, no named tokens: the user can no longer authenticate."""
    user, _ = _load_manageable(ctx, locator)
    uow = _user_unit_of_work(ctx)
    repository.delete_named_tokens(uow, locator, repository.named_tokens(locator))
    changed = user.model_copy(update={"passwordHash": None, "sessionGeneration": user.sessionGeneration + 1})
    repository.save_user(uow, user, changed)
    uow.record_event("auth.user.credentials.delete", {"userLocator": locator})
    uow.commit()


def delete_user(ctx: CallContext, locator: str) -> None:
    user, _ = _load_manageable(ctx, locator)
    if locator == ctx.user_locator:
        raise codes.USER_DELETE_SELF("You cannot delete yourself")
    uow = _user_unit_of_work(ctx)
    repository.delete_user(uow, user, repository.named_tokens(locator))
    uow.record_event("auth.user.delete", {"userLocator": locator})
    uow.commit()


def user_permissions(ctx: CallContext, locator: str) -> list[str]:
    return get_user(ctx, locator).permissions


def _save(ctx: CallContext, user: User, changes: dict[str, Any], event_type: str) -> UserProfile:
    changed = user.model_copy(update=changes)
    uow = _user_unit_of_work(ctx)
    repository.save_user(uow, user, changed)
    uow.record_event(event_type, {"userLocator": user.locator})
    uow.commit()
    return _profile(ctx, changed.model_copy(update={"version": user.version + 1}))


def _user_unit_of_work(ctx: CallContext) -> UnitOfWork:
    """A unit of work for a change of a user that commits only while no role has changed since the caller
    was authenticated (else 409), so the permissions it was checked with (its own, its target's, those of
    the roles it grants) are still those in force. A role change that read the role's holders before this
    change committed fails on the holders record this change bumps."""
    uow = wiring.system_unit_of_work(ctx)
    session = ctx.principal.profile
    if isinstance(session, Session):
        repository.check_roles_version(uow, session.rolesVersionShard, session.rolesVersion)
    return uow


def _role_locators(ctx: CallContext, names: list[str], already_held: Sequence[str] = ()) -> list[str]:
    """Locators of the named roles. A caller hands out only roles whose permissions it holds itself."""
    found = repository.role_locators_by_name(names)
    missing = [n for n in names if n.lower() not in found]
    if missing:
        raise codes.ROLE_UNKNOWN(
            "Unknown role", field_errors=[FieldError("roles", f"no role named {n}") for n in missing]
        )
    locators = list(dict.fromkeys(found[n.lower()] for n in names))
    new = [r for r in locators if r not in already_held]
    if new and not ctx.principal.is_system:
        too_wide = [
            role.name
            for role in repository.roles(new)
            if restrict(ctx.principal.permissions, role.permissions) != frozenset(role.permissions)
        ]
        if too_wide:
            raise codes.AUTH_ROLE_NOT_GRANTABLE(
                f"You cannot grant roles with permissions you do not hold: {', '.join(too_wide)}"
            )
    return locators


def _check_grantable_tenants(ctx: CallContext, tenants: list[str]) -> None:
    """A caller can hand out only tenants it holds itself."""
    refused = [
        t
        for t in tenants
        if not (ctx.principal.is_system or tenant_allowed(ctx.principal.tenants, t))
        or (t == ANY_TENANT and ANY_TENANT not in ctx.principal.tenants)
    ]
    if refused:
        raise codes.AUTH_TENANT_NOT_HELD(f"You cannot grant access to tenants you do not hold: {', '.join(refused)}")


def _require_any(ctx: CallContext, action: str, *permissions: str) -> None:
    if not ctx.principal.may(*permissions):
        raise codes.AUTH_PERMISSION_DENIED(f"{action} requires one of: {', '.join(permissions)}")


# --- named tokens --------------------------------------------------------------------------------


def create_token(
    ctx: CallContext, user_locator: str, *, name: str, expires_at: datetime, permissions: list[str], tenants: list[str]
) -> str:
    """A named token of `user_locator`: the caller's own, or, with `users.write`, one of a service
    account the caller may manage. Never one of another person's interactive account."""
    user, owner = _load_manageable(ctx, user_locator)
    if user_locator != ctx.user_locator and not ctx.principal.is_system:
        _require_any(ctx, "A token for another user", "users.write")
        if not user.serviceAccount:
            raise codes.TOKEN_NOT_SERVICE_ACCOUNT("Tokens can be created for yourself or for service accounts only")
    if expires_at <= ctx.now:
        raise codes.REQUEST_INVALID(
            "expiresAt must be in the future", field_errors=[FieldError("expiresAt", "must be in the future")]
        )
    _check_permission_names(permissions, "permissions")
    # bounded by the owner and by the calling credential, so a restricted token cannot mint a wider one
    not_held = [
        p
        for p in permissions
        if restrict(owner.permissions, [p]) != frozenset([p])
        or restrict(ctx.principal.permissions, [p]) != frozenset([p])
    ]
    if not_held:
        raise codes.TOKEN_PERMISSION_NOT_HELD(
            f"The token cannot carry permissions its owner does not hold: {', '.join(not_held)}"
        )
    foreign = [t for t in tenants if not (_holds_tenant(user.tenants, t) and _holds_tenant(ctx.principal.tenants, t))]
    if foreign:
        raise codes.TOKEN_TENANT_NOT_HELD(
            f"The token cannot cover tenants its owner does not hold: {', '.join(foreign)}"
        )
    held = len(repository.named_tokens(user_locator))
    if held >= MAX_NAMED_TOKENS:
        raise _token_limit_reached()
    token = _new_token(user_locator)
    uow = wiring.system_unit_of_work(ctx)
    repository.add_named_token(
        uow,
        Token(
            tokenHash=_hash(token),
            userLocator=user_locator,
            kind=TokenKind.NAMED,
            name=name,
            permissions=sorted(set(permissions)),
            tenants=sorted(set(tenants)),
            createdAt=ctx.now,
            expiresAt=expires_at,
        ),
        held=held,
        limit=MAX_NAMED_TOKENS,
        on_limit=_token_limit_reached,
    )
    uow.record_event("auth.token.create", {"userLocator": user_locator, "name": name})
    uow.commit()
    return token


def _token_limit_reached() -> DomainError:
    return codes.TOKEN_LIMIT_REACHED(f"A user can hold at most {MAX_NAMED_TOKENS} named tokens")


def _holds_tenant(held: Iterable[str], tenant: str) -> bool:
    return tenant_allowed(held, tenant) and (tenant != ANY_TENANT or ANY_TENANT in held)


def list_tokens(ctx: CallContext, user_locator: str) -> list[dict[str, Any]]:
    _load_user(ctx, user_locator)
    return repository.named_tokens(user_locator)


def delete_token(ctx: CallContext, user_locator: str, token_or_name: str) -> None:
    """Delete a named token by its name or by its value."""
    _load_manageable(ctx, user_locator)
    by_name = {t["name"]: t for t in repository.named_tokens(user_locator)}
    entry = by_name.get(token_or_name)
    if entry is None:
        stored = repository.get_token(_hash(token_or_name))
        if stored and stored.kind == TokenKind.NAMED and stored.userLocator == user_locator:
            entry = by_name.get(stored.name or "")
    if entry is None:
        raise codes.not_found("token", None)
    uow = wiring.system_unit_of_work(ctx)
    repository.delete_named_token(uow, user_locator, entry["name"], entry["tokenHash"], held=len(by_name))
    uow.record_event("auth.token.delete", {"userLocator": user_locator, "name": entry["name"]})
    uow.commit()


# --- roles ---------------------------------------------------------------------------------------


def _check_permission_names(permissions: list[str], field: str) -> None:
    bad = [
        FieldError(f"{field}[{i}]", f"'{p}' is not group.action, group.* or *.*")
        for i, p in enumerate(permissions)
        if not is_valid_permission(p)
    ]
    if bad:
        raise codes.ROLE_INVALID_PERMISSION("Invalid permission names", field_errors=bad)


def _check_role_within_reach(ctx: CallContext, permissions: Iterable[str], holders: RoleHolders) -> None:
    """Roles are global: a caller creates, changes or deletes one only if it holds every permission the role
    has (before and after the change) and every tenant of every user who holds it, as for managing a user,
    so a role never carries more than its changer holds nor changes what users beyond its tenants may do."""
    caller = ctx.principal
    if caller.is_system:
        return
    wanted = sorted(set(permissions) - {SELF_SERVICE})
    beyond = sorted(set(wanted) - restrict(caller.permissions, wanted))
    if beyond:
        raise codes.AUTH_ROLE_OUTRANKS_CALLER(
            f"You cannot manage a role with permissions you do not hold: {', '.join(beyond)}"
        )
    if not all(_holds_tenant(caller.tenants, tenant) for tenant in holders.tenants):
        raise codes.AUTH_ROLE_OUTRANKS_CALLER("You cannot manage a role held by users of tenants you do not hold")


def _load_changeable_role(locator: str) -> tuple[Role, RoleHolders]:
    """The role and its holders' tenants; never the built-in admin role, whose `*.*` keeps one way in."""
    role, holders = repository.role_and_holders(locator)
    if role is None:
        raise codes.not_found("role", locator)
    if role.name.lower() == ADMIN_ROLE:
        raise codes.ROLE_BUILT_IN(f"The built-in {ADMIN_ROLE} role cannot be changed or deleted")
    return role, holders


def create_role(ctx: CallContext, *, name: str, description: str, permissions: list[str]) -> Role:
    _check_permission_names(permissions, "permissions")
    _check_role_within_reach(ctx, permissions, RoleHolders())
    role = Role(
        locator=new_locator(),
        name=name,
        description=description,
        permissions=sorted(set(permissions)),
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
    )
    uow = wiring.system_unit_of_work(ctx)
    repository.add_role(uow, role)
    uow.record_event("auth.role.create", {"roleLocator": role.locator})
    uow.commit()
    return role


def get_role(ctx: CallContext, locator: str) -> Role:
    role = repository.get_role(locator)
    if role is None:
        raise codes.not_found("role", locator)
    return role


def update_role(
    ctx: CallContext,
    locator: str,
    *,
    name: str,
    description: str,
    version: int,
    add_permissions: list[str],
    remove_permissions: list[str],
) -> Role:
    role, holders = _load_changeable_role(locator)
    _check_permission_names(add_permissions, "addPermissions")
    permissions = sorted((set(role.permissions) - set(remove_permissions)) | set(add_permissions))
    _check_role_within_reach(ctx, [*role.permissions, *permissions], holders)
    if version != role.version:
        raise codes.CONCURRENT_MODIFICATION(f"The role is at version {role.version}, not {version}; reload it")
    changed = role.model_copy(
        update={"name": name, "description": description, "permissions": permissions, "version": role.version + 1}
    )
    uow = wiring.system_unit_of_work(ctx)
    repository.save_role(uow, changed, role.version, role.name, holders.version)
    uow.record_event("auth.role.update", {"roleLocator": locator})
    uow.commit()
    return changed


def list_roles(ctx: CallContext, page: PageRequest) -> Page[Role]:
    return repository.list_roles(page)


def delete_role(ctx: CallContext, locator: str) -> None:
    role, holders = _load_changeable_role(locator)
    _check_role_within_reach(ctx, role.permissions, holders)
    uow = wiring.system_unit_of_work(ctx)
    repository.delete_role(uow, role, holders.version)
    uow.record_event("auth.role.delete", {"roleLocator": locator})
    uow.commit()


# --- tenant registry -----------------------------------------------------------------------------


def create_tenant(ctx: CallContext, *, name: str, description: str | None = None, test_clock: bool = False) -> Tenant:
    """Register a tenant and give the caller access to it (unless it already has every tenant). With
    `test_clock`, the tenant gets a test clock standing at the real time of now (clock/service.py),
    written before the tenant is, so no request on the tenant can see it without its clock."""
    from chalicelib.clock import service as clocks  # test clocks: not on the way to a first request

    tenant = Tenant(
        locator=new_tenant_locator(),
        name=name,
        description=description,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        testClock=test_clock,
    )
    if test_clock:
        # the request's idempotency guard goes with the tenant's registration (system records), not here
        clock_uow = wiring.unit_of_work(replace(ctx.for_tenant(tenant.locator), idempotency=None))
        clocks.start(clock_uow, tenant.locator, wiring.clock().now())
        clock_uow.commit()
    uow = wiring.system_unit_of_work(ctx)
    repository.add_tenant(uow, tenant)
    caller = repository.get_user(ctx.user_locator) if not ctx.principal.is_system else None
    if caller is not None and ANY_TENANT not in caller.tenants:
        tenants = sorted({*caller.tenants, tenant.locator})
        repository.save_user(uow, caller, caller.model_copy(update={"tenants": tenants}))
    uow.record_event("auth.tenant.create", {"tenantLocator": tenant.locator})
    uow.commit()
    clocks.remember(tenant.locator, test_clock)
    return tenant


def get_tenant(ctx: CallContext, locator: str) -> Tenant:
    tenant = repository.get_tenant(locator)
    if tenant is None:
        raise codes.not_found("tenant", locator)
    return tenant


def list_tenant_locators() -> list[str]:
    return repository.list_tenant_locators()


def tenants_after(after: str | None, limit: int) -> tuple[list[Tenant], bool]:
    """A page of tenants in locator order, after `after`; and whether there may be more (the schedules'
    fan-out: `testClock` says which to pass over)."""
    return repository.tenants_after(after, limit)


def tenant_locators_after(after: str | None, limit: int) -> tuple[list[str], bool]:
    """A page of tenant locators in locator order, after `after`; and whether there may be more."""
    return repository.tenant_locators_after(after, limit)
