"""Uploads through the API as a client makes them: POST /uploads, the file PUT to the answered URL with a real
HTTP client (moto intercepts it, as S3 would take it), then the operation with `?uploadLocator=`."""

from __future__ import annotations

import hashlib
from typing import Any

import requests

from tests.support.api import call, ok


def intent(api: Any, token: str, purpose: str, content: bytes, tenant: str | None = None, **overrides: Any) -> Any:
    """The answer of POST /uploads for `content` (its size and SHA-256 unless `overrides` say otherwise)."""
    body = {
        "purpose": purpose,
        "size": len(content),
        "sha256": hashlib.sha256(content).hexdigest(),
        **({"tenantLocator": tenant} if tenant else {}),
        **overrides,
    }
    return call(api, "POST", "/uploads", token, body)


def put(made: dict[str, Any], content: bytes, headers: dict[str, str] | None = None) -> requests.Response:
    """`content` PUT to the upload's URL with the headers it answered (or `headers`)."""
    sent = requests.put(made["url"], data=content, headers=made["headers"] if headers is None else headers, timeout=30)
    assert sent.status_code == 200, sent.text
    return sent


def uploaded(api: Any, token: str, purpose: str, content: bytes, tenant: str | None = None) -> str:
    """An upload of `content`, put to its URL: its locator."""
    made = ok(intent(api, token, purpose, content, tenant))
    put(made, content)
    return str(made["uploadLocator"])


def by_reference(
    api: Any, method: str, path: str, token: str, locator: str, content_type: str = "application/zip", **headers: str
) -> Any:
    """The operation at `path` with `?uploadLocator=` and no body (in one of the route's content types)."""
    separator = "&" if "?" in path else "?"
    return api.http.request(
        method,
        f"{path}{separator}uploadLocator={locator}",
        body=b"",
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type, "Accept": "*/*", **headers},
    )
