"""S3 objects under `tenants/{tenant}/...`."""

from __future__ import annotations

import pytest

from chalicelib.storage import blobs


def test_a_blob_round_trips_under_the_tenant_prefix(tenant):
    key = blobs.put(tenant, "config/1.zip", b"PK\x03\x04 zip bytes", "application/zip")

    assert key == f"tenants/{tenant}/config/1.zip"
    assert blobs.get(tenant, "config/1.zip") == b"PK\x03\x04 zip bytes"


def test_a_missing_blob_is_none_and_another_tenant_sees_none_of_mine(tenant):
    from tests.builders import new_tenant

    blobs.put(tenant, "documents/D1/file.pdf", b"%PDF")

    assert blobs.get(tenant, "documents/D2/file.pdf") is None
    assert blobs.get(new_tenant(), "documents/D1/file.pdf") is None


@pytest.mark.parametrize("path", ["../other/config/1.zip", "config/../../x", "..", "/etc/passwd"])
def test_paths_that_leave_the_tenant_are_refused(tenant, path):
    with pytest.raises(ValueError):
        blobs.put(tenant, path, b"x")
    with pytest.raises(ValueError):
        blobs.get(tenant, path)


def test_a_blob_needs_a_tenant(aws):
    with pytest.raises(ValueError):
        blobs.put("", "config/1.zip", b"x")
