"""HTTP to the service (the standard library's urllib: nothing to install), with its failures told apart: an
error answer (ApiError, a 5xx with its own exit code), a 401 or an expired token (NotSignedIn, with the
`pas login` that fixes it), and a service that cannot be reached (NetworkError)."""

from __future__ import annotations

import hashlib
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from pas_cli import jsonio
from pas_cli.errors import ApiError, CliError, NetworkError, NotSignedIn
from pas_cli.profiles import Profile

TIMEOUT_SECONDS = 60
UPLOAD_TIMEOUT_SECONDS = 900
"""A file PUT to an upload's URL: as long as the URL is valid (15 minutes)."""
ZIP = "application/zip"
DIRECT_LIMIT_BYTES = 10 * 1024 * 1024
"""The largest body API Gateway takes; a larger file goes through an upload (POST /uploads)."""


@dataclass(frozen=True)
class Answer:
    status: int
    raw: bytes
    content_type: str
    headers: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return jsonio.loads(self.raw) if self.raw else None

    def text(self) -> str:
        return self.raw.decode("utf-8", "replace")


def query_string(query: dict[str, Any] | None) -> str:
    """`?a=1&b=x&b=y` (lists repeat their key, booleans are true/false); empty without a query."""
    if not query:
        return ""
    pairs: list[tuple[str, str]] = []
    for key, value in query.items():
        for item in value if isinstance(value, list) else [value]:
            if item is not None:
                pairs.append((key, str(item).lower() if isinstance(item, bool) else str(item)))
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


class Client:
    """Calls of one base URL, with the profile's token when there is one."""

    def __init__(self, url: str, profile: Profile | None = None) -> None:
        self.url = url.rstrip("/")
        self.profile = profile

    @classmethod
    def of(cls, profile: Profile) -> Client:
        if profile.expired():
            raise NotSignedIn(
                f"the token of profile '{profile.name}' expired at {profile.expiresAt}: log in again "
                f"with {profile.login_hint()}"
            )
        return cls(profile.url, profile)

    def call(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        json_body: Any = None,
        form: dict[str, str] | None = None,
        data: bytes | None = None,
        content_type: str | None = None,
        accept_errors: bool = False,
    ) -> Answer:
        """One request; an error answer raises ApiError (NotSignedIn for a 401) unless `accept_errors`."""
        headers = {"Accept": "application/json, application/zip, */*", "User-Agent": "pas-cli"}
        if self.profile is not None:
            headers["Authorization"] = f"Bearer {self.profile.token}"
        if json_body is not None:
            data, content_type = jsonio.dumps(json_body).encode(), "application/json"
        elif form is not None:
            data, content_type = urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded"
        if content_type:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(
            self.url + path + query_string(query), data=data, headers=headers, method=method.upper()
        )
        answer = self._send(request)
        if answer.status >= 400 and not accept_errors:
            raise self.error_of(answer)
        return answer

    def send_file(
        self,
        method: str,
        path: str,
        content: bytes,
        *,
        purpose: str,
        tenant: str | None = None,
        query: dict[str, Any] | None = None,
        content_type: str = ZIP,
    ) -> Answer:
        """`content` as the body of the request, or, over the direct limit of a body (or when the service answers
        413 `request.too_large`), as an upload that the request names with `?uploadLocator=` (DECISIONS.md
        "Uploads"): announced with POST /uploads, then PUT to the URL it answers."""
        if len(content) <= DIRECT_LIMIT_BYTES:
            answer = self.call(method, path, query=query, data=content, content_type=content_type, accept_errors=True)
            if answer.status < 400:
                return answer
            error = self.error_of(answer)
            if not (isinstance(error, ApiError) and error.status == 413 and error.code == "request.too_large"):
                raise error
        locator = self.upload(content, purpose=purpose, tenant=tenant, content_type=content_type)
        return self.call(
            method, path, query={**(query or {}), "uploadLocator": locator}, data=b"", content_type=content_type
        )

    def upload(self, content: bytes, *, purpose: str, tenant: str | None, content_type: str) -> str:
        """An upload of `content` (POST /uploads, then the file PUT to its URL): its locator."""
        made = self.call(
            "POST",
            "/uploads",
            json_body={
                "purpose": purpose,
                "size": len(content),
                "sha256": hashlib.sha256(content).hexdigest(),
                "contentType": content_type,
                **({"tenantLocator": tenant} if tenant else {}),
            },
        ).json()
        put = urllib.request.Request(made["url"], data=content, headers=made["headers"], method=made["method"])
        try:
            with urllib.request.urlopen(put, timeout=UPLOAD_TIMEOUT_SECONDS):
                pass
        except urllib.error.HTTPError as error:
            raise CliError(
                f"the upload of {len(content)} bytes was refused: {error.code} "
                f"{error.read()[:300].decode('utf-8', 'replace')}"
            ) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            raise NetworkError(f"cannot reach the upload URL: {getattr(error, 'reason', error)}") from None
        return str(made["uploadLocator"])

    def _send(self, request: urllib.request.Request) -> Answer:
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                return Answer(
                    response.status,
                    response.read(),
                    response.headers.get("Content-Type", ""),
                    dict(response.headers.items()),
                )
        except urllib.error.HTTPError as error:
            return Answer(error.code, error.read(), error.headers.get("Content-Type", ""), dict(error.headers.items()))
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            reason = getattr(error, "reason", error)
            raise NetworkError(f"cannot reach {self.url}: {reason}") from None

    def error_of(self, answer: Answer) -> ApiError | NotSignedIn:
        try:
            body = answer.json()
        except ValueError:
            body = answer.text()
        error = ApiError(answer.status, body)
        if answer.status == 401 and self.profile is not None:
            return NotSignedIn(f"{error.line()}: log in again with {self.profile.login_hint()}")
        return error

    def sign_in(self, username: str, password: str) -> tuple[str, datetime]:
        """The password grant: the token and when it expires."""
        granted_at = datetime.now(timezone.utc)
        body = self.call(
            "POST", "/auth/token", form={"grant_type": "password", "username": username, "password": password}
        ).json()
        return body["access_token"], granted_at + timedelta(seconds=int(body["expires_in"]))
