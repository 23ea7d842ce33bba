"""Migration (spec part 3, "Migration (group migration)"): the 12 rows of `/migration/{tenantLocator}`, with the
spec's path variables (the start for an existing account is under the literal `migrations/accounts/`, beside
`{migrationLocator}`, so its names differ from no sibling variable)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import BY_UPLOAD, endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.migration import schemas, service
else:
    schemas, service = lazy_modules("chalicelib.migration", "schemas", "service")

bp = Blueprint(__name__)

FOUND = [codes.MIGRATION_NOT_FOUND]


def moved_migration(tenantLocator: str, migrationLocator: str) -> None:
    """A committed pause, resume or recover whose answer was lost: replayed, void."""
    service.moved(request_context(), migrationLocator)


def patched_migration(tenantLocator: str, migrationLocator: str) -> schemas.MigrationFailuresResponse:
    """A committed patch whose answer was lost: the failures it answered, replayed."""
    return schemas.MigrationFailuresResponse.of(service.patched(request_context(), migrationLocator))


def started_migration(tenantLocator: str, locator: str, accountLocator: str | None = None) -> schemas.MigrationResponse:
    """A committed start whose answer was lost: the migration it started (its guard names it), as it is now."""
    return schemas.MigrationResponse.of(service.get_migration(request_context(), locator))


@bp.route("/migration/{tenantLocator}/migrations", methods=["POST"])
@endpoint(
    "migration.write",
    idempotent=True,
    creates="migration",
    replay=started_migration,
    errors=[codes.MIGRATION_DUPLICATE_ID, *BY_UPLOAD],
)
def start_migration(
    tenantLocator: str, query: schemas.StartQuery, body: schemas.AccountMigrationRequests | None = None
) -> schemas.MigrationResponse:
    """The accounts in the body, or (`?uploadLocator=`, DECISIONS.md "Uploads") in an upload's file."""
    return schemas.MigrationResponse.of(
        service.start(request_context(), body.root if body is not None else None, upload=query.uploadLocator)
    )


@bp.route("/migration/{tenantLocator}/migrations/accounts/{accountLocator}", methods=["POST"])
@endpoint(
    "migration.write",
    idempotent=True,
    creates="migration",
    replay=started_migration,
    errors=[codes.MIGRATION_DUPLICATE_ID, codes.NOT_FOUND["account"]],
)
def start_account_migration(
    tenantLocator: str, accountLocator: str, body: schemas.MigrationRequest
) -> schemas.MigrationResponse:
    return schemas.MigrationResponse.of(service.start_for_account(request_context(), accountLocator, body))


@bp.route("/migration/{tenantLocator}/migrations/{migrationLocator}/resume", methods=["PATCH"])
@endpoint("migration.write", idempotent=True, replay=moved_migration, errors=[*FOUND, codes.MIGRATION_INVALID_STATE])
def resume_migration(tenantLocator: str, migrationLocator: str) -> None:
    service.resume(request_context(), migrationLocator)


@bp.route("/migration/{tenantLocator}/migrations/{migrationLocator}/recover", methods=["PATCH"])
@endpoint("migration.write", idempotent=True, replay=moved_migration, errors=[*FOUND, codes.MIGRATION_INVALID_STATE])
def recover_migration(tenantLocator: str, migrationLocator: str) -> None:
    service.recover(request_context(), migrationLocator)


@bp.route("/migration/{tenantLocator}/migrations/{migrationLocator}/pause", methods=["PATCH"])
@endpoint("migration.write", idempotent=True, replay=moved_migration, errors=[*FOUND, codes.MIGRATION_INVALID_STATE])
def pause_migration(tenantLocator: str, migrationLocator: str) -> None:
    service.pause(request_context(), migrationLocator)


@bp.route("/migration/{tenantLocator}/migrations/{migrationLocator}", methods=["PATCH"])
@endpoint(
    "migration.write",
    idempotent=True,
    replay=patched_migration,
    errors=[
        *FOUND,
        codes.MIGRATION_ACCOUNT_NOT_FOUND,
        codes.MIGRATION_ACCOUNT_NOT_FAILED,
        codes.MIGRATION_INVALID_STATE,
    ],
)
def patch_migration(
    tenantLocator: str, migrationLocator: str, body: schemas.PatchAccountMigrationRequest
) -> schemas.MigrationFailuresResponse:
    return schemas.MigrationFailuresResponse.of(service.patch(request_context(), migrationLocator, body))


@bp.route("/migration/{tenantLocator}/migrations/{migrationLocator}", methods=["GET"])
@endpoint("migration.read", errors=FOUND)
def fetch_migration(tenantLocator: str, migrationLocator: str) -> schemas.MigrationResponse:
    return schemas.MigrationResponse.of(service.get_migration(request_context(), migrationLocator))


@bp.route("/migration/{tenantLocator}/migrations/{migrationLocator}/mappings/list", methods=["GET"])
@endpoint("migration.read", "migration.list", errors=FOUND)
def list_migration_mappings(
    tenantLocator: str, migrationLocator: str, query: schemas.ListQuery
) -> schemas.AccountMigrationIdMappingsListResponse:
    return schemas.AccountMigrationIdMappingsListResponse.of(
        service.mappings(request_context(), migrationLocator, query.page()),
        schemas.AccountMigrationIdMappingsResponse.of,
    )


@bp.route(
    "/migration/{tenantLocator}/migrations/{migrationLocator}/accounts/{accountLocator}/mappings", methods=["GET"]
)  # noqa: E501
@endpoint("migration.read", errors=[*FOUND, codes.MIGRATION_ACCOUNT_NOT_FOUND])
def fetch_account_mappings(
    tenantLocator: str, migrationLocator: str, accountLocator: str
) -> schemas.AccountMigrationIdMappingsResponse:
    return schemas.AccountMigrationIdMappingsResponse.of(
        service.mappings_of_account(request_context(), migrationLocator, accountLocator)
    )


@bp.route("/migration/{tenantLocator}/migrations/{migrationLocator}/accounts/{accountLocator}", methods=["GET"])
@endpoint("migration.read", errors=[*FOUND, codes.MIGRATION_ACCOUNT_NOT_FOUND])
def fetch_account_migration(
    tenantLocator: str, migrationLocator: str, accountLocator: str
) -> schemas.AccountMigrationResponse:
    return schemas.AccountMigrationResponse.of(
        service.account_state(request_context(), migrationLocator, accountLocator)
    )


@bp.route("/migration/{tenantLocator}/migrations/{migrationLocator}/accounts/list", methods=["GET"])
@endpoint("migration.read", "migration.list", errors=FOUND)
def list_account_migrations(
    tenantLocator: str, migrationLocator: str, query: schemas.ListQuery
) -> schemas.ListPageResponseAccountMigrationResponse:
    return schemas.ListPageResponseAccountMigrationResponse.of(
        service.account_states(request_context(), migrationLocator, query.page()), schemas.AccountMigrationResponse.of
    )


@bp.route("/migration/{tenantLocator}/migrations/{migrationLocator}/failures/list", methods=["GET"])
@endpoint("migration.read", "migration.list", errors=FOUND)
def list_migration_failures(
    tenantLocator: str, migrationLocator: str, query: schemas.ListQuery
) -> schemas.ListPageResponseMigrationFailuresResponse:
    return schemas.ListPageResponseMigrationFailuresResponse.of(
        service.failures(request_context(), migrationLocator, query.page()), schemas.MigrationFailuresResponse.of
    )
