"""The migration API contract (spec part 3 "Migration"; the OpenAPI file's shapes)."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from pydantic import BaseModel, Field, RootModel

from chalicelib.core.paging import ListQuery as ListQuery  # the one list query model (core/paging.py)
from chalicelib.core.paging import ListResponse
from chalicelib.http.contract import UPLOAD_LOCATOR_PATTERN
from chalicelib.migration.models import (
    MAX_ACCOUNTS,
    AccountFailures,
    AccountMappings,
    AccountMigration,
    AccountMigrationRequest,
    AccountMigrationState,
    Migration,
    MigrationRequest,
    MigrationState,
    PatchAccountMigrationRequest,
)

__all__ = ["AccountMigrationRequests", "MigrationRequest", "PatchAccountMigrationRequest", "ListQuery", "StartQuery"]


class AccountMigrationRequests(RootModel[list[AccountMigrationRequest]]):
    root: list[AccountMigrationRequest] = Field(max_length=MAX_ACCOUNTS)


class StartQuery(BaseModel):
    upload_purpose: ClassVar[str] = "migration"
    """What a body over the direct limit is told to upload as (http/contract.py `referenced_upload_purpose`)."""
    uploadLocator: str | None = Field(default=None, pattern=UPLOAD_LOCATOR_PATTERN)
    """The upload (`POST /uploads`, purpose `migration`) holding the request, in place of the body."""


class MigrationResponse(BaseModel):
    locator: str
    migrationState: MigrationState
    processedAccounts: int
    totalAccounts: int
    completedAccounts: int
    failedAccounts: int
    errorAccounts: int

    @classmethod
    def of(cls, migration: Migration) -> MigrationResponse:
        return cls(**migration.model_dump(include=set(cls.model_fields)))


class AccountMigrationResponse(BaseModel):
    accountMigrationState: AccountMigrationState
    errorItems: int
    lastUpdated: datetime
    processedItems: int
    totalItems: int
    accountLocator: str | None = None

    @classmethod
    def of(cls, account: AccountMigration) -> AccountMigrationResponse:
        """`accountLocator` once the account exists (completed) or is failed (to patch it): before, it names
        records a staged account writes before its commit (service._commit_account), which no read may reach."""
        shown = account.accountMigrationState in (AccountMigrationState.COMPLETED, AccountMigrationState.FAILED)
        return cls(**account.model_dump(include=set(cls.model_fields) - (set() if shown else {"accountLocator"})))


class ListPageResponseAccountMigrationResponse(ListResponse[AccountMigrationResponse]):
    pass


class MigrationFailuresResponse(AccountFailures):
    @classmethod
    def of(cls, failures: AccountFailures) -> MigrationFailuresResponse:
        return cls(**failures.model_dump())


class ListPageResponseMigrationFailuresResponse(ListResponse[MigrationFailuresResponse]):
    pass


class AccountMigrationIdMappingsResponse(AccountMappings):
    @classmethod
    def of(cls, mappings: AccountMappings) -> AccountMigrationIdMappingsResponse:
        return cls(**mappings.model_dump())


class AccountMigrationIdMappingsListResponse(ListResponse[AccountMigrationIdMappingsResponse]):
    pass
