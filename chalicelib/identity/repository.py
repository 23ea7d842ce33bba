"""Persistence of users, roles, tokens and the tenant registry (system records, `SYS#` keys)."""
from __future__ import annotations

from typing import Any

from chalicelib.core.errors import AlreadyExists, ConcurrentModification, Conflict, NotFound
from chalicelib.core.paging import Page, PageRequest
from chalicelib.identity.models import Role, Tenant, Token, TokenKind, User
from chalicelib.storage import codec, keys, query, table
from chalicelib.storage.keys import SYSTEM_SCOPE as SCOPE
from chalicelib.storage.unit_of_work import UnitOfWork

# --- reads ---------------------------------------------------------------------------------------


def get_user(locator: str) -> User | None:
    item = table.gateway().get(SCOPE, keys.user(locator))
    return User.model_validate(codec.without_keys(item)) if item else None


def get_token_and_user(token_hash: str, user_locator: str) -> tuple[Token | None, User | None]:
    """The token and its owner in one round trip."""
    token_key, user_key = keys.token(token_hash), keys.user(user_locator)
    token = user = None
    for item in table.gateway().batch_get(SCOPE, [token_key, user_key]):
        if item["PK"] == token_key.pk:
            token = Token.model_validate(codec.without_keys(item))
        elif item["PK"] == user_key.pk and item["SK"] == user_key.sk:
            user = User.model_validate(codec.without_keys(item))
    return token, user


def get_token(token_hash: str) -> Token | None:
    item = table.gateway().get(SCOPE, keys.token(token_hash))
    return Token.model_validate(codec.without_keys(item)) if item else None


def user_locator_by_name(user_name: str) -> str | None:
    item = table.gateway().get(SCOPE, keys.user_name(user_name))
    return item["userLocator"] if item else None


def list_users(page: PageRequest) -> Page[User]:
    found = query.page(table.gateway(), SCOPE, keys.USERS_INDEX, page, index="GSI2")
    return Page([User.model_validate(codec.without_keys(i)) for i in found.items], found.list_completed)


def get_role(locator: str) -> Role | None:
    item = table.gateway().get(SCOPE, keys.role(locator))
    return Role.model_validate(codec.without_keys(item)) if item else None


def roles(locators: list[str]) -> list[Role]:
    """The existing roles among `locators`, in the given order (deleted roles drop out)."""
    if not locators:
        return []
    found = {i["locator"]: Role.model_validate(codec.without_keys(i))
             for i in table.gateway().batch_get(SCOPE, [keys.role(r) for r in locators])}
    return [found[r] for r in locators if r in found]


def role_locators_by_name(names: list[str]) -> dict[str, str]:
    """Lower-cased role name -> locator, for the names that exist."""
    if not names:
        return {}
    items = table.gateway().batch_get(SCOPE, [keys.role_name(n) for n in names])
    return {i["roleName"].lower(): i["roleLocator"] for i in items}


def list_roles(page: PageRequest) -> Page[Role]:
    found = query.page(table.gateway(), SCOPE, keys.ROLES_INDEX, page, index="GSI2")
    return Page([Role.model_validate(codec.without_keys(i)) for i in found.items], found.list_completed)


def named_tokens(user_locator: str) -> list[dict[str, Any]]:
    """The user's named tokens (at most ten): name, hash, createdAt, expiresAt, permissions, tenants."""
    return [codec.without_keys(i) for i in query.all_items(
        table.gateway(), SCOPE, keys.user(user_locator).pk, sk_prefix=keys.user_tokens_prefix())]


def get_tenant(locator: str) -> Tenant | None:
    item = table.gateway().get(SCOPE, keys.tenant(locator))
    return Tenant.model_validate(codec.without_keys(item)) if item else None


def list_tenant_locators() -> list[str]:
    return [i["locator"] for i in query.all_items(table.gateway(), SCOPE, keys.TENANTS_INDEX, index="GSI2")]


def is_bootstrapped() -> bool:
    return table.gateway().get(SCOPE, keys.bootstrap_marker()) is not None


# --- writes --------------------------------------------------------------------------------------


def _user_item(user: User) -> dict[str, Any]:
    return {**keys.user(user.locator).as_dict(), "GSI2PK": keys.USERS_INDEX, "GSI2SK": user.locator,
            "entity": "user", **user.model_dump()}


def _name_taken(user_name: str) -> Conflict:
    return AlreadyExists(f"The user name {user_name} is already taken", code="user.name_taken")


def add_user(uow: UnitOfWork, user: User) -> None:
    uow.add(
        table.put_new(_user_item(user), lambda: AlreadyExists("The user already exists")),
        table.put_new({**keys.user_name(user.userName).as_dict(), "entity": "userName",
                       "userLocator": user.locator}, lambda: _name_taken(user.userName)),
    )


def save_user(uow: UnitOfWork, user: User, expected_version: int) -> None:
    """Replace the user record if nobody changed it since `expected_version` was read."""
    changes = user.model_dump(exclude={"locator", "version", "createdAt", "createdBy", "userName"})
    uow.add(table.update(keys.user(user.locator), changes, expected_version=expected_version))


def delete_user(uow: UnitOfWork, user: User, token_hashes: list[str], token_names: list[str]) -> None:
    uow.add(
        table.delete(keys.user(user.locator), must_exist=True, on_missing=lambda: NotFound("user", user.locator)),
        table.delete(keys.user_name(user.userName)),
        *(table.delete(keys.token(h)) for h in token_hashes),
        *(table.delete(keys.user_token_name(user.locator, n)) for n in token_names),
    )


def add_role(uow: UnitOfWork, role: Role) -> None:
    uow.add(
        table.put_new({**keys.role(role.locator).as_dict(), "GSI2PK": keys.ROLES_INDEX, "GSI2SK": role.locator,
                       "entity": "role", **role.model_dump()}),
        _role_name_guard(role),
    )


def _role_name_guard(role: Role) -> table.WriteOp:
    return table.put_new(
        {**keys.role_name(role.name).as_dict(), "entity": "roleName", "roleName": role.name,
         "roleLocator": role.locator},
        lambda: AlreadyExists(f"A role named {role.name} already exists", code="role.name_taken"),
    )


def save_role(uow: UnitOfWork, role: Role, expected_version: int, previous_name: str) -> None:
    uow.add(table.update(
        keys.role(role.locator),
        {"name": role.name, "description": role.description, "permissions": role.permissions},
        expected_version=expected_version,
        on_failure=lambda: ConcurrentModification("The role was changed by another request; reload it"),
    ))
    if previous_name.lower() != role.name.lower():
        uow.add(table.delete(keys.role_name(previous_name)), _role_name_guard(role))


def delete_role(uow: UnitOfWork, role: Role) -> None:
    uow.add(table.delete(keys.role(role.locator), must_exist=True, on_missing=lambda: NotFound("role", role.locator)),
            table.delete(keys.role_name(role.name)))


def add_token(uow: UnitOfWork, token: Token) -> None:
    item = {**keys.token(token.tokenHash).as_dict(), "entity": "token", **token.model_dump()}
    if token.expiresAt is not None:
        item["ttl"] = int(token.expiresAt.timestamp()) + 24 * 3600  # DynamoDB TTL sweeps expired tokens
    uow.add(table.put_new(item))
    if token.kind == TokenKind.NAMED:
        uow.add(table.put_new(
            {**keys.user_token_name(token.userLocator, token.name or "").as_dict(), "entity": "tokenName",
             "name": token.name, "tokenHash": token.tokenHash, "createdAt": token.createdAt,
             "expiresAt": token.expiresAt, "permissions": token.permissions, "tenants": token.tenants},
            lambda: AlreadyExists(f"A token named {token.name} already exists", code="token.name_taken"),
        ))


def delete_named_token(uow: UnitOfWork, user_locator: str, name: str, token_hash: str) -> None:
    uow.add(table.delete(keys.user_token_name(user_locator, name), must_exist=True,
                         on_missing=lambda: NotFound("token", name)),
            table.delete(keys.token(token_hash)))


def add_tenant(uow: UnitOfWork, tenant: Tenant) -> None:
    uow.add(table.put_new({**keys.tenant(tenant.locator).as_dict(), "GSI2PK": keys.TENANTS_INDEX,
                           "GSI2SK": tenant.locator, "entity": "tenant", **tenant.model_dump()}))


def mark_bootstrapped(uow: UnitOfWork, admin_locator: str) -> None:
    uow.add(table.put_new({**keys.bootstrap_marker().as_dict(), "entity": "bootstrap",
                           "adminLocator": admin_locator},
                          lambda: Conflict("Already bootstrapped", code="identity.already_bootstrapped")))
