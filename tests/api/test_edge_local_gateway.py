"""The local server of `make run` (local/gateway.py) over real HTTP, as a client meets it: unknown paths
answer 404 in our error body without echoing the token, the HTTP layer's refusals are our JSON rather than
HTML pages, and files download with urllib, which sends no Accept header."""

from __future__ import annotations

import gzip
import http.client
import io
import json
import socket
import threading
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator

import pytest

from local.gateway import MAX_ECHOED_PATH, create_server
from tests.support.configs import configured_tenant


@pytest.fixture
def base_url(app) -> Iterator[str]:
    from chalice.config import Config

    original_class = app.__class__
    server = create_server(app, Config.create(chalice_stage="test", chalice_app=app), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server.server_address[1]}"
    finally:
        server.shutdown()
        server.server.server_close()
        thread.join(10)
        app.__class__ = original_class


def _open(request: urllib.request.Request) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def _assert_our_error(status: int, headers: dict[str, str], body: bytes, expected: int, code: str) -> dict:
    assert status == expected, body
    assert headers["Content-Type"] == "application/json"
    parsed = json.loads(body)
    assert (parsed["httpStatus"], parsed["code"]) == (expected, code), parsed
    assert parsed["requestId"] == headers["X-Request-Id"]
    return parsed


def _raw(base_url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Sends bytes as they are (http.client refuses to send malformed requests) and reads the answer."""
    port = int(base_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(request)
        response = http.client.HTTPResponse(connection)
        response.begin()
        return response.status, dict(response.getheaders()), response.read()


def test_an_unknown_path_is_404_in_our_error_body_without_the_token(base_url, admin_token):
    request = urllib.request.Request(f"{base_url}/no/such/route", headers={"Authorization": f"Bearer {admin_token}"})

    body = _assert_our_error(*_open(request), 404, "route.not_found")

    assert body["message"] == "No route for GET /no/such/route"
    assert admin_token not in json.dumps(body) and "Authorization" not in json.dumps(body)


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/policy/{tenant}/transactions/segments/;x", "segment.not_found"),
        ("/billing/{tenant}/delinquencies/events/a;b", "delinquencyEvent.not_found"),
        ("/policy/{tenant}/transactions/;", "transaction.not_found"),
    ],
)
def test_a_semicolon_in_a_path_parameter_is_part_of_it_as_at_the_gateway(base_url, api, admin_token, path, code):
    """Chalice's matcher split `;params` off the last segment (`urlparse`) and answered another route's 404."""
    tenant = configured_tenant(api, admin_token)
    request = urllib.request.Request(
        base_url + path.format(tenant=tenant), headers={"Authorization": f"Bearer {admin_token}"}
    )
    _assert_our_error(*_open(request), 404, code)


def test_a_404_repeats_at_most_the_first_part_of_a_long_path(base_url):
    path = "/" + "x" * 5000
    body = _assert_our_error(*_open(urllib.request.Request(f"{base_url}{path}?secret=1")), 404, "route.not_found")

    assert body["message"] == f"No route for GET {path[:MAX_ECHOED_PATH]}..."
    assert "secret" not in body["message"]


def test_a_configuration_downloads_with_urllib(base_url, api, admin_token):
    tenant = configured_tenant(api, admin_token)
    request = urllib.request.Request(
        f"{base_url}/config/{tenant}/deployments/download", headers={"Authorization": f"Bearer {admin_token}"}
    )

    status, headers, body = _open(request)

    assert (status, headers["Content-Type"]) == (200, "application/zip")
    assert "config.json" in zipfile.ZipFile(io.BytesIO(body)).namelist()


def test_the_description_comes_gzip_compressed_over_http_and_a_revalidation_is_304(base_url):
    request = urllib.request.Request(f"{base_url}/openapi.json", headers={"Accept-Encoding": "gzip"})

    status, headers, body = _open(request)

    assert (status, headers["Content-Encoding"], headers["Content-Type"]) == (200, "gzip", "application/json")
    assert int(headers["Content-Length"]) == len(body) < 300_000
    assert json.loads(gzip.decompress(body))["openapi"] == "3.1.0"
    revalidated = urllib.request.Request(f"{base_url}/openapi.json", headers={"If-None-Match": headers["ETag"]})
    assert _open(revalidated)[0] == 304


def test_a_method_the_path_lacks_is_405_in_our_error_body(base_url, admin_token):
    request = urllib.request.Request(
        f"{base_url}/auth/token", method="DELETE", headers={"Authorization": f"Bearer {admin_token}"}
    )

    status, headers, body = _open(request)

    _assert_our_error(status, headers, body, 405, "request.method_not_allowed")
    assert admin_token.encode() not in body


@pytest.mark.parametrize("method", [b"TRACE", b"CONNECT"])
def test_trace_and_connect_are_405_in_our_error_body_as_any_method_a_path_lacks(base_url, method):
    answer = _raw(base_url, method + b" /auth/token HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")

    body = _assert_our_error(*answer, 405, "request.method_not_allowed")
    assert answer[1]["Allow"] == "POST"
    assert body["message"] == f"{method.decode()} is not a method of this path; it has POST"


def test_too_many_headers_is_431_as_json_not_an_html_page(base_url):
    headers = b"".join(b"X-Filler-%d: y\r\n" % number for number in range(120))
    answer = _raw(base_url, b"GET /auth/users/whoami HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")

    body = _assert_our_error(*answer, 431, "request.headers_too_large")
    assert body["message"] == "The request has too many headers, or one that is too long"


def test_an_unknown_method_is_501_as_json_without_repeating_it(base_url):
    answer = _raw(base_url, b"BREW<script> /auth/token HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")

    body = _assert_our_error(*answer, 501, "request.method_not_supported")
    assert "BREW" not in body["message"]


def test_a_malformed_request_line_or_length_is_400_as_json(base_url):
    bad_version = _raw(base_url, b"GET /auth/token HTTP/9<x>\r\nHost: x\r\n\r\n")
    bad_length = _raw(base_url, b"POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n")

    for answer in (bad_version, bad_length):
        body = _assert_our_error(*answer, 400, "request.malformed_http")
        assert "<x>" not in body["message"] and "ten" not in body["message"]
