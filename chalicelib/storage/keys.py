"""Every key template of the single table, in one place.

Tenant records start with ``T#{tenantLocator}#``; system records (users, roles, tokens, the tenant
registry) start with ``SYS#``. The gateway refuses any key outside the caller's scope.
"""
from __future__ import annotations

from dataclasses import dataclass

ROOT = "#ROOT"
SYSTEM_SCOPE = "SYS#"


def tenant_scope(tenant_locator: str) -> str:
    if not tenant_locator:
        raise ValueError("a tenant key needs a tenant locator")
    return f"T#{tenant_locator}#"


@dataclass(frozen=True)
class Key:
    pk: str
    sk: str = ROOT

    def as_dict(self) -> dict[str, str]:
        return {"PK": self.pk, "SK": self.sk}


# --- system: identity and the tenant registry ---------------------------------------------------

def user(user_locator: str) -> Key:
    return Key(f"SYS#USER#{user_locator}")


def user_token_name(user_locator: str, name: str) -> Key:
    return Key(f"SYS#USER#{user_locator}", f"TOKEN#{name}")


def user_tokens_prefix() -> str:
    return "TOKEN#"


def user_name(name: str) -> Key:
    return Key(f"SYS#USERNAME#{name.lower()}")


USERS_INDEX = "SYS#USERS"


def role(role_locator: str) -> Key:
    return Key(f"SYS#ROLE#{role_locator}")


def role_name(name: str) -> Key:
    return Key(f"SYS#ROLENAME#{name.lower()}")


ROLES_INDEX = "SYS#ROLES"


def token(token_hash: str) -> Key:
    return Key(f"SYS#TOKEN#{token_hash}")


def tenant(tenant_locator: str) -> Key:
    return Key(f"SYS#TENANT#{tenant_locator}")


TENANTS_INDEX = "SYS#TENANTS"

# --- events (scope is a tenant scope, or the system scope for identity events) --------------------


def event(scope: str, event_locator: str) -> Key:
    return Key(f"{scope}EVT#{event_locator}")


def events_stream(scope: str) -> str:
    return f"{scope}EVENTS"


def events_by_type(scope: str, event_type: str) -> str:
    return f"{scope}EVTTYPE#{event_type}"


def events_by_request(scope: str, request_id: str) -> str:
    return f"{scope}REQ#{request_id}"


# --- idempotency guards ------------------------------------------------------------------------


def idempotency_guard(scope: str, user_locator: str, operation: str, key: str) -> Key:
    return Key(f"{scope}IDEMP#{user_locator}#{operation}#{key}")


# --- jobs --------------------------------------------------------------------------------------


def job(tenant_locator: str, job_locator: str) -> Key:
    return Key(f"{tenant_scope(tenant_locator)}JOB#{job_locator}")


def jobs_index(tenant_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}JOBS"


def job_leases_index(tenant_locator: str) -> str:
    """Sparse: only queued and running jobs carry it, sorted by the time their lease runs out."""
    return f"{tenant_scope(tenant_locator)}JOBLEASES"


def bootstrap_marker() -> Key:
    return Key("SYS#BOOTSTRAP")


# --- configuration deployments -------------------------------------------------------------------
# One partition per tenant: the immutable version items, the pointer to the current version (with its
# DeploymentMetadata), one item per static version locator naming its latest version, and the record
# of the bootstrap resources that createTenant stored for the tables capability to load.


def config_partition(tenant_locator: str) -> str:
    return f"{tenant_scope(tenant_locator)}CFG"


def config_current(tenant_locator: str) -> Key:
    return Key(config_partition(tenant_locator), "#CURRENT")


def config_version(tenant_locator: str, version: str) -> Key:
    return Key(config_partition(tenant_locator), f"V#{version}")


def config_static_version(tenant_locator: str, static_version_locator: str) -> Key:
    return Key(config_partition(tenant_locator), f"S#{static_version_locator}")


def config_bootstrap(tenant_locator: str) -> Key:
    return Key(config_partition(tenant_locator), "#BOOTSTRAP")
