"""What an upload is for, and who may make one: the permission of the operation the file is for (pure)."""

from __future__ import annotations

from enum import StrEnum


class Purpose(StrEnum):
    CONFIGURATION = "configuration"
    TABLE = "table"
    SCHEDULE = "schedule"
    MIGRATION = "migration"
    DOCUMENT = "document"


_TENANT_PERMISSIONS: dict[Purpose, tuple[str, ...]] = {
    Purpose.CONFIGURATION: ("deployments.deploy",),  # deploy, deployments/validate
    Purpose.TABLE: ("tables.upload", "constraints.upload"),
    Purpose.SCHEDULE: ("quotes.write", "quotes.schedule-add", "transactions.write", "transactions.schedule-add"),
    Purpose.MIGRATION: ("migration.write",),  # migration start (spec part 3): its JSON request
    Purpose.DOCUMENT: ("documents.upload-external", "documents.replace-external"),
}
_NO_TENANT_PERMISSIONS: dict[Purpose, tuple[str, ...]] = {
    Purpose.CONFIGURATION: ("tenants.create-tenant", "tenants.validate-config"),  # createTenant, validateConfig
}

ALL_PERMISSIONS: tuple[str, ...] = tuple(
    dict.fromkeys(
        permission
        for table in (_TENANT_PERMISSIONS, _NO_TENANT_PERMISSIONS)
        for found in table.values()
        for permission in found
    )
)
"""Every permission some upload takes: POST /uploads requires one of them, and then the purpose's own."""


def permissions_for(purpose: Purpose, for_tenant: bool) -> tuple[str, ...] | None:
    """Any one of these lets a caller make an upload for `purpose`, for a tenant or for none; None when the
    purpose has no operation there (every purpose but a configuration needs a tenant)."""
    return (_TENANT_PERMISSIONS if for_tenant else _NO_TENANT_PERMISSIONS).get(purpose)
