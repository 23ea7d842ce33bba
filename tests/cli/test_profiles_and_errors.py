"""`pas login` and its profiles, `--help` everywhere, and the failures a script tells apart by exit code: the
service's error answer on one line (1), a network error (3), an expired or refused token with the login that
fixes it (4), a 5xx (5)."""

from __future__ import annotations

import json
import stat
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from tests.cli.conftest import GADGETCOVER
from tests.e2e.support import free_port

COMMANDS = [
    [],
    ["login"],
    ["profiles"],
    ["config"],
    ["config", "deploy"],
    ["tables"],
    ["tables", "upload"],
    ["tables", "get"],
    ["clock"],
    ["clock", "show"],
    ["clock", "advance"],
    ["events"],
    ["events", "tail"],
    ["fixtures"],
]


def test_every_command_answers_help(pas):
    for command in COMMANDS:
        done = pas(*command, "--help")
        assert done.returncode == 0, (command, done.stderr)
        assert done.stdout.startswith("Usage: pas"), command
    assert "Exit codes: 0 done" in pas("--help").stdout
    assert pas("clock", "advance").returncode == 2  # --to and --tenant missing


def test_login_keeps_a_named_profile_readable_by_its_owner_alone(pas, local_stack, config_home):
    done = pas(
        "login",
        "--url",
        local_stack.base_url + "/",
        "--username",
        "admin@example.com",
        "--password",
        "admin",
        "--profile",
        "local",
    )
    assert done.returncode == 0, done.stderr
    stored = config_home / "pas" / "profiles.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(stored.parent.stat().st_mode) == 0o700
    assert "profile 'local'" in done.stdout

    prompted = pas(
        "login",
        "--url",
        local_stack.base_url,
        "--username",
        "admin@example.com",
        "--json",
        input="admin\n",
        new_session=True,
    )  # no terminal: the prompt reads stdin
    assert prompted.returncode == 0, prompted.stderr
    assert json.loads(prompted.stdout.splitlines()[-1])["profile"] == "default"

    listed = json.loads(pas("profiles", "--json").stdout)
    url = local_stack.base_url
    assert [(p["profile"], p["url"], p["username"], p["expired"]) for p in listed] == [
        ("default", url, "admin@example.com", False),
        ("local", url, "admin@example.com", False),
    ]
    assert json.loads(stored.read_text())["profiles"]["local"]["token"]
    assert f"local    {local_stack.base_url}  admin@example.com  valid until " in pas("profiles").stdout

    wrong = pas("login", "--url", local_stack.base_url, "--username", "admin@example.com", "--password", "wrong")
    assert wrong.returncode == 1
    assert wrong.stderr.startswith("error: 401 auth.sign_in_failed: ")
    assert "[request " in wrong.stderr


def test_failures_have_exit_codes_of_their_own(signed_in, local_stack, config_home):
    pas = signed_in
    deployed = pas("config", "deploy", str(GADGETCOVER), "--create", "Errors", "--json")
    assert deployed.returncode == 0, deployed.stderr
    tenant = json.loads(deployed.stdout)["locator"]

    refused = pas("clock", "advance", "--to", "2030-01-01T00:00:00Z", "--tenant", tenant)
    assert refused.returncode == 1
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"error: 409 clock.not_a_test_clock: Tenant {tenant} has no test clock")
    assert line.endswith("]") and "[request " in line

    stored = config_home / "pas" / "profiles.json"
    profiles = json.loads(stored.read_text())
    profile = profiles["profiles"]["default"]
    profiles["profiles"]["unreachable"] = {**profile, "url": f"http://127.0.0.1:{free_port()}"}
    profiles["profiles"]["expired"] = {**profile, "expiresAt": "2020-01-01T00:00:00+00:00"}
    profiles["profiles"]["forged"] = {**profile, "token": profile["token"][:-4] + "AAAA"}
    stored.write_text(json.dumps(profiles))

    unreachable = pas("clock", "show", "--tenant", tenant, "--profile", "unreachable")
    assert unreachable.returncode == 3
    assert unreachable.stderr.startswith("error: cannot reach http://127.0.0.1:")

    expired = pas("clock", "show", "--tenant", tenant, "--profile", "expired")
    assert expired.returncode == 4
    assert (
        "expired at 2020-01-01T00:00:00+00:00: log in again with pas login --url "
        f"{local_stack.base_url} --username admin@example.com --profile expired" in expired.stderr
    )

    forged = pas("clock", "show", "--tenant", tenant, "--profile", "forged")
    assert forged.returncode == 4
    assert forged.stderr.startswith("error: 401 auth.token_invalid: ")
    assert "log in again with pas login --url" in forged.stderr

    missing = pas("clock", "show", "--tenant", tenant, "--profile", "nobody")
    assert missing.returncode == 4
    assert "no profile 'nobody'" in missing.stderr


class Failing(BaseHTTPRequestHandler):
    """A service in trouble: every request answers 503 with an error body."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = json.dumps(
            {"httpStatus": 503, "code": "service.unavailable", "message": "down for a moment", "requestId": "01TEST"}
        ).encode()
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_server_error_has_its_own_exit_code(pas, config_home):
    server = HTTPServer(("127.0.0.1", 0), Failing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (config_home / "pas").mkdir(parents=True)
        (config_home / "pas" / "profiles.json").write_text(
            json.dumps(
                {
                    "profiles": {
                        "default": {
                            "url": f"http://127.0.0.1:{server.server_port}",
                            "username": "u",
                            "token": "t",
                            "expiresAt": "2999-01-01T00:00:00+00:00",
                        }
                    }
                }
            )
        )
        failed = pas("clock", "show", "--tenant", "any")
    finally:
        server.shutdown()
    assert failed.returncode == 5
    assert failed.stderr.strip() == "error: 503 service.unavailable: down for a moment [request 01TEST]"
