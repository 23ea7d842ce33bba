"""What can go wrong, each with the exit code a script tests for (`pas --help` lists them)."""

from __future__ import annotations

from typing import Any

OK = 0
API_ERROR = 1
"""The service answered a 4xx (other than 401), or a fixture step failed."""
USAGE = 2
"""Wrong arguments (click's own code)."""
NETWORK = 3
"""The service could not be reached, or did not answer in time."""
NOT_SIGNED_IN = 4
"""No profile, an expired token, or a 401: `pas login` again."""
SERVER_ERROR = 5
"""The service answered a 5xx."""
REJECTED = 6
"""A package did not validate or deploy, or a table of its bootstrap failed."""


class CliError(Exception):
    exit_code = API_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def line(self) -> str:
        return self.message


class NetworkError(CliError):
    exit_code = NETWORK


class NotSignedIn(CliError):
    exit_code = NOT_SIGNED_IN


class ApiError(CliError):
    """An error answer of the service (DECISIONS.md "Errors": httpStatus, code, message, requestId)."""

    def __init__(self, status: int, body: Any) -> None:
        fields = body if isinstance(body, dict) else {}
        self.status = status
        self.code = str(fields.get("code") or f"http.{status}")
        self.request_id = fields.get("requestId")
        self.field_errors = fields.get("fieldErrors") or []
        message = fields.get("message") or (body if isinstance(body, str) else "")
        super().__init__(str(message))
        self.exit_code = SERVER_ERROR if status >= 500 else API_ERROR

    def line(self) -> str:
        """The answer on one line: status, code, message, the field errors, the request id."""
        text = f"{self.status} {self.code}: {self.message}"
        fields = "; ".join(f"{e.get('field')}: {e.get('message')}" for e in self.field_errors if isinstance(e, dict))
        if fields:
            text += f" ({fields})"
        if self.request_id:
            text += f" [request {self.request_id}]"
        return text
