"""Persistence of users, roles, tokens and the tenant registry (system records, `SYS#` keys)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from chalicelib.core import codes
from chalicelib.core.errors import DomainError
from chalicelib.core.paging import Page, PageRequest
from chalicelib.identity.models import Role, RoleHolders, Tenant, Token, User
from chalicelib.storage import codec, keys, query, table, versioned
from chalicelib.storage.keys import SYSTEM_SCOPE as SCOPE
from chalicelib.storage.table import ErrorFactory
from chalicelib.storage.unit_of_work import UnitOfWork

# --- reads ---------------------------------------------------------------------------------------


def get_user(locator: str) -> User | None:
    item = table.gateway().get(SCOPE, keys.user(locator))
    return User.model_validate(codec.without_keys(item)) if item else None


ROLES_VERSION_SHARDS = 8


def get_token_and_user(
    token_hash: str, user_locator: str, roles_version_shard: int
) -> tuple[Token | None, User | None, int]:
    """The token, its owner and the current roles version, in one round trip."""
    token_key, user_key = keys.token(token_hash), keys.user(user_locator)
    version_key = keys.roles_version(roles_version_shard % ROLES_VERSION_SHARDS)
    token = user = None
    roles_version = 0
    for item in table.gateway().batch_get(SCOPE, [token_key, user_key, version_key]):
        if item["PK"] == token_key.pk:
            token = Token.model_validate(codec.without_keys(item))
        elif item["PK"] == user_key.pk and item["SK"] == user_key.sk:
            user = User.model_validate(codec.without_keys(item))
        elif item["PK"] == version_key.pk:
            roles_version = int(item["version"])
    return token, user, roles_version


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


HOLDER_TENANT = "tenant#"
"""Prefix of a holders record's attributes, one per tenant: how many holders of the role work for it."""


def role_and_holders(locator: str) -> tuple[Role | None, RoleHolders]:
    """The role and the tenants of its holders, in one round trip."""
    role_key, holders_key = keys.role(locator), keys.role_holders(locator)
    role, holders = None, RoleHolders()
    for item in table.gateway().batch_get(SCOPE, [role_key, holders_key]):
        if item["SK"] == role_key.sk:
            role = Role.model_validate(codec.without_keys(item))
        else:
            holders = RoleHolders(
                version=int(item["version"]),
                tenants=frozenset(
                    name.removeprefix(HOLDER_TENANT)
                    for name, count in item.items()
                    if name.startswith(HOLDER_TENANT) and count > 0
                ),
            )
    return role, holders


def roles(locators: list[str]) -> list[Role]:
    """The existing roles among `locators`, in the given order (deleted roles drop out)."""
    if not locators:
        return []
    found = {
        i["locator"]: Role.model_validate(codec.without_keys(i))
        for i in table.gateway().batch_get(SCOPE, [keys.role(r) for r in locators])
    }
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
    return [
        codec.without_keys(i)
        for i in query.all_items(
            table.gateway(), SCOPE, keys.user(user_locator).pk, sk_prefix=keys.user_tokens_prefix()
        )
    ]


def get_tenant(locator: str) -> Tenant | None:
    item = table.gateway().get(SCOPE, keys.tenant(locator))
    return Tenant.model_validate(codec.without_keys(item)) if item else None


def list_tenant_locators() -> list[str]:
    return [i["locator"] for i in query.all_items(table.gateway(), SCOPE, keys.TENANTS_INDEX, index="GSI2")]


def tenant_locators_after(after: str | None, limit: int) -> tuple[list[str], bool]:
    """Up to `limit` tenant locators in locator order, after `after` (None: from the first); and whether
    there may be more."""
    items, more = table.gateway().query(SCOPE, keys.TENANTS_INDEX, index="GSI2", sk_after=after, limit=limit)
    return [str(item["locator"]) for item in items], more is not None


def tenants_after(after: str | None, limit: int) -> tuple[list[Tenant], bool]:
    """Up to `limit` tenants in locator order, after `after` (None: from the first); and whether there may
    be more."""
    items, more = table.gateway().query(SCOPE, keys.TENANTS_INDEX, index="GSI2", sk_after=after, limit=limit)
    return [Tenant.model_validate(codec.without_keys(item)) for item in items], more is not None


def is_bootstrapped() -> bool:
    return table.gateway().get(SCOPE, keys.bootstrap_marker()) is not None


# --- writes --------------------------------------------------------------------------------------


def _user_item(user: User) -> dict[str, Any]:
    return {
        **keys.user(user.locator).as_dict(),
        "GSI2PK": keys.USERS_INDEX,
        "GSI2SK": user.locator,
        "entity": "user",
        **user.model_dump(),
    }


def _name_taken(user_name: str) -> DomainError:
    return codes.USER_NAME_TAKEN(f"The user name {user_name} is already taken")


def add_user(uow: UnitOfWork, user: User) -> None:
    uow.add(
        table.put_new(_user_item(user), lambda: codes.CONFLICT_ALREADY_EXISTS("The user already exists")),
        table.put_new(
            {**keys.user_name(user.userName).as_dict(), "entity": "userName", "userLocator": user.locator},
            lambda: _name_taken(user.userName),
        ),
    )
    _count_holders(uow, None, user)


def save_user(uow: UnitOfWork, previous: User, changed: User) -> None:
    """Rewrite the user record (a None field removed) if nobody changed it since `previous` was read."""
    uow.add(
        versioned.rewrite(
            keys.user(changed.locator),
            changed.model_copy(update={"version": previous.version}),
            exclude={"createdAt", "createdBy", "userName"},
        )
    )
    _count_holders(uow, previous, changed)


def delete_user(uow: UnitOfWork, user: User, named: list[dict[str, Any]]) -> None:
    uow.add(
        table.delete(
            keys.user(user.locator), must_exist=True, on_missing=lambda: codes.not_found("user", user.locator)
        ),
        table.delete(keys.user_name(user.userName)),
    )
    delete_named_tokens(uow, user.locator, named)
    _count_holders(uow, user, None)


def _count_holders(uow: UnitOfWork, before: User | None, after: User | None) -> None:
    """The holders records of the roles whose (role, tenant) pairs the user gains or loses, in the user's own
    transaction: one more or one fewer holder per tenant. A deleted role's record is kept on, as its locator
    stays on its holders."""
    pairs = _role_tenant_pairs(after)
    pairs.subtract(_role_tenant_pairs(before))
    by_role: dict[str, dict[str, int]] = defaultdict(dict)
    for (role, tenant), delta in pairs.items():
        if delta:
            by_role[role][tenant] = delta
    uow.add(*(_add_holders(role, deltas) for role, deltas in sorted(by_role.items())))


def _role_tenant_pairs(user: User | None) -> Counter[tuple[str, str]]:
    if user is None:
        return Counter()
    return Counter((role, tenant) for role in set(user.roleLocators) for tenant in set(user.tenants))


def _add_holders(role_locator: str, deltas: dict[str, int]) -> table.WriteOp:
    names = {"#version": "version"}
    values = {":one": codec.serialize_value(1)}
    for i, (tenant, delta) in enumerate(sorted(deltas.items())):
        names[f"#t{i}"] = HOLDER_TENANT + tenant
        values[f":t{i}"] = codec.serialize_value(delta)
    additions = ", ".join(["#version :one", *(f"#t{i} :t{i}" for i in range(len(deltas)))])
    key = keys.role_holders(role_locator)
    return table.WriteOp(
        "Update",
        {
            "Key": codec.serialize(key.as_dict()),
            "UpdateExpression": f"ADD {additions}",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        },
        key,
    )


def add_role(uow: UnitOfWork, role: Role) -> None:
    uow.add(
        table.put_new(
            {
                **keys.role(role.locator).as_dict(),
                "GSI2PK": keys.ROLES_INDEX,
                "GSI2SK": role.locator,
                "entity": "role",
                **role.model_dump(),
            }
        ),
        _role_name_guard(role),
    )


def _role_name_guard(role: Role) -> table.WriteOp:
    return table.put_new(
        {
            **keys.role_name(role.name).as_dict(),
            "entity": "roleName",
            "roleName": role.name,
            "roleLocator": role.locator,
        },
        lambda: codes.ROLE_NAME_TAKEN(f"A role named {role.name} already exists"),
    )


def save_role(uow: UnitOfWork, role: Role, expected_version: int, previous_name: str, holders_version: int) -> None:
    """The role as changed, if neither it nor its holders changed since they were read."""
    uow.add(
        table.update(
            keys.role(role.locator),
            {"name": role.name, "description": role.description, "permissions": role.permissions},
            expected_version=expected_version,
            on_failure=lambda: codes.CONCURRENT_MODIFICATION("The role was changed by another request; reload it"),
        ),
        _holders_unchanged(role.locator, holders_version),
    )
    if previous_name.lower() != role.name.lower():
        uow.add(table.delete(keys.role_name(previous_name)), _role_name_guard(role))
    _bump_roles_version(uow)


def delete_role(uow: UnitOfWork, role: Role, holders_version: int) -> None:
    """The role, if neither it nor its holders changed since they were read."""
    key = keys.role(role.locator)
    uow.add(
        table.WriteOp(
            "Delete",
            {"Key": codec.serialize(key.as_dict()), **_version_condition(role.version)},
            key,
            lambda: codes.CONCURRENT_MODIFICATION("The role was changed or deleted by another request"),
        ),
        table.delete(keys.role_name(role.name)),
        _holders_unchanged(role.locator, holders_version),
    )
    _bump_roles_version(uow)


def _holders_unchanged(role_locator: str, version: int) -> table.WriteOp:
    key = keys.role_holders(role_locator)
    return table.WriteOp(
        "ConditionCheck",
        {"Key": codec.serialize(key.as_dict()), **_version_condition(version)},
        key,
        lambda: codes.CONCURRENT_MODIFICATION("Who holds the role changed meanwhile; retry"),
    )


def check_roles_version(uow: UnitOfWork, shard: int, version: int) -> None:
    """Commit only while the roles version (the copy `shard` that was read) is still `version`."""
    key = keys.roles_version(shard % ROLES_VERSION_SHARDS)
    uow.add(
        table.WriteOp(
            "ConditionCheck",
            {"Key": codec.serialize(key.as_dict()), **_version_condition(version)},
            key,
            lambda: codes.CONCURRENT_MODIFICATION("A role changed while this request ran; retry"),
        )
    )


def _version_condition(version: int) -> dict[str, Any]:
    """The item's `version` is `version` (0: the item or its version does not exist yet)."""
    if version == 0:
        return {
            "ConditionExpression": "attribute_not_exists(#version)",
            "ExpressionAttributeNames": {"#version": "version"},
        }
    return {
        "ConditionExpression": "#version = :expected",
        "ExpressionAttributeNames": {"#version": "version"},
        "ExpressionAttributeValues": {":expected": codec.serialize_value(version)},
    }


def _bump_roles_version(uow: UnitOfWork) -> None:
    """Every copy, in the role change's own transaction: the next authentication anywhere sees it."""
    uow.add(*(_add(keys.roles_version(shard), "version", 1) for shard in range(ROLES_VERSION_SHARDS)))


def add_session_token(uow: UnitOfWork, token: Token) -> None:
    uow.add(table.put_new(_token_item(token)))


def _token_item(token: Token) -> dict[str, Any]:
    item = {**keys.token(token.tokenHash).as_dict(), "entity": "token", **token.model_dump()}
    if token.expiresAt is not None:
        item["ttl"] = int(token.expiresAt.timestamp()) + 24 * 3600  # DynamoDB TTL sweeps expired tokens
    return item


def add_named_token(uow: UnitOfWork, token: Token, *, held: int, limit: int, on_limit: ErrorFactory) -> None:
    """The token, its name item, and one more on the owner's token counter, which refuses to pass
    `limit` even when parallel requests each read fewer than `limit` tokens (`held`: what was read)."""
    uow.add(
        table.put_new(_token_item(token)),
        table.put_new(
            {
                **keys.user_token_name(token.userLocator, token.name or "").as_dict(),
                "entity": "tokenName",
                "name": token.name,
                "tokenHash": token.tokenHash,
                "createdAt": token.createdAt,
                "expiresAt": token.expiresAt,
                "permissions": token.permissions,
                "tenants": token.tenants,
            },
            lambda: codes.TOKEN_NAME_TAKEN(f"A token named {token.name} already exists"),
        ),
        _add(keys.user_named_token_count(token.userLocator), "count", 1, start=held, below=limit, on_limit=on_limit),
    )


def delete_named_token(uow: UnitOfWork, user_locator: str, name: str, token_hash: str, *, held: int) -> None:
    uow.add(
        table.delete(
            keys.user_token_name(user_locator, name), must_exist=True, on_missing=lambda: codes.not_found("token", name)
        ),
        table.delete(keys.token(token_hash)),
        _add(keys.user_named_token_count(user_locator), "count", -1, start=held),
    )


def delete_named_tokens(uow: UnitOfWork, user_locator: str, named: list[dict[str, Any]]) -> None:
    """Every named token of the user, and its token counter."""
    uow.add(
        *(table.delete(keys.token(t["tokenHash"])) for t in named),
        *(table.delete(keys.user_token_name(user_locator, t["name"])) for t in named),
        table.delete(keys.user_named_token_count(user_locator)),
    )


# --- sign-in attempt counters --------------------------------------------------------------------


def count_sign_in_attempt(
    subjects: list[tuple[str, str, int]], window: int, expires_at_epoch: int, on_limit: ErrorFactory
) -> None:
    """One more attempt for each (kind, digest, limit) subject in `window`, all or none, and only while every
    count is below its limit (else `on_limit()`); DynamoDB's TTL removes the items of a window some time
    after `expires_at_epoch`."""
    table.gateway().transact(
        SCOPE,
        [
            _add(
                keys.sign_in_failures(kind, digest, window),
                "count",
                1,
                below=limit,
                ttl=expires_at_epoch,
                on_limit=on_limit,
            )
            for kind, digest, limit in subjects
        ],
    )


def take_back_sign_in_attempt(
    uow: UnitOfWork, cleared: tuple[str, str], kept: list[tuple[str, str]], window: int, expires_at_epoch: int
) -> None:
    """After a success: the `cleared` subject's count (the user name's) goes, the `kept` ones (the source
    address's) lose the one attempt that succeeded."""
    uow.add(
        table.delete(keys.sign_in_failures(*cleared, window)),
        *(_add(keys.sign_in_failures(*subject, window), "count", -1, ttl=expires_at_epoch) for subject in kept),
    )


def _add(
    key: keys.Key,
    attribute: str,
    delta: int,
    *,
    start: int = 0,
    below: int | None = None,
    ttl: int | None = None,
    on_limit: ErrorFactory | None = None,
) -> table.WriteOp:
    """An atomic counter update: `attribute` (taken as `start` while absent) plus `delta`; with `below`,
    only while the stored value is below it."""
    names = {"#counter": attribute}
    values = {":start": codec.serialize_value(start), ":delta": codec.serialize_value(delta)}
    expression = "SET #counter = if_not_exists(#counter, :start) + :delta"
    if ttl is not None:
        names["#ttl"] = "ttl"
        values[":ttl"] = codec.serialize_value(ttl)
        expression += ", #ttl = :ttl"
    params: dict[str, Any] = {
        "Key": codec.serialize(key.as_dict()),
        "UpdateExpression": expression,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
    if below is not None:
        values[":below"] = codec.serialize_value(below)
        params["ConditionExpression"] = "attribute_not_exists(#counter) OR #counter < :below"
    return table.WriteOp(
        "Update",
        params,
        key,
        on_limit
        or (lambda: codes.CONCURRENT_MODIFICATION("The record was changed by another request; reload it and retry")),
    )


def add_tenant(uow: UnitOfWork, tenant: Tenant) -> None:
    uow.add(
        table.put_new(
            {
                **keys.tenant(tenant.locator).as_dict(),
                "GSI2PK": keys.TENANTS_INDEX,
                "GSI2SK": tenant.locator,
                "entity": "tenant",
                **tenant.model_dump(),
            }
        )
    )


def mark_bootstrapped(uow: UnitOfWork, admin_locator: str) -> None:
    uow.add(
        table.put_new(
            {**keys.bootstrap_marker().as_dict(), "entity": "bootstrap", "adminLocator": admin_locator},
            lambda: codes.IDENTITY_ALREADY_BOOTSTRAPPED("Already bootstrapped"),
        )
    )
