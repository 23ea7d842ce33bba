"""Locators: ULIDs for records, UUIDs for tenants and users."""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timezone

import pytest
from ulid import ULID

from chalicelib.core.ids import derived_locator, is_uuid, new_locator, new_tenant_locator, new_uuid_locator


def test_record_locators_are_distinct_ulids_that_sort_by_creation():
    first = new_locator()
    time.sleep(0.002)
    second = new_locator()

    assert len(first) == 26 and str(ULID.from_str(first)) == first
    assert first < second


def test_uuid_locators_are_uuids_that_still_sort_by_creation():
    first = new_uuid_locator()
    time.sleep(0.002)
    second = new_uuid_locator()

    assert is_uuid(first) and is_uuid(second)
    assert first < second


def test_tenant_locators_are_random_uuids():
    tenant = new_tenant_locator()

    assert uuid.UUID(tenant).version == 4 and tenant == tenant.lower()
    assert tenant != new_tenant_locator()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("6f1c2a4e-0d7b-4b8e-9a51-3c2d1e0f9a77", True),
        ("6F1C2A4E-0D7B-4B8E-9A51-3C2D1E0F9A77", True),
        ("6f1c2a4e0d7b4b8e9a513c2d1e0f9a77", False),  # hyphens are part of the form
        ("{6f1c2a4e-0d7b-4b8e-9a51-3c2d1e0f9a77}", False),
        ("01JALICE", False),
        ("", False),
    ],
)
def test_is_uuid_accepts_only_the_hyphenated_form(text, expected):
    assert is_uuid(text) is expected


def test_a_derived_locator_is_a_ulid_of_its_moment_and_its_seed():
    moment = datetime(2026, 3, 1, 5, 0, 0, 123000, tzinfo=timezone.utc)
    locator = derived_locator(moment, "invoice:I1")
    assert ULID.from_str(locator).datetime == moment
    assert derived_locator(moment, "invoice:I1") == locator != derived_locator(moment, "invoice:I2")
