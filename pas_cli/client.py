"""HTTP to the service (the standard library's urllib: nothing to install), with its failures told apart: an
error answer (ApiError, a 5xx with its own exit code), a 401 or an expired token (NotSignedIn, with the
`pas login` that fixes it), and a service that cannot be reached (NetworkError)."""
from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from pas_cli import jsonio
from pas_cli.errors import ApiError, NetworkError, NotSignedIn
from pas_cli.profiles import Profile

TIMEOUT_SECONDS = 60
ZIP = "application/zip"


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
            raise NotSignedIn(f"the token of profile '{profile.name}' expired at {profile.expiresAt}: log in again "
                              f"with {profile.login_hint()}")
        return cls(profile.url, profile)

    def call(self, method: str, path: str, *, query: dict[str, Any] | None = None, json_body: Any = None,
             form: dict[str, str] | None = None, data: bytes | None = None, content_type: str | None = None,
             accept_errors: bool = False) -> Answer:
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
        request = urllib.request.Request(self.url + path + query_string(query), data=data, headers=headers,
                                         method=method.upper())
        answer = self._send(request)
        if answer.status >= 400 and not accept_errors:
            raise self.error_of(answer)
        return answer

    def _send(self, request: urllib.request.Request) -> Answer:
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                return Answer(response.status, response.read(), response.headers.get("Content-Type", ""),
                              dict(response.headers.items()))
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
        body = self.call("POST", "/auth/token", form={"grant_type": "password", "username": username,
                                                      "password": password}).json()
        return body["access_token"], granted_at + timedelta(seconds=int(body["expires_in"]))
