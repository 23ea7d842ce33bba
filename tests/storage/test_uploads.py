"""The upload repository on moto: an intent is claimed by one request only (a conditional write on its
version, so two requests that both read it unused cannot both use it), released on its claim's version, and
kept in the scope of its tenant, or of its maker when it has none."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from chalicelib.core.errors import DomainError
from chalicelib.core.ids import new_locator
from chalicelib.storage import keys, table
from chalicelib.uploads import repository
from chalicelib.uploads.models import UploadIntent
from chalicelib.uploads.purposes import Purpose

AT = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)


def _intent(tenant: str | None, user: str = "u-1") -> UploadIntent:
    intent = UploadIntent(
        locator=new_locator(),
        purpose=Purpose.CONFIGURATION,
        tenantLocator=tenant,
        createdBy=user,
        size=3,
        sha256="ab" * 32,
        contentType="application/zip",
        createdAt=AT,
        expiresAt=AT + timedelta(minutes=15),
    )
    repository.add(intent)
    return intent


def test_of_two_requests_that_read_an_upload_unused_only_one_claims_it(aws, tenant):
    intent = _intent(tenant)
    first, second = repository.get(tenant, "anyone", intent.locator), repository.get(tenant, "else", intent.locator)

    claimed = repository.claim(first, AT, "request-1")
    with pytest.raises(DomainError) as lost:
        repository.claim(second, AT, "request-2")

    assert (lost.value.code, lost.value.status) == ("upload.already_used", 409)
    stored = repository.get(tenant, "anyone", intent.locator)
    assert (
        (stored.usedBy, stored.usedAt, stored.version)
        == ("request-1", AT, 2)
        == (claimed.usedBy, claimed.usedAt, claimed.version)
    )


def test_a_released_upload_is_unused_again_and_can_be_claimed(aws, tenant):
    intent = _intent(tenant)
    repository.release(repository.claim(intent, AT, "failed-request"))

    again = repository.get(tenant, "anyone", intent.locator)
    assert (again.usedAt, again.usedBy, again.version) == (None, None, 3)
    assert repository.claim(again, AT, "next-request").usedBy == "next-request"


def test_an_intent_for_no_tenant_is_its_makers_and_expires_from_the_table_a_day_after_its_url(aws, tenant):
    intent = _intent(None, user="maker")

    assert repository.get(None, "maker", intent.locator) == intent
    assert repository.get(None, "someone-else", intent.locator) is None
    assert repository.get(tenant, "maker", intent.locator) is None
    item = table.gateway().get(keys.SYSTEM_SCOPE, keys.user_upload("maker", intent.locator))
    assert item["ttl"] == int((AT + timedelta(minutes=15, days=1)).timestamp())
    assert keys.upload_object(None, "maker", intent.locator) == f"uploads/users/maker/{intent.locator}"
    assert keys.upload_object(tenant, "maker", intent.locator) == f"uploads/tenants/{tenant}/{intent.locator}"
